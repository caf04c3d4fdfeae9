package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// helmRelease returns a HelmRelease of an inline chart from the session's repository, Ready when ready is true.
func helmRelease(name string, ready bool, dependsOn ...string) *unstructured.Unstructured {
	var deps []any
	for _, d := range dependsOn {
		deps = append(deps, map[string]any{"name": d})
	}
	status := "False"
	if ready {
		status = "True"
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": helmReleaseAPIVersion, "kind": "HelmRelease",
		"metadata": map[string]any{"namespace": "kof", "name": name, "generation": int64(1)},
		"spec": map[string]any{"dependsOn": deps, "chart": map[string]any{"spec": map[string]any{"chart": name,
			"version": "1.0.0", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "kof"}}}},
		"status": map[string]any{"observedGeneration": int64(1), "conditions": []any{map[string]any{
			"type": "Ready", "status": status, "reason": "InstallSucceeded", "message": "done"}},
			"history": []any{map[string]any{"version": int64(1), "chartName": name, "chartVersion": "1.0.0"}}}}}
	if len(deps) == 0 {
		unstructured.RemoveNestedField(u.Object, "spec", "dependsOn")
	}
	return u
}

// A HelmRelease whose dependency helm-controller has not created yet is pending, not a failure (WaitFlux once
// failed at once with "dependsOn names no HelmRelease" while kof-operators' children were still being created).
func TestWaitFluxWaitsForADependencyNotCreatedYet(t *testing.T) {
	ctx := context.Background()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(helmRelease("grafana", true, "otel")).Build()
	running := func(name string) *Process { return &Process{Name: name, done: make(chan error, 1)} }
	session := &Session{ControlPlane: &ControlPlane{Client: c},
		Flux: &FluxControllers{Source: running(SourceController), Helm: running(HelmController)}}
	go func() {
		time.Sleep(500 * time.Millisecond)
		if err := c.Create(ctx, helmRelease("otel", true)); err != nil {
			t.Errorf("create the dependency: %v", err)
		}
	}()
	rels, err := session.WaitFlux(ctx, 20*time.Second, "")
	if err != nil {
		t.Fatalf("WaitFlux: %v", err)
	}
	var got []string
	for _, r := range rels {
		got = append(got, r.HelmRelease)
	}
	if d := cmp.Diff([]string{"kof/otel", "kof/grafana"}, got); d != "" {
		t.Errorf("releases in install order (-want +got):\n%s", d)
	}

	// A dependency that never appears fails at the deadline, naming it.
	c = fake.NewClientBuilder().WithScheme(s).WithObjects(helmRelease("grafana", true, "gone")).Build()
	session.ControlPlane.Client = c
	_, err = session.WaitFlux(ctx, time.Second, "")
	if err == nil || !strings.Contains(err.Error(), "kof/grafana dependsOn kof/gone") {
		t.Errorf("WaitFlux with a dependency that never appears: error %v, want the timeout naming kof/grafana "+
			"dependsOn kof/gone", err)
	}
}

// Retryable holds the answers a wait must sit out and refuses the ones that cannot change.
func TestRetryableSortsTransientFromFinal(t *testing.T) {
	gr := schema.GroupResource{Group: "k0rdent.mirantis.com", Resource: "clusterdeployments"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewServerTimeout(gr, "get", 1), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewServiceUnavailable("starting"), true},
		{&apimeta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "k0rdent.mirantis.com", Kind: "ClusterDeployment"}}, true},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), true},
		{apierrors.NewForbidden(gr, "x", errors.New("no rights")), false},
		{apierrors.NewBadRequest("invalid"), false},
		{nil, false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A HelmRelease whose chart version changes while its generation does not (its chart comes by spec.chartRef and
// only the HelmChart's version moved, as in an upgrade or `helm rollback` of the umbrella) is not Ready until
// helm-controller has installed that version: WaitFlux once returned at once after a rollback, with the condition
// of the version it was rolling back from, and the harness started the earlier operator with the newer Deployment.
func TestReadFluxReleasesWaitsForTheChartVersion(t *testing.T) {
	ctx := context.Background()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	hr := helmRelease("mothership", true)
	if err := unstructured.SetNestedField(hr.Object, "2.0.0", "spec", "chart", "spec", "version"); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(hr).Build()
	rels, err := ReadFluxReleases(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 1 || rels[0].Ready || !strings.Contains(rels[0].Message, `chart version 2.0.0 asked for, "1.0.0" installed`) {
		t.Errorf("release asking for 2.0.0 with 1.0.0 installed: %+v, want not Ready naming both versions", rels)
	}

	if err := unstructured.SetNestedSlice(hr.Object, []any{map[string]any{"version": int64(2), "chartName": "mothership",
		"chartVersion": "2.0.0"}}, "status", "history"); err != nil {
		t.Fatal(err)
	}
	c = fake.NewClientBuilder().WithScheme(s).WithObjects(hr).Build()
	if rels, err = ReadFluxReleases(ctx, c, ""); err != nil {
		t.Fatal(err)
	}
	if len(rels) != 1 || !rels[0].Ready || rels[0].Revision != 2 {
		t.Errorf("release with 2.0.0 installed: %+v, want Ready at revision 2", rels)
	}
	for v, want := range map[string]bool{"2.0.1": true, "v5.18.0": true, "": false, "*": false, "^1.2": false,
		">=1.0 <2.0": false, "1.x": false} {
		if got := exactVersion(v); got != want {
			t.Errorf("exactVersion(%q) = %v, want %v", v, got, want)
		}
	}
}
