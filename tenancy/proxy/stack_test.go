package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"kof.dev/kof/internal/testproc"
	"kof.dev/kof/internal/vmauth"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/outputs"
)

// The three tenants of the tests, as children label them (k0rdent.mirantis.com/kof-tenant-id). `acme` is a prefix
// of `acme-prod` on purpose.
var testTenants = []string{"acme", "acme-prod", "globex"}

// adminGroup is the test issuer's group of admins.
const adminGroup = "kof-admins"

// testUsers are the users of the corpus: their groups at the issuer.
var testUsers = map[string][]string{
	"acme":      {"team-acme"},
	"acme-prod": {"team-acme-prod"},
	"globex":    {"team-globex"},
	"two":       {"team-acme", "team-globex"},
	"admin":     {adminGroup},
	"nobody":    {"team-unknown"},
}

// stack is the real storage of three tenants behind vmauth (KOF's VMUser routes) and the proxy in front.
type stack struct {
	vm, vl, vmauth, vmalert *testproc.Server
	standIn                 *httptest.Server
	issuer                  *issuer
	proxy                   *httptest.Server
	srv                     *Server
	cfg                     *Config
	logs                    *bytes.Buffer
	logMu                   *sync.Mutex
	t0                      time.Time
	passwords               map[string]string
}

var (
	sharedOnce  sync.Once
	sharedStack *stack
	sharedErr   error
	sharedStop  []func()
)

// stopShared stops the servers of the shared stack (TestMain).
func stopShared() {
	for i := len(sharedStop) - 1; i >= 0; i-- {
		sharedStop[i]()
	}
}

// clusterPath matches the tenant part of VictoriaMetrics cluster paths (`/insert/0/`, `/select/0/`), which the
// single-node VictoriaMetrics behind the stand-in does not have.
var clusterPath = regexp.MustCompile(`^/(insert|select)/[0-9:]+/`)

// theStack starts the shared stack once for the package's tests and benchmarks: VictoriaMetrics (with vmalert for
// rules and alerts), VictoriaLogs, vmauth configured with the VMUsers the operator writes for one child of each
// tenant (operator/outputs, translated by internal/vmauth), the data of each tenant written through vmauth with its
// child's credentials, the test issuer and the proxy. Starting it takes about 10 s, shared by every test.
func theStack(t testing.TB) *stack {
	t.Helper()
	sharedOnce.Do(func() { sharedStack, sharedErr = startStack() })
	if sharedErr != nil {
		t.Fatalf("start the tenant stack: %v", sharedErr)
	}
	return sharedStack
}

func startStack() (*stack, error) {
	dir, err := os.MkdirTemp("", "tenant-stack-")
	if err != nil {
		return nil, err
	}
	s := &stack{t0: time.Now().Add(-time.Minute).Truncate(time.Minute), passwords: map[string]string{}}
	var vmURL atomic.Value
	vmURL.Store("")
	s.standIn = httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		u, _ := url.Parse(vmURL.Load().(string))
		pr.SetURL(u)
		pr.Out.URL.Path = clusterPath.ReplaceAllString(pr.In.URL.Path, "/")
		pr.Out.URL.RawPath = ""
	}})
	sharedStop = append(sharedStop, s.standIn.Close)

	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, []byte(testRules), 0o600); err != nil {
		return nil, err
	}
	if s.vmalert, err = testproc.StartServer(testproc.Spec{Tool: "vmalert", Health: "/health",
		Args: func(addr, _ string) []string {
			return []string{"-httpListenAddr=" + addr, "-datasource.url=" + s.standIn.URL, "-rule=" + rules,
				"-notifier.blackhole", "-evaluationInterval=2s", "-loggerLevel=ERROR"}
		}}, filepath.Join(dir, "vmalert")); err != nil {
		return nil, err
	}
	sharedStop = append(sharedStop, func() { _ = s.vmalert.Stop() })
	vmSpec := testproc.VictoriaMetricsSpec()
	base := vmSpec.Args
	vmSpec.Args = func(addr, d string) []string { return append(base(addr, d), "-vmalert.proxyURL="+s.vmalert.URL) }
	if s.vm, err = testproc.StartServer(vmSpec, filepath.Join(dir, "vm")); err != nil {
		return nil, err
	}
	sharedStop = append(sharedStop, func() { _ = s.vm.Stop() })
	vmURL.Store(s.vm.URL)
	if s.vl, err = testproc.StartServer(testproc.VictoriaLogsSpec(), filepath.Join(dir, "vl")); err != nil {
		return nil, err
	}
	sharedStop = append(sharedStop, func() { _ = s.vl.Stop() })

	authDir := filepath.Join(dir, "vmauth")
	if err := os.MkdirAll(authDir, 0o755); err != nil {
		return nil, err
	}
	cfgYAML, err := s.vmauthConfig()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(authDir, "auth.yaml"), cfgYAML, 0o600); err != nil {
		return nil, err
	}
	if s.vmauth, err = testproc.StartServer(testproc.Spec{Tool: "vmauth", Health: "/health",
		Args: func(addr, d string) []string {
			return []string{"-httpListenAddr=" + addr, "-auth.config=" + filepath.Join(d, "auth.yaml"), "-loggerLevel=ERROR"}
		}}, authDir); err != nil {
		return nil, err
	}
	sharedStop = append(sharedStop, func() { _ = s.vmauth.Stop() })
	if err := s.writeData(); err != nil {
		return nil, err
	}

	if s.issuer, err = startIssuer(); err != nil {
		return nil, err
	}
	sharedStop = append(sharedStop, s.issuer.srv.Close)
	s.cfg = s.proxyConfig(s.issuer.srv.URL)
	s.logs, s.logMu = &bytes.Buffer{}, &sync.Mutex{}
	s.srv = New(s.cfg, Options{Logger: newTestLogger(s.logs, s.logMu)})
	s.proxy = httptest.NewServer(s.srv.Handler())
	sharedStop = append(sharedStop, s.proxy.Close)
	if err := s.waitAlerts(); err != nil {
		return nil, err
	}
	return s, nil
}

// proxyConfig is the proxy's configuration in front of the stack, for an issuer URL.
func (s *stack) proxyConfig(issuerURL string) *Config {
	c := &Config{Issuer: issuerURL, Audience: testAudience, AdminGroups: []string{adminGroup},
		Groups:    map[string][]string{"team-acme": {"acme"}, "team-acme-prod": {"acme-prod"}, "team-globex": {"globex"}},
		Upstreams: Upstreams{Metrics: s.vm.URL, Logs: s.vl.URL, AuditLogs: s.vl.URL}}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return c
}

// testRules are vmalert's rules: one alert per series of every tenant, one alert rule labelled for globex only.
const testRules = `groups:
- name: kof-tenant-test
  interval: 2s
  rules:
  - alert: KofTestValueHigh
    expr: kof_test_value > 0
    labels: {severity: warning}
  - alert: KofGlobexOnly
    expr: vector(1)
    labels: {tenant: globex, severity: info}
`

// vmauthConfig returns vmauth's config serving one child VMUser per tenant, as the operator writes it.
func (s *stack) vmauthConfig() ([]byte, error) {
	urls := config.StorageURLs{VMInsert: s.standIn.URL + "/", VMSelect: s.standIn.URL + "/", VLInsert: s.vl.URL + "/",
		VLSelect: s.vl.URL + "/", VLAuditInsert: s.vl.URL + "/", VLAuditSelect: s.vl.URL + "/", VTInsert: s.vl.URL + "/",
		VTSelect: s.vl.URL + "/"}
	var users []vmauth.User
	for _, tenant := range testTenants {
		u := outputs.VMUser("kcm-system", "child-"+tenant, tenant, urls)
		u.Spec.Username = ptr.To("child-" + tenant)
		up, err := vmauth.Upstream(u)
		if err != nil {
			return nil, err
		}
		s.passwords[tenant] = "password-of-" + tenant
		users = append(users, vmauth.User{VMUser: up, Password: s.passwords[tenant]})
	}
	cfg, err := vmauth.Translate(users)
	if err != nil {
		return nil, err
	}
	return cfg.YAML()
}

// asTenant sends a request to vmauth with the credentials of tenant's child (path under vmauth, e.g.
// `/vm/select/0/prometheus/api/v1/query`) and returns the status and body.
func (s *stack) asTenant(ctx context.Context, tenant, method, path string, body io.Reader, contentType string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.vmauth.URL+path, body)
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.SetBasicAuth("child-"+tenant, s.passwords[tenant])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// tenantValue is the value base of each tenant's series, so that a leak shows in the numbers too.
var tenantValue = map[string]float64{"acme": 1, "acme-prod": 10, "globex": 100}

// writeData writes each tenant's metrics and logs through vmauth with its child's credentials, then flushes both
// stores. One series and one log line of acme claim tenant globex themselves; the route's tenant overrides it.
func (s *stack) writeData() error {
	ctx := context.Background()
	for _, tenant := range testTenants {
		v := tenantValue[tenant]
		cluster := "c-" + tenant
		var ts []int64
		for i := 20; i >= 0; i-- {
			ts = append(ts, s.t0.Add(-time.Duration(i)*30*time.Second).UnixMilli())
		}
		series := []struct {
			labels map[string]string
			value  func(i int) float64
		}{
			{map[string]string{"__name__": "kof_test_value", "job": "app", "instance": "i1"}, func(int) float64 { return v }},
			{map[string]string{"__name__": "kof_test_value", "job": "db", "instance": "i2"}, func(int) float64 { return 2 * v }},
			{map[string]string{"__name__": "kof_test_requests_total", "job": "app", "instance": "i1"}, func(i int) float64 { return float64(i) * v }},
			{map[string]string{"__name__": "up", "job": "app", "instance": "i1"}, func(int) float64 { return 1 }},
		}
		if tenant == "acme" {
			series = append(series, struct {
				labels map[string]string
				value  func(i int) float64
			}{map[string]string{"__name__": "kof_test_spoof", "tenant": "globex", "job": "app"}, func(int) float64 { return 7 }})
		}
		var buf bytes.Buffer
		for _, sr := range series {
			sr.labels["cluster"] = cluster
			vals := make([]float64, len(ts))
			for i := range ts {
				vals[i] = sr.value(i)
			}
			line, _ := json.Marshal(map[string]any{"metric": sr.labels, "values": vals, "timestamps": ts})
			buf.Write(line)
			buf.WriteByte('\n')
		}
		code, body, err := s.asTenant(ctx, tenant, http.MethodPost, "/vm/insert/0/prometheus/api/v1/import", &buf, "")
		if err != nil || code/100 != 2 {
			return fmt.Errorf("import metrics of %s: %d %v %s", tenant, code, err, body)
		}
		buf.Reset()
		for i := 0; i < 4; i++ {
			rec := map[string]any{"_msg": fmt.Sprintf("request served id=%d code=%d", i, 200+int(v)),
				"_time": s.t0.Add(-time.Duration(i) * time.Minute).Format(time.RFC3339Nano), "app": "web",
				"cluster": cluster, "level": []string{"info", "error"}[i%2]}
			if tenant == "acme" && i == 0 {
				rec["tenant"] = "globex"
			}
			line, _ := json.Marshal(rec)
			buf.Write(line)
			buf.WriteByte('\n')
		}
		code, body, err = s.asTenant(ctx, tenant, http.MethodPost, "/vli/insert/jsonline?_stream_fields=cluster,app", &buf, "")
		if err != nil || code/100 != 2 {
			return fmt.Errorf("import logs of %s: %d %v %s", tenant, code, err, body)
		}
	}
	for _, u := range []string{s.vm.URL, s.vl.URL} {
		resp, err := http.Get(u + "/internal/force_flush") //nolint:noctx // loopback
		if err != nil {
			return err
		}
		resp.Body.Close()
	}
	return nil
}

// waitAlerts waits until vmalert fires the test alert for every tenant.
func (s *stack) waitAlerts() error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.vm.URL + "/api/v1/alerts") //nolint:noctx // loopback
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			all := true
			for _, t := range testTenants {
				all = all && strings.Contains(string(b), `"tenant":"`+t+`"`)
			}
			if all {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("vmalert fired no alert for every tenant within 60 s")
}
