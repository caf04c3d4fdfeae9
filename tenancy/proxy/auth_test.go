package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// get sends a GET of path with the bearer token to base and returns the status and body.
func get(t *testing.T, base, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var upQuery = "/prometheus/api/v1/query?" + url.Values{"query": {"up"}}.Encode()

// A rotated key is picked up from the JWKS on the first token that names it, and the retired key is refused after.
func TestKeyRotation(t *testing.T) {
	s := theStack(t)
	is := newIssuer(t)
	p := httptest.NewServer(New(s.proxyConfig(is.srv.URL), Options{}).Handler())
	defer p.Close()
	old := is.token(t, "valid", "u", testUsers["acme"])
	if code, body := get(t, p.URL, upQuery, old); code != http.StatusOK {
		t.Fatalf("token of the first key: %d %s", code, body)
	}
	is.rotate(t)
	fetches := is.jwksFetches
	if code, body := get(t, p.URL, upQuery, is.token(t, "valid", "u", testUsers["acme"])); code != http.StatusOK {
		t.Fatalf("token of the rotated key: %d %s", code, body)
	}
	if is.jwksFetches <= fetches {
		t.Errorf("the JWKS was not fetched again for the new key (%d fetches)", is.jwksFetches)
	}
	if code, body := get(t, p.URL, upQuery, old); code != http.StatusUnauthorized || !strings.Contains(body, ReasonInvalidToken) {
		t.Errorf("token of the retired key: %d %s, want 401 %s", code, body, ReasonInvalidToken)
	}
}

// An issuer that cannot be reached is a 503 with no data, and a later request tries it again.
func TestIssuerDown(t *testing.T) {
	s := theStack(t)
	is := newIssuer(t)
	tok := is.token(t, "valid", "u", testUsers["acme"])
	is.srv.Close()
	p := httptest.NewServer(New(s.proxyConfig(is.srv.URL), Options{}).Handler())
	defer p.Close()
	code, body := get(t, p.URL, upQuery, tok)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, ReasonIssuerDown) || strings.Contains(body, "result") {
		t.Errorf("issuer down: %d %s, want 503 %s without data", code, body, ReasonIssuerDown)
	}
}

// The proxy's log lines are JSON, one per request, with outcome and reason, and never hold a token; its metrics
// count requests by outcome and denials by reason.
func TestLogsAndMetrics(t *testing.T) {
	s := theStack(t)
	good := s.issuer.token(t, "valid", "user-acme", testUsers["acme"])
	bad := s.issuer.token(t, "tampered", "user-acme", testUsers["acme"])
	if code, _ := get(t, s.proxy.URL, upQuery, good); code != http.StatusOK {
		t.Fatalf("good token: %d", code)
	}
	if code, _ := get(t, s.proxy.URL, upQuery, bad); code != http.StatusUnauthorized {
		t.Fatalf("tampered token: %d", code)
	}
	logs := s.logText()
	for _, tok := range []string{good, bad, strings.Split(good, ".")[2]} {
		if strings.Contains(logs, tok) {
			t.Fatal("the proxy logged a token")
		}
	}
	var allowed, denied bool
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		allowed = allowed || (line["outcome"] == OutcomeAllowed && line["subject"] == "user-acme")
		denied = denied || (line["outcome"] == OutcomeDenied && line["reason"] == ReasonInvalidToken)
	}
	if !allowed || !denied {
		t.Errorf("log lines of an allowed and a denied request missing (allowed %v, denied %v):\n%s", allowed, denied, logs)
	}
	code, metrics := get(t, s.proxy.URL, MetricsPath, "")
	for _, want := range []string{`kof_tenant_proxy_requests_total{api="query",outcome="allowed"}`,
		`kof_tenant_proxy_requests_total{api="query",outcome="denied"}`,
		`kof_tenant_proxy_denied_requests_total{reason="invalid_token"}`, `kof_tenant_proxy_request_duration_seconds_bucket`} {
		if code != http.StatusOK || !strings.Contains(metrics, want) {
			t.Errorf("metrics (%d) lack %s", code, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	c := &Config{Issuer: "ftp://x", AdminGroups: []string{"boss@example.com"}, Groups: map[string][]string{"g": {"bad tenant"}, "h": nil},
		Upstreams: Upstreams{Metrics: "not a url"}}
	err := c.Validate()
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"issuer", "audience", "adminGroups[0]", "e-mail", "groups.g[0]", "groups.h", "upstreams.metrics"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	ok := &Config{Issuer: "https://dex.example.com", Audience: "grafana", Upstreams: Upstreams{Logs: "http://vl:9428"}}
	if err := ok.Validate(); err != nil || ok.TenantClaim != DefaultTenantClaim || ok.Limits.QueryTimeout.Duration != DefaultQueryTimeout {
		t.Errorf("valid config: %v, defaults %+v", err, ok)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("issuer: https://i.example\naudience: a\nupstreams: {metrics: 'http://p:8082'}\nunknownKey: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "unknownKey") {
		t.Errorf("unknown key: %v", err)
	}
}

// logText returns what the shared proxy logged so far.
func (s *stack) logText() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.logs.String()
}
