package remote

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/sveltos"
)

// FuzzChildCollectorsAnnotation feeds arbitrary kof-collectors-values annotations to the child MCS: layer 2 must
// either succeed with a values mapping or fail with an error naming the annotation, never anything else.
func FuzzChildCollectorsAnnotation(f *testing.F) {
	for _, seed := range []string{
		`{"opentelemetry-kube-stack":{"clusterName":"x"}}`,
		`{"opentelemetry-kube-stack": {`,
		"opentelemetry-kube-stack:\n  defaultCRConfig:\n    env:\n      - name: FOO\n        value: bar\n",
		`[1, 2]`, `"just a string"`, ``, `null`, `{{ .Cluster }}`, `{"a":"{{ fail \"x\" }}"}`, "a: '\n",
	} {
		f.Add(seed)
	}
	mcs := mcsNamed(f, renderChart(f, renderSpec{chart: "kof-child"}), "kof-child-cluster")
	objects := childFixtures(nil, "regional-1", "regional-1.kof.example.com", "child-f")
	f.Fuzz(func(t *testing.T, annotation string) {
		cluster := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "child-f", "namespace": kcmNamespace, "annotations": map[string]any{
				"k0rdent.mirantis.com/kof-collectors-values": annotation,
			}},
		}}
		results, err := instantiate(t, mcs, cluster, objects, sveltos.DoublePass)
		if err != nil {
			if !strings.Contains(err.Error(), "k0rdent.mirantis.com/kof-collectors-values") {
				t.Fatalf("annotation %q: error does not name the annotation: %v", annotation, err)
			}
			return
		}
		if v := valuesOf(t, results, "kof-collectors"); v == nil {
			t.Fatalf("annotation %q: no values", annotation)
		}
	})
}

// FuzzLayer2HandOffKeepsValues hands a chart value (a string, as a map key and as a list item, next to numbers,
// booleans and null) through the readable layer-2 hand-off of the child MCS: both Sveltos modes must give back exactly
// the value the chart had, whatever characters it holds (quotes, backslashes, line breaks, template delimiters,
// backquotes, unicode).
func FuzzLayer2HandOffKeepsValues(f *testing.F) {
	for _, seed := range []string{
		`plain`, `quote " and backslash \`, "line\nbreak\ttab\rcr", "{{ .Cluster.metadata.name }}", "}}{{", "`raw`",
		"'single'", "ünïcødé 日本 😀", "trailing space ", "  indented", "a: b", "- item", "#comment", "\\u007b\\u007b", "",
	} {
		f.Add(seed)
	}
	objects := childFixtures(nil, "regional-1", "regional-1.kof.example.com", "child-f")
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "child-f", "namespace": kcmNamespace},
	}}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("chart values are UTF-8")
		}
		extra := map[string]any{"s": s, "list": []any{s, 1.5, int64(-2), true, nil}, "keys": map[string]any{s + "k": "v"}}
		config := map[string]any{"opentelemetry-kube-stack": map[string]any{"defaultCRConfig": map[string]any{"config": map[string]any{"extra": extra}}}}
		mcs := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-child", values: map[string]any{"collectors": config}}), "kof-child-cluster")
		for _, mode := range []sveltos.Mode{sveltos.DoublePass, sveltos.SinglePass} {
			results, err := instantiate(t, mcs, cluster, objects, mode)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			want := map[string]any{"s": s, "list": []any{s, 1.5, float64(-2), true, nil}, "keys": map[string]any{s + "k": "v"}}
			got := field(t, valuesOf(t, results, "kof-collectors"), "opentelemetry-kube-stack", "defaultCRConfig", "config", "extra")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s: value %q changed by the hand-off (-want +got):\n%s", mode, s, diff)
			}
		}
	})
}
