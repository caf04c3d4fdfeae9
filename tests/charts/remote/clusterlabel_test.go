package remote

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestMetricsCarryClusterLabel: with a cluster name, every collector's prometheusremotewrite exporter adds the label
// `cluster` (KOF's alert and record rules group by it, charts/kof-mothership/files/default-rules.yaml); without
// one, no empty label is added.
func TestMetricsCarryClusterLabel(t *testing.T) {
	for file, want := range map[string]string{"02-child-values.yaml": "child-1", "": ""} {
		res := collectorsCase(t, file)
		cols := res.OfKind("OpenTelemetryCollector")
		if len(cols) == 0 {
			t.Fatalf("%q: no OpenTelemetryCollector", file)
		}
		for _, c := range cols {
			labels, found, _ := unstructured.NestedStringMap(c.Object, "spec", "config", "exporters",
				"prometheusremotewrite", "external_labels")
			switch {
			case want == "" && found:
				t.Errorf("%q: collector %s: external_labels %v without a cluster name", file, c.GetName(), labels)
			case want != "" && labels["cluster"] != want:
				t.Errorf("%q: collector %s: external_labels.cluster = %q, want %q", file, c.GetName(), labels["cluster"], want)
			}
		}
	}
}
