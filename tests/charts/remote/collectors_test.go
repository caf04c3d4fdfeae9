package remote

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// collectorsCase renders kof-collectors with one ci file (or the defaults for "").
func collectorsCase(t *testing.T, file string) *render.Result {
	t.Helper()
	spec := renderSpec{chart: "kof-collectors"}
	if file != "" {
		spec.files = []string{chartDir("kof-collectors") + "/ci/" + file}
	}
	return renderChart(t, spec)
}

// checkExtensions asserts that every authenticator a collector config references is defined and that
// service.extensions lists exactly the defined extensions.
func checkExtensions(t *testing.T, col *unstructured.Unstructured) {
	t.Helper()
	cfg, _, _ := unstructured.NestedMap(col.Object, "spec", "config")
	defined, _, _ := unstructured.NestedMap(cfg, "extensions")
	var names []string
	for n := range defined {
		names = append(names, n)
	}
	sort.Strings(names)
	listed, _, _ := unstructured.NestedStringSlice(cfg, "service", "extensions")
	if !cmp.Equal(names, listed) {
		t.Errorf("collector %s: service.extensions %v, defined %v", col.GetName(), listed, names)
	}
	for _, section := range []string{"exporters", "receivers"} {
		comps, _, _ := unstructured.NestedMap(cfg, section)
		for name, c := range comps {
			m, _ := c.(map[string]any)
			if auth, ok, _ := unstructured.NestedString(m, "auth", "authenticator"); ok {
				if _, def := defined[auth]; !def {
					t.Errorf("collector %s: %s %s references undefined extension %s", col.GetName(), section, name, auth)
				}
			}
		}
	}
	pipelines, _, _ := unstructured.NestedMap(cfg, "service", "pipelines")
	for pname, p := range pipelines {
		for _, role := range []string{"receivers", "processors", "exporters"} {
			section, _, _ := unstructured.NestedMap(cfg, role)
			refs, _, _ := unstructured.NestedStringSlice(p.(map[string]any), role)
			for _, r := range refs {
				if _, ok := section[r]; !ok {
					t.Errorf("collector %s pipeline %s: %s %s is not defined", col.GetName(), pname, role, r)
				}
			}
		}
	}
}

// TestCollectorsConfigsAreComplete checks every collector of every case: extensions and pipeline references.
func TestCollectorsConfigsAreComplete(t *testing.T) {
	for _, file := range []string{"", "01-cloudwatch-values.yaml", "02-child-values.yaml", "03-registry-values.yaml"} {
		for _, col := range collectorSpecs(t, collectorsCase(t, file)) {
			checkExtensions(t, col)
		}
	}
}

// checkCollectorsCloudWatch checks ci/01-cloudwatch (scenario 10): null removes the KOF metrics, logs and traces
// exporters and their references, awscloudwatchlogs is added, AWS credentials are only secretKeyRefs, and
// kcm.monitoring adds a ServiceMonitor, a PodMonitor and a target allocator.
func checkCollectorsCloudWatch(t *testing.T, res *render.Result) {
	for _, col := range collectorSpecs(t, res) {
		exporters, _, _ := unstructured.NestedMap(col.Object, "spec", "config", "exporters")
		for _, gone := range []string{"prometheusremotewrite", "otlphttp/logs", "otlphttp/traces"} {
			if _, ok := exporters[gone]; ok {
				t.Errorf("collector %s still has exporter %s", col.GetName(), gone)
			}
		}
		if _, ok := exporters["awscloudwatchlogs"]; !ok {
			t.Errorf("collector %s has no awscloudwatchlogs exporter", col.GetName())
		}
		logs, _, _ := unstructured.NestedStringSlice(col.Object, "spec", "config", "service", "pipelines", "logs", "exporters")
		if !cmp.Equal(logs, []string{"awscloudwatchlogs", "debug"}) {
			t.Errorf("collector %s logs exporters = %v", col.GetName(), logs)
		}
		env, _, _ := unstructured.NestedSlice(col.Object, "spec", "env")
		for _, e := range env {
			m := e.(map[string]any)
			if strings.HasPrefix(m["name"].(string), "AWS_") {
				if _, hasValue := m["value"]; hasValue {
					t.Errorf("collector %s: %s has a literal value", col.GetName(), m["name"])
				}
				if _, ok, _ := unstructured.NestedString(m, "valueFrom", "secretKeyRef", "name"); !ok {
					t.Errorf("collector %s: %s is not a secretKeyRef", col.GetName(), m["name"])
				}
			}
		}
	}
	mustGet(t, res, "ServiceMonitor", namespace, "kof-kcm-controller-manager")
	mustGet(t, res, "PodMonitor", namespace, "kof-kcm-sveltos")
	cluster := mustGet(t, res, "OpenTelemetryCollector", namespace, "kof-collectors-cluster")
	if field(t, cluster.Object, "spec", "targetAllocator", "enabled") != true || str(t, cluster.Object, "spec", "mode") != "statefulset" {
		t.Error("kcm.monitoring needs the cluster collector as a statefulset with a target allocator")
	}
}

// checkCollectorsChild checks ci/02-child: every KOF exporter writes to the regional endpoint (otlphttp ones
// through the full-URL logs_endpoint / traces_endpoint fields) with basic auth and skips TLS verification, no Secret
// is rendered (credentials come by reference only) and each env name appears once (PKI_PATH replaced).
func checkCollectorsChild(t *testing.T, res *render.Result) {
	absent(t, res, "Secret")
	node := mustGet(t, res, "OpenTelemetryCollector", namespace, "kof-collectors-node")
	for name, want := range map[string]string{
		"prometheusremotewrite.endpoint":   "https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write",
		"otlphttp/logs.logs_endpoint":      "https://vmauth.regional-1.kof.example.com/vli/insert/opentelemetry/v1/logs",
		"otlphttp/auditlogs.logs_endpoint": "https://vmauth.regional-1.kof.example.com/vlai/insert/opentelemetry/v1/logs",
		"otlphttp/traces.traces_endpoint":  "https://vmauth.regional-1.kof.example.com/vti/insert/opentelemetry/v1/traces",
	} {
		exporter, key, _ := strings.Cut(name, ".")
		if got := str(t, node.Object, "spec", "config", "exporters", exporter, key); got != want {
			t.Errorf("exporter %s %s = %q, want %q", exporter, key, got, want)
		}
	}
	for _, col := range collectorSpecs(t, res) {
		for _, name := range []string{"prometheusremotewrite", "otlphttp/logs", "otlphttp/auditlogs", "otlphttp/traces"} {
			e, _, _ := unstructured.NestedMap(col.Object, "spec", "config", "exporters", name)
			if v, _, _ := unstructured.NestedBool(e, "tls", "insecure_skip_verify"); !v {
				t.Errorf("collector %s exporter %s: insecure_skip_verify not true", col.GetName(), name)
			}
			if a, _, _ := unstructured.NestedString(e, "auth", "authenticator"); a != "basicauth/kof" {
				t.Errorf("collector %s exporter %s: authenticator %q", col.GetName(), name, a)
			}
			if ep := exporterEndpoints(t, col)[name]; !strings.HasPrefix(ep, "https://vmauth.regional-1.kof.example.com/") {
				t.Errorf("collector %s exporter %s: endpoint %q", col.GetName(), name, ep)
			}
		}
		env, _, _ := unstructured.NestedSlice(col.Object, "spec", "env")
		seen := map[string]int{}
		for _, e := range env {
			m := e.(map[string]any)
			seen[m["name"].(string)]++
			if m["name"] == "PKI_PATH" && m["value"] != "etc/kubernetes" {
				t.Errorf("collector %s: PKI_PATH = %v", col.GetName(), m["value"])
			}
		}
		for n, c := range seen {
			if c != 1 {
				t.Errorf("collector %s: env %s appears %d times", col.GetName(), n, c)
			}
		}
		if seen["KOF_VM_USER"] != 1 || seen["KOF_VM_PASSWORD"] != 1 {
			t.Errorf("collector %s: credential env missing: %v", col.GetName(), seen)
		}
	}
}

// TestCollectorsPipelineTypo checks that a pipeline referencing an undefined exporter fails with a message naming
// the pipeline and the exporter.
func TestCollectorsPipelineTypo(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof-collectors", values: map[string]any{
		"opentelemetry-kube-stack": map[string]any{"defaultCRConfig": map[string]any{"config": map[string]any{
			"service": map[string]any{"pipelines": map[string]any{"logs": map[string]any{"exporters": []any{"otlphttp/log"}}}},
		}}},
	}})
	if !strings.Contains(err.Error(), "service.pipelines.logs.exporters") || !strings.Contains(err.Error(), "otlphttp/log") {
		t.Errorf("error %q does not name the pipeline and the exporter", err)
	}
}
