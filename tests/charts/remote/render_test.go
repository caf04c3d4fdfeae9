package remote

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// namespace is the release namespace of every chart: `kof` on the management cluster and on remote clusters.
const namespace = "kof"

// chartDir returns the directory of a chart of the repository.
func chartDir(chart string) string { return filepath.Join("..", "..", "..", "charts", chart) }

// renderSpec is one render of a chart: values files (ci/ files, relative to this package), inline values and
// lookup fixtures.
type renderSpec struct {
	chart  string
	files  []string
	values map[string]any
	lookup []*unstructured.Unstructured
}

// options returns the chartlib options of s: release name = chart name, namespace kof, strict mode.
func (s renderSpec) options() render.Options {
	return render.Options{
		ChartDir:    chartDir(s.chart),
		ReleaseName: s.chart,
		Namespace:   namespace,
		ValuesFiles: s.files,
		Values:      s.values,
		Lookup:      s.lookup,
		Strict:      true,
	}
}

// renderChart renders s and fails the test on error.
func renderChart(t testing.TB, s renderSpec) *render.Result {
	t.Helper()
	res, err := render.Render(context.Background(), s.options())
	if err != nil {
		t.Fatalf("render %s with %v: %v", s.chart, s.files, err)
	}
	return res
}

// renderError renders s and returns its error, failing the test when the render succeeds.
func renderError(t testing.TB, s renderSpec) error {
	t.Helper()
	_, err := render.Render(context.Background(), s.options())
	if err == nil {
		t.Fatalf("render %s with %v succeeded; want an error", s.chart, s.files)
	}
	return err
}

// ciFiles returns the chart's ci/NN-*-values.yaml files, sorted.
func ciFiles(t testing.TB, chart string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(chartDir(chart), "ci"))
	if err != nil {
		t.Fatalf("read ci dir of %s: %v", chart, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-values.yaml") {
			out = append(out, filepath.Join(chartDir(chart), "ci", e.Name()))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatalf("chart %s has no ci/*-values.yaml files", chart)
	}
	return out
}

// caseName returns the golden case name of a ci file: `01-istio` for `ci/01-istio-values.yaml`.
func caseName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), "-values.yaml")
}

// field returns the value at path of obj, failing the test when it is missing.
func field(t testing.TB, obj map[string]any, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !ok {
		t.Fatalf("no field %v (err %v) in %v", path, err, obj)
	}
	return v
}

// str returns the string at path of obj, failing the test when it is missing or not a string.
func str(t testing.TB, obj map[string]any, path ...string) string {
	t.Helper()
	s, ok := field(t, obj, path...).(string)
	if !ok {
		t.Fatalf("field %v is not a string: %v", path, field(t, obj, path...))
	}
	return s
}

// mustGet returns the object of kind/namespace/name from res, failing the test when it is missing.
func mustGet(t testing.TB, res *render.Result, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := res.MustGet(kind, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// objNames returns the names of the objects of kind in res, in order.
func objNames(res *render.Result, kind string) []string {
	var out []string
	for _, o := range res.OfKind(kind) {
		out = append(out, o.GetName())
	}
	return out
}

// manifestYAML returns the objects of res as one YAML stream (the golden form), failing the test on error.
func manifestYAML(t testing.TB, res *render.Result) []byte {
	t.Helper()
	out, err := res.YAML()
	if err != nil {
		t.Fatalf("marshal objects: %v", err)
	}
	return out
}
