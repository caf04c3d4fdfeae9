package remote

import (
	"strings"
	"testing"

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
