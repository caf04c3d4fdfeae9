package mgmt

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// namespace is the release namespace of every chart, as in `helm upgrade -i kof charts/kof -n kof`.
const namespace = "kof"

// chartDir returns the directory of a chart of the repository.
func chartDir(chart string) string { return filepath.Join("..", "..", "..", "charts", chart) }

// managementAPIs are API versions the management cluster serves beyond Kubernetes' own (Flux, KCM); renders see
// them in .Capabilities unless a renderSpec names its own.
var managementAPIs = []string{"helm.toolkit.fluxcd.io/v2", "source.toolkit.fluxcd.io/v1", "k0rdent.mirantis.com/v1beta1"}

// renderSpec is one render of a chart: values files (relative to the chart for ci/ files), inline values, lookup
// fixtures and extra API versions (nil: managementAPIs); lenient renders without missingkey=error, as Flux's
// helm-controller does.
type renderSpec struct {
	chart       string
	files       []string
	values      map[string]any
	lookup      []*unstructured.Unstructured
	apiVersions []string
	lenient     bool
}

// options returns the chartlib options of s: release name = chart name, namespace kof, strict unless lenient.
func (s renderSpec) options() render.Options {
	apis := s.apiVersions
	if apis == nil {
		apis = managementAPIs
	}
	return render.Options{
		APIVersions: apis,
		ChartDir:    chartDir(s.chart),
		ReleaseName: s.chart,
		Namespace:   namespace,
		ValuesFiles: s.files,
		Values:      s.values,
		Lookup:      s.lookup,
		Strict:      !s.lenient,
	}
}

// renderChart renders s and fails the test on error.
func renderChart(t *testing.T, s renderSpec) *render.Result {
	t.Helper()
	res, err := render.Render(context.Background(), s.options())
	if err != nil {
		t.Fatalf("render %s with %v: %v", s.chart, s.files, err)
	}
	return res
}

// renderError renders s and returns its error, failing the test when the render succeeds.
func renderError(t *testing.T, s renderSpec) error {
	t.Helper()
	_, err := render.Render(context.Background(), s.options())
	if err == nil {
		t.Fatalf("render %s with %v succeeded; want an error", s.chart, s.files)
	}
	return err
}

// field returns the value at path of obj, failing the test when it is missing.
func field(t *testing.T, obj *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s %s: no field %v (err %v)", obj.GetKind(), obj.GetName(), path, err)
	}
	return v
}

// str returns the string at path of obj, failing the test when it is missing or not a string.
func str(t *testing.T, obj *unstructured.Unstructured, path ...string) string {
	t.Helper()
	s, ok := field(t, obj, path...).(string)
	if !ok {
		t.Fatalf("%s %s: field %v is not a string", obj.GetKind(), obj.GetName(), path)
	}
	return s
}

// mustGet returns the object of kind/namespace/name from res, failing the test when it is missing.
func mustGet(t *testing.T, res *render.Result, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := res.MustGet(kind, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// names returns the names of the objects of kind in res, in order.
func names(res *render.Result, kind string) []string {
	var out []string
	for _, o := range res.OfKind(kind) {
		out = append(out, o.GetName())
	}
	return out
}
