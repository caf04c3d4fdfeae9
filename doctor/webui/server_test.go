package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/doctor/diagnose"
)

// allowAll admits every request (the gates under test are the others).
type allowAll struct{}

func (allowAll) Allow(http.ResponseWriter, *http.Request) bool { return true }

// sample is a small diagnosis with one broken child.
func sample() *diagnose.Diagnosis {
	return &diagnose.Diagnosis{
		Clusters: []*diagnose.Cluster{
			{Name: "mgmt", Namespace: "mgmt", Dir: "mgmt", Role: "management"},
			{Name: "child-3", Namespace: "kcm-system", Dir: "child-3", Role: "child",
				Services: []diagnose.Service{{Name: "kof-collectors", Namespace: "kof", MCS: "kof-child-cluster",
					Via: "MultiClusterService kof-child-cluster", State: diagnose.StateNotReported}},
				Selections: []diagnose.Selection{{MCS: "kof-regional-cluster", Terms: []diagnose.Term{{
					Requirement: "k0rdent.mirantis.com/kof-cluster-role=regional", Why: `label is "child"`}}}},
				Findings: []diagnose.Finding{{Code: diagnose.CodeNoRegional, Severity: diagnose.SeverityError,
					Cluster: "child-3", Object: "ClusterDeployment kcm-system/child-3", Field: "metadata.labels",
					Message: "no regional: <none> in the same aws region ap-south-1", Fix: "set the label"}}},
		},
		Rules: []diagnose.RuleSet{{Cluster: "regional-1", Source: "ConfigMap kcm-system/kof-record-vmrules-regional-1",
			Groups: []diagnose.RuleGroup{{Name: "node", Kind: "record", Rules: []diagnose.Rule{{Name: "r:1", Expr: "up"}}}}}},
		Storage: diagnose.Storage{PromxyServerGroups: []diagnose.PromxyServerGroup{{Namespace: "kcm-system",
			Name: "promxy-server-group-1", Cluster: "regional-1", Conditions: []diagnose.Condition{{Type: "Ready",
				Status: "True"}}}}},
	}
}

func handler(t *testing.T, s *Server) http.Handler {
	t.Helper()
	if s.Diagnose == nil {
		s.Diagnose = func(context.Context) (*diagnose.Diagnosis, error) { return sample(), nil }
	}
	if s.Guard == nil {
		s.Guard = allowAll{}
	}
	h, err := s.Handler()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(h http.Handler, target string, header map[string]string) *httptest.ResponseRecorder {
	return do(h, http.MethodGet, target, header)
}

func do(h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestPages(t *testing.T) {
	h := handler(t, &Server{Source: "https://mgmt.example:6443"})
	cases := []struct{ path, want string }{
		{"/", `data-cluster="child-3"`},
		{"/", `data-code="NoRegional"`},
		{"/", "no regional: &lt;none&gt; in the same aws region"}, // escaped, never raw HTML
		{"/clusters/kcm-system/child-3", `data-service="kof-collectors"`},
		{"/clusters/kcm-system/child-3", "label is &#34;child&#34;"},
		{"/storage", `data-name="promxy-server-group-1"`},
		{"/rules", "kof-record-vmrules-regional-1"},
		{"/static/style.css", "--accent"},
		{"/api/diagnosis", `"code": "NoRegional"`},
		{"/healthz", "ok"},
	}
	for _, c := range cases {
		w := get(h, c.path, nil)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("GET %s: %d, body without %q:\n%.400s", c.path, w.Code, c.want, w.Body.String())
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", c.path, csp)
		}
	}
	if w := get(h, "/clusters/kcm-system/nope", nil); w.Code != http.StatusNotFound {
		t.Errorf("unknown cluster: %d, want 404", w.Code)
	}
	if w := get(h, "/nope", nil); w.Code != http.StatusNotFound {
		t.Errorf("unknown page: %d, want 404", w.Code)
	}
}

func TestSameOriginOnly(t *testing.T) {
	h := handler(t, &Server{})
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		w := do(h, m, "/", map[string]string{"Origin": "http://example.com",
			"Access-Control-Request-Method": "GET"})
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /: %d, want 405", m, w.Code)
		}
	}
	refused := []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
	}
	for _, hdr := range refused {
		if w := get(h, "/api/diagnosis", hdr); w.Code != http.StatusForbidden {
			t.Errorf("GET with %v: %d, want 403", hdr, w.Code)
		}
	}
	allowed := []map[string]string{nil, {"Origin": "http://example.com"}, {"Sec-Fetch-Site": "same-origin"},
		{"Sec-Fetch-Site": "none"}}
	for _, hdr := range allowed {
		w := get(h, "/api/diagnosis", hdr) // httptest's Host is example.com
		if w.Code != http.StatusOK {
			t.Errorf("GET with %v: %d, want 200", hdr, w.Code)
		}
		for k := range w.Header() {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("GET with %v: CORS header %s sent", hdr, k)
			}
		}
	}
}

func TestDiagnosisCache(t *testing.T) {
	now := time.Unix(1000, 0)
	calls := 0
	h := handler(t, &Server{MaxAge: time.Minute, Now: func() time.Time { return now },
		Diagnose: func(context.Context) (*diagnose.Diagnosis, error) { calls++; return sample(), nil }})
	get(h, "/", nil)
	get(h, "/storage", nil)
	if calls != 1 {
		t.Errorf("%d diagnoses for two pages within MaxAge, want 1", calls)
	}
	get(h, "/?refresh=1", nil)
	if calls != 2 {
		t.Errorf("%d diagnoses after refresh, want 2", calls)
	}
	now = now.Add(2 * time.Minute)
	get(h, "/rules", nil)
	if calls != 3 {
		t.Errorf("%d diagnoses after MaxAge, want 3", calls)
	}
}

func TestLocalGuard(t *testing.T) {
	g := &LocalGuard{Token: "s3cret", Hosts: []string{"example.com"}}
	h := handler(t, &Server{Guard: g})
	if w := get(h, "/", nil); w.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", w.Code)
	}
	if w := get(h, "/?token=wrong", nil); w.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", w.Code)
	}
	w := get(h, "/storage?token=s3cret", nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/storage" {
		t.Fatalf("token in URL: %d to %q, want 303 to /storage", w.Code, w.Header().Get("Location"))
	}
	cookie := w.Result().Cookies()
	if len(cookie) != 1 || cookie[0].Name != TokenCookie || !cookie[0].HttpOnly ||
		cookie[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie %+v, want one HttpOnly SameSite=Strict %s", cookie, TokenCookie)
	}
	if w := get(h, "/storage", map[string]string{"Cookie": TokenCookie + "=s3cret"}); w.Code != http.StatusOK {
		t.Errorf("with the cookie: %d, want 200", w.Code)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Host = "rebound.example"
	r.Header.Set("Cookie", TokenCookie+"=s3cret")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusForbidden {
		t.Errorf("another Host with the cookie: %d, want 403", rec.Code)
	}
	if w := get(h, "/healthz", nil); w.Code != http.StatusOK {
		t.Errorf("health without token: %d, want 200", w.Code)
	}
}

func TestNewToken(t *testing.T) {
	a, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewToken()
	if len(a) != 64 || a == b {
		t.Errorf("tokens %q and %q: want two distinct 64-hex-digit secrets", a, b)
	}
}

func TestBearer(t *testing.T) {
	cases := map[string]struct {
		token string
		ok    bool
	}{
		"Bearer abc":  {"abc", true},
		"bearer  abc": {"abc", true},
		"Basic abc":   {"", false},
		"Bearer":      {"", false},
		"Bearer  ":    {"", false},
		"":            {"", false},
	}
	for header, want := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", header)
		if tok, ok := bearer(r); ok != want.ok || (ok && tok != want.token) {
			t.Errorf("bearer(%q) = %q, %v; want %q, %v", header, tok, ok, want.token, want.ok)
		}
	}
}

// KubeGuard answers 401 with a Bearer challenge before asking the API server when no token is sent.
func TestKubeGuardNoToken(t *testing.T) {
	h := handler(t, &Server{Guard: &KubeGuard{}})
	w := get(h, "/", nil)
	if w.Code != http.StatusUnauthorized || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %q, want 401 with a Bearer challenge", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}
