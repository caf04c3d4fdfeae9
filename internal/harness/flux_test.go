package harness

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWithEnvironmentLetsExtraWin(t *testing.T) {
	env := map[string]any{"flux": map[string]any{"wait": false}, "global": map[string]any{"helmRepo": map[string]any{
		"kofManaged": map[string]any{"url": "http://127.0.0.1:1"}}}}
	extra := map[string]any{"flux": map[string]any{"wait": true, "interval": "1m"}}
	got := withEnvironment(env, extra)
	want := map[string]any{"flux": map[string]any{"wait": true, "interval": "1m"}, "global": map[string]any{
		"helmRepo": map[string]any{"kofManaged": map[string]any{"url": "http://127.0.0.1:1"}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("withEnvironment (-want +got):\n%s", d)
	}
	if env["flux"].(map[string]any)["wait"] != false || extra["flux"].(map[string]any)["wait"] != true {
		t.Errorf("withEnvironment changed its inputs: env %v, extra %v", env, extra)
	}
}

func TestReadyOfNeedsTheCurrentGeneration(t *testing.T) {
	hr := func(generation, observed int64, status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"generation": generation},
			"status": map[string]any{"observedGeneration": observed, "conditions": []any{map[string]any{
				"type": "Ready", "status": status, "reason": "InstallSucceeded", "message": "done"}}}}}
		return u
	}
	for _, tc := range []struct {
		gen, observed int64
		status        string
		ready         bool
		reason        string
	}{
		{2, 2, "True", true, "InstallSucceeded"},
		{2, 1, "True", false, "Progressing"},
		{2, 2, "False", false, "InstallSucceeded"},
	} {
		ready, reason, _ := readyOf(hr(tc.gen, tc.observed, tc.status))
		if ready != tc.ready || reason != tc.reason {
			t.Errorf("generation %d observed %d Ready=%s: got %v %q, want %v %q", tc.gen, tc.observed, tc.status, ready,
				reason, tc.ready, tc.reason)
		}
	}
	if ready, _, msg := readyOf(&unstructured.Unstructured{Object: map[string]any{}}); ready || msg != notReconciled {
		t.Errorf("no status: got ready %v message %q, want not ready, %q", ready, msg, notReconciled)
	}
}

// The proxy answers every outside address itself, with the no-network message.
func TestProxyRefusesOutsideAddresses(t *testing.T) {
	p, err := StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	}()
	proxyURL, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	resp, err := c.Get("http://charts.example.invalid/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "no network") ||
		!strings.Contains(string(body), "charts.example.invalid") {
		t.Errorf("proxy answered %d %q, want 502 with the no-network message naming the host", resp.StatusCode, body)
	}
	if env := strings.Join(p.Env(), " "); !strings.Contains(env, "HTTPS_PROXY="+p.URL) ||
		!strings.Contains(env, "NO_PROXY=127.0.0.1") {
		t.Errorf("proxy environment %q, want HTTPS_PROXY at the proxy and loopback direct", env)
	}
}

// The chart repository serves an index whose every chart is downloadable from the repository itself.
func TestServeChartsIndexesEveryChart(t *testing.T) {
	r, err := ServeCharts("../../charts", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if len(r.Charts) < 8 || !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
		t.Fatalf("repository %s serves %v, want every chart of charts/ on loopback", r.URL, r.Charts)
	}
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, index := get(r.URL + "/index.yaml")
	if code != http.StatusOK {
		t.Fatalf("index.yaml: status %d", code)
	}
	for _, name := range r.Charts {
		if !strings.Contains(index, "\n  "+name+":\n") {
			t.Errorf("index.yaml has no entry %s", name)
		}
	}
	i := strings.Index(index, r.URL+"/kof-operators-")
	if i < 0 {
		t.Fatalf("index.yaml names no kof-operators archive under %s", r.URL)
	}
	archive := index[i : i+strings.Index(index[i:], ".tgz")+len(".tgz")]
	if code, _ := get(archive); code != http.StatusOK {
		t.Errorf("%s: status %d, want 200", archive, code)
	}
}
