package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// attack is one request of the attack corpus (testdata/corpus.yaml).
type attack struct {
	// Name says what the request tries.
	Name string `json:"name"`
	// User is the caller (testUsers; default acme); Token the kind of ID token it sends (issuer.token; default valid).
	User  string `json:"user,omitempty"`
	Token string `json:"token,omitempty"`
	// Method is GET (default) or POST; Path the proxy path.
	Method string `json:"method,omitempty"`
	Path   string `json:"path"`
	// Params go into the URL (GET) or the form body (POST), in order, repeated keys kept. URLParams go into the URL
	// of a POST. Raw is appended to the URL query verbatim (for encodings url.Values would normalise).
	Params    [][2]string `json:"params,omitempty"`
	URLParams [][2]string `json:"urlParams,omitempty"`
	Raw       string      `json:"raw,omitempty"`
	// Body replaces the form body of a POST; ContentType its type (default form).
	Body        string `json:"body,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	// Headers are extra request headers (name, value), in order.
	Headers [][2]string `json:"headers,omitempty"`
	// Want is "same" (200, equal to the caller's tenant's direct answer through vmauth), "tenants" (200, exactly
	// the Tenants in the answer), "rules" or "alerts" (the direct document filtered to the caller's tenants), or an
	// HTTP status with an error and no data.
	Want    string   `json:"want"`
	Tenants []string `json:"tenants,omitempty"`
	// Empty says that the "same" answer holds no data; every other "same" answer must hold some, so that two
	// empty answers never pass for a proof.
	Empty bool `json:"empty,omitempty"`
}

// loadCorpus reads testdata/corpus.yaml.
func loadCorpus(t *testing.T) []attack {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []attack
	if err := yaml.UnmarshalStrict(b, &out); err != nil {
		t.Fatalf("testdata/corpus.yaml: %v", err)
	}
	return out
}

// TestAttackCorpus sends every request of testdata/corpus.yaml through the proxy in front of the real storage of
// three tenants and checks that each answer holds only the caller's tenants' data or is an error: an answer that
// must be "same" equals what the caller's tenant gets directly from the storage through vmauth with its child's
// VMUser routes (the write path's own tenant filter), and no 2xx answer names another tenant.
func TestAttackCorpus(t *testing.T) {
	s := theStack(t)
	corpus := loadCorpus(t)
	if len(corpus) < 60 {
		t.Fatalf("the corpus has %d requests; want at least 60", len(corpus))
	}
	names := map[string]bool{}
	for _, a := range corpus {
		if names[a.Name] {
			t.Fatalf("corpus: name %q twice", a.Name)
		}
		names[a.Name] = true
		t.Run(a.Name, func(t *testing.T) { s.runAttack(t, a) })
	}
}

// allowedTenants are the tenants a corpus user may see.
func allowedTenants(user string) []string {
	var out []string
	for _, g := range testUsers[user] {
		switch g {
		case adminGroup:
			return slices.Clone(testTenants)
		case "team-acme":
			out = append(out, "acme")
		case "team-acme-prod":
			out = append(out, "acme-prod")
		case "team-globex":
			out = append(out, "globex")
		}
	}
	sort.Strings(out)
	return out
}

// withDefaults adds the time parameters a request of path lacks, so that answers are about the written data.
func (s *stack) withDefaults(path string, params [][2]string) [][2]string {
	has := func(k string) bool {
		for _, p := range params {
			if p[0] == k {
				return true
			}
		}
		return false
	}
	add := func(k, v string) {
		if !has(k) {
			params = append(params, [2]string{k, v})
		}
	}
	unix := func(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
	switch {
	case strings.HasSuffix(path, "/api/v1/query"):
		add("time", unix(s.t0))
	case strings.HasSuffix(path, "/api/v1/query_range"):
		add("start", unix(s.t0.Add(-5*time.Minute)))
		add("end", unix(s.t0))
		add("step", "60")
	case strings.Contains(path, "/api/v1/series"), strings.Contains(path, "/api/v1/label"), strings.HasSuffix(path, "/export"),
		strings.HasSuffix(path, "/query_exemplars"):
		add("start", unix(s.t0.Add(-time.Hour)))
		add("end", unix(s.t0.Add(time.Minute)))
	case strings.HasSuffix(path, "/stats_query"):
		add("time", s.t0.Add(time.Minute).Format(time.RFC3339))
	case strings.HasSuffix(path, "/hits"), strings.HasSuffix(path, "/stats_query_range"):
		add("start", s.t0.Add(-time.Hour).Format(time.RFC3339))
		add("end", s.t0.Add(time.Minute).Format(time.RFC3339))
		add("step", "1h")
	}
	return params
}

// encode encodes pairs in order, keys and values escaped.
func encode(pairs [][2]string) string {
	var parts []string
	for _, p := range pairs {
		parts = append(parts, url.QueryEscape(p[0])+"="+url.QueryEscape(expand(p[1])))
	}
	return strings.Join(parts, "&")
}

// expand replaces $LONG with a query longer than the default query limit.
func expand(v string) string {
	if v == "$LONG" {
		return "up" + strings.Repeat(" + up", DefaultMaxQueryBytes/5+10)
	}
	return v
}

// request builds the request of a (to base, with path under base) with the caller's token.
func (s *stack) request(t *testing.T, a attack, base, path string, token bool) *http.Request {
	t.Helper()
	method := a.Method
	if method == "" {
		method = http.MethodGet
	}
	params := s.withDefaults(a.Path, a.Params)
	query, body := encode(params), ""
	if method == http.MethodPost {
		query, body = encode(a.URLParams), encode(params)
		if a.Body != "" {
			body = a.Body
		}
		if a.Body == "$HUGE" {
			body = "query=up&pad=" + strings.Repeat("x", DefaultMaxRequestBytes+10)
		}
	}
	if a.Raw != "" {
		query = strings.TrimPrefix(query+"&"+a.Raw, "&")
	}
	target := base + path
	if query != "" {
		target += "?" + query
	}
	var rd io.Reader
	if method == http.MethodPost {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		ct := a.ContentType
		if ct == "" {
			ct = "application/x-www-form-urlencoded"
		}
		req.Header.Set("Content-Type", ct)
	}
	tok := ""
	if token && a.Token != "none" {
		user := a.User
		if user == "" {
			user = "acme"
		}
		tok = s.issuer.token(t, a.Token, "user-"+user, testUsers[user])
	}
	for _, h := range a.Headers {
		v := h[1]
		if v == "$TOKEN" {
			if !token {
				continue
			}
			v = tok
		}
		req.Header.Add(h[0], v)
	}
	if tok != "" && !hasHeader(a.Headers, "Authorization") {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return req
}

func hasHeader(h [][2]string, name string) bool {
	for _, p := range h {
		if strings.EqualFold(p[0], name) {
			return true
		}
	}
	return false
}

// directPath maps a proxy path to vmauth's route for a tenant's child (operator/outputs routes).
func directPath(path string) string {
	switch {
	case strings.HasPrefix(path, MetricsPrefix+"/"):
		return "/vm/select/0/prometheus" + strings.TrimPrefix(path, MetricsPrefix)
	case strings.HasPrefix(path, AuditLogsPrefix+"/"):
		return "/vlas" + strings.TrimPrefix(path, AuditLogsPrefix)
	case strings.HasPrefix(path, LogsPrefix+"/"):
		return "/vls" + strings.TrimPrefix(path, LogsPrefix)
	}
	return path
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout: 60 * time.Second}

func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// runAttack sends a through the proxy and checks the answer against a.Want.
func (s *stack) runAttack(t *testing.T, a attack) {
	user := a.User
	if user == "" {
		user = "acme"
	}
	allowed := allowedTenants(user)
	code, body := do(t, s.request(t, a, s.proxy.URL, a.Path, true))
	if code/100 == 2 {
		for _, o := range testTenants {
			if !slices.Contains(allowed, o) && bytes.Contains(body, []byte(`"`+o+`"`)) {
				t.Errorf("the answer to %s names tenant %s:\n%.600s", user, o, body)
			}
		}
	}
	switch a.Want {
	case "same":
		if code != http.StatusOK {
			t.Fatalf("status %d, want 200: %.400s", code, body)
		}
		if len(allowed) != 1 {
			t.Fatalf("corpus: want same needs a single-tenant user, not %s", user)
		}
		dreq := s.request(t, a, s.vmauth.URL, directPath(a.Path), false)
		dreq.Header.Del("Authorization")
		dreq.Header.Del(IDTokenHeader)
		dreq.SetBasicAuth("child-"+allowed[0], s.passwords[allowed[0]])
		dcode, dbody := do(t, dreq)
		if dcode != http.StatusOK {
			t.Fatalf("the direct answer is %d, not 200 (fix the corpus entry): %.400s", dcode, dbody)
		}
		if got, want := canon(body), canon(dbody); got != want {
			t.Errorf("the proxy's answer differs from %s's direct answer:\nproxy:  %.800s\ndirect: %.800s", allowed[0], got, want)
		}
		if held := holdsData(body); held == a.Empty {
			t.Errorf("the answer holds data: %v, want %v (corpus empty: %v):\n%.600s", held, !a.Empty, a.Empty, body)
		}
	case "tenants":
		if code != http.StatusOK {
			t.Fatalf("status %d, want 200: %.400s", code, body)
		}
		if got := tenantsIn(a.Path, body); !slices.Equal(got, a.Tenants) {
			t.Errorf("tenants in the answer %v, want %v:\n%.600s", got, a.Tenants, body)
		}
	case "rules", "alerts":
		if code != http.StatusOK {
			t.Fatalf("status %d, want 200: %.400s", code, body)
		}
		resp, err := http.Get(s.vm.URL + strings.TrimPrefix(a.Path, MetricsPrefix)) //nolint:noctx // loopback
		if err != nil {
			t.Fatal(err)
		}
		direct, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got, want := ruleView(t, body, allowed, false), ruleView(t, direct, allowed, true)
		if !slices.Equal(got, want) {
			t.Errorf("%s for %v:\ngot  %v\nwant %v", a.Want, allowed, got, want)
		}
		if len(want) == 0 {
			t.Errorf("corpus: the direct %s hold nothing for %v; the check proves nothing", a.Want, allowed)
		}
	default:
		want, err := strconv.Atoi(a.Want)
		if err != nil {
			t.Fatalf("corpus: want %q is not same, tenants, rules, alerts or a status", a.Want)
		}
		if code != want {
			t.Fatalf("status %d, want %d: %.400s", code, want, body)
		}
		var e map[string]any
		if err := json.Unmarshal(body, &e); err != nil || e["status"] != "error" || e["data"] != nil {
			t.Errorf("the %d answer is not an error without data: %.400s", code, body)
		}
	}
}

// tenantPattern finds tenant values in JSON (`"tenant":"x"`) and text exposition (`tenant="x"`) answers.
var tenantPattern = regexp.MustCompile(`"?tenant"?[:=]"([^"]+)"`)

// tenantsIn returns the sorted tenants an answer holds: tenant labels and fields, and the values of a
// `label/tenant/values` or `field_values?field=tenant` answer.
func tenantsIn(path string, body []byte) []string {
	set := map[string]bool{}
	for _, m := range tenantPattern.FindAllSubmatch(body, -1) {
		set[string(m[1])] = true
	}
	if strings.HasSuffix(path, "/field_values") || strings.HasSuffix(path, "/stream_field_values") {
		var r struct{ Values []struct{ Value string } }
		_ = json.Unmarshal(body, &r)
		for _, v := range r.Values {
			set[v.Value] = true
		}
	}
	if strings.Contains(path, "/label/tenant/values") {
		var r struct{ Data []string }
		_ = json.Unmarshal(body, &r)
		for _, v := range r.Data {
			set[v] = true
		}
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ruleView returns what a rules or alerts document shows, as sorted lines: each rule by group and name, each alert
// by rule and labels. With filter, the direct document is reduced to the tenants first: rules labelled for another
// tenant and alerts of other tenants are left out.
func ruleView(t *testing.T, body []byte, tenants []string, filter bool) []string {
	t.Helper()
	var doc struct {
		Data struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name   string            `json:"name"`
					Labels map[string]string `json:"labels"`
					Alerts []struct {
						Labels map[string]string `json:"labels"`
					} `json:"alerts"`
				} `json:"rules"`
			} `json:"groups"`
			Alerts []struct {
				Labels map[string]string `json:"labels"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("rules/alerts answer: %v: %.300s", err, body)
	}
	keep := func(labels map[string]string) bool {
		v, ok := labels["tenant"]
		return !filter || (ok && slices.Contains(tenants, v))
	}
	var out []string
	for _, g := range doc.Data.Groups {
		for _, r := range g.Rules {
			if v, ok := r.Labels["tenant"]; filter && ok && !slices.Contains(tenants, v) {
				continue
			}
			out = append(out, "rule "+g.Name+"/"+r.Name)
			for _, a := range r.Alerts {
				if keep(a.Labels) {
					out = append(out, fmt.Sprintf("alert %s %v", r.Name, a.Labels))
				}
			}
		}
	}
	for _, a := range doc.Data.Alerts {
		if keep(a.Labels) {
			out = append(out, fmt.Sprintf("alert %v", a.Labels))
		}
	}
	sort.Strings(out)
	return out
}

// canon returns an answer in a form two equal answers share: JSON with the query statistics removed and every list
// sorted, JSON lines or text lines sorted.
func canon(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		return canonJSON(v)
	}
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	for i, l := range lines {
		var lv any
		if err := json.Unmarshal([]byte(l), &lv); err == nil {
			lines[i] = canonJSON(lv)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func canonJSON(v any) string {
	b, _ := json.Marshal(normalize(v))
	return string(b)
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "stats")
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case []any:
		keys := make([]string, len(x))
		for i, e := range x {
			x[i] = normalize(e)
			b, _ := json.Marshal(x[i])
			keys[i] = string(b)
		}
		sort.Sort(byKey{x, keys})
		return x
	}
	return v
}

type byKey struct {
	v    []any
	keys []string
}

func (b byKey) Len() int           { return len(b.v) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.v[i], b.v[j] = b.v[j], b.v[i]
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
}

// metaKeys are the keys of an answer that say nothing about the data.
var metaKeys = map[string]bool{"status": true, "resultType": true, "isPartial": true, "stats": true}

// holdsData reports whether an answer holds a value that is data: a string or number outside metaKeys in JSON, or
// any line of JSON lines or text.
func holdsData(body []byte) bool {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return strings.TrimSpace(string(body)) != ""
	}
	var walk func(any) bool
	walk = func(x any) bool {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				if !metaKeys[k] && walk(e) {
					return true
				}
			}
			return false
		case []any:
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
			return false
		case nil:
			return false
		}
		return true
	}
	return walk(v)
}
