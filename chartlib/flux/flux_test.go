package flux

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func finder(objs []*unstructured.Unstructured) Find {
	return func(kind, ns, name string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
		return nil
	}
}

// The HelmRepository of a chartRef HelmChart is in the HelmChart's namespace, not the HelmRelease's (the preview
// once looked in the HelmRelease's namespace and found the wrong repository or none).
func TestReadChartRefRepositoryInHelmChartNamespace(t *testing.T) {
	objs := objects(t, `
kind: HelmRepository
metadata: {name: repo, namespace: charts}
spec: {url: "http://charts.example/right"}`, `
kind: HelmRepository
metadata: {name: repo, namespace: apps}
spec: {url: "http://charts.example/wrong"}`, `
kind: HelmChart
metadata: {name: c, namespace: charts}
spec: {chart: kof-child, version: "1.2.3", sourceRef: {kind: HelmRepository, name: repo}}`)
	hr := objects(t, `
kind: HelmRelease
metadata: {name: child, namespace: apps}
spec:
  chartRef: {kind: HelmChart, name: c, namespace: charts}
  targetNamespace: kof
  dependsOn: [{name: mothership}, {name: ops, namespace: other}]
  values: {a: 1}`)[0]
	got, err := Read(hr, finder(objs))
	if err != nil {
		t.Fatal(err)
	}
	want := Release{HelmRelease: "apps/child", Name: "child", Namespace: "kof", Chart: "kof-child", Version: "1.2.3",
		RepositoryRef: "charts/repo", Repository: "http://charts.example/right",
		DependsOn: []string{"apps/mothership", "other/ops"}, Values: map[string]any{"a": float64(1)}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Read (-want +got):\n%s", d)
	}
}

// An inline spec.chart names its HelmRepository with an optional namespace that defaults to the HelmRelease's.
func TestReadInlineChartRepositoryNamespace(t *testing.T) {
	objs := objects(t, `
kind: HelmRepository
metadata: {name: repo, namespace: charts}
spec: {url: "oci://registry.example/charts"}`, `
kind: HelmRepository
metadata: {name: local, namespace: apps}
spec: {url: "http://127.0.0.1:1/"}`)
	for _, tc := range []struct{ sourceNS, wantRef, wantURL string }{
		{"charts", "charts/repo", "oci://registry.example/charts"},
		{"", "apps/local", "http://127.0.0.1:1/"},
	} {
		name := "repo"
		if tc.sourceNS == "" {
			name = "local"
		}
		hr := objects(t, `
kind: HelmRelease
metadata: {name: op, namespace: apps}
spec:
  releaseName: operator
  chart: {spec: {chart: cert-manager, version: v1, sourceRef: {kind: HelmRepository, name: `+name+`, namespace: "`+
			tc.sourceNS+`"}}}`)[0]
		got, err := Read(hr, finder(objs))
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "operator" || got.Namespace != "apps" || got.RepositoryRef != tc.wantRef ||
			got.Repository != tc.wantURL {
			t.Errorf("sourceRef namespace %q: got %+v, want release operator in apps from %s (%s)", tc.sourceNS, got,
				tc.wantRef, tc.wantURL)
		}
	}
}

func TestReadErrorsNameTheField(t *testing.T) {
	for doc, want := range map[string]string{
		`{kind: HelmRelease, metadata: {name: a, namespace: ns}, spec: {}}`:                                         "set spec.chartRef",
		`{kind: HelmRelease, metadata: {name: a, namespace: ns}, spec: {chartRef: {kind: OCIRepository, name: x}}}`: `spec.chartRef.kind "OCIRepository"`,
		`{kind: HelmRelease, metadata: {name: a, namespace: ns}, spec: {chartRef: {kind: HelmChart, name: x}}}`:     "HelmChart ns/x not found",
	} {
		_, err := Read(objects(t, doc)[0], finder(nil))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "HelmRelease ns/a") {
			t.Errorf("%s: error %v, want one naming HelmRelease ns/a and %q", doc, err, want)
		}
	}
}

func names(rels []Release) []string {
	var out []string
	for _, r := range rels {
		out = append(out, r.HelmRelease)
	}
	return out
}

func TestOrderFollowsDependsOn(t *testing.T) {
	got, err := Order([]Release{
		{HelmRelease: "f/child", DependsOn: []string{"f/mothership"}},
		{HelmRelease: "f/mothership", DependsOn: []string{"f/operators", "f/vmo"}},
		{HelmRelease: "f/vmo", DependsOn: []string{"f/operators"}},
		{HelmRelease: "f/operators"},
		{HelmRelease: "f/regional", DependsOn: []string{"f/mothership"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// passes: [operators], [vmo], [mothership, regional] (regional after mothership in the same pass), [child]
	want := []string{"f/operators", "f/vmo", "f/mothership", "f/regional", "f/child"}
	if d := cmp.Diff(want, names(got)); d != "" {
		t.Errorf("Order (-want +got):\n%s", d)
	}
}

// A dependsOn cycle is an error naming its releases: Flux installs none of them (the preview once placed them at
// the end as if Flux would install them, while the harness refused them).
func TestOrderRejectsCycleAndMissingDependency(t *testing.T) {
	_, err := Order([]Release{
		{HelmRelease: "f/ok"},
		{HelmRelease: "f/a", DependsOn: []string{"f/b"}},
		{HelmRelease: "f/b", DependsOn: []string{"f/a"}},
	})
	if err == nil || !strings.Contains(err.Error(), "cycle: f/a, f/b ") || strings.Contains(err.Error(), "f/ok") {
		t.Errorf("cycle: error %v, want one naming f/a and f/b only", err)
	}
	if IsMissing(err) {
		t.Errorf("cycle: IsMissing(%v) = true; a cycle cannot resolve itself", err)
	}
	_, err = Order([]Release{{HelmRelease: "f/a", DependsOn: []string{"f/gone"}}})
	if err == nil || !strings.Contains(err.Error(), "f/a dependsOn f/gone") {
		t.Errorf("missing dependency: error %v, want one naming f/a dependsOn f/gone", err)
	}
	if !IsMissing(err) {
		t.Errorf("missing dependency: IsMissing(%v) = false; a live wait must treat it as pending", err)
	}
}
