package remote

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// remoteOperators are the third-party services the collectors need on every remote cluster (kof-operators renders
// nothing there: its `delivery: auto` finds no Flux), docs/values-contract.md "Operators on remote clusters".
var remoteOperators = []string{"prometheus-operator-crds", "opentelemetry-operator"}

// TestRemoteCollectorsGetOperators: for kof-regional and kof-child with their defaults, every ci/ values file and
// Istio on, every MultiClusterService that deploys kof-collectors on remote clusters also deploys
// prometheus-operator-crds and opentelemetry-operator (namespace kof, no dependsOn, ServiceTemplates that
// kof-mothership renders), and kof-collectors dependsOn both. A MultiClusterService of the management cluster
// (regionless, M2M, M2R) deploys neither: kof-operators installs both there through Flux.
func TestRemoteCollectorsGetOperators(t *testing.T) {
	templates := map[string]bool{}
	for _, st := range renderChart(t, renderSpec{chart: "kof-mothership"}).OfKind("ServiceTemplate") {
		templates[st.GetName()] = true
	}
	istio := loadObjects(t, "clusters/namespace-istio.yaml")
	mgmtLabels := map[string]string{"k0rdent.mirantis.com/management-cluster": "true"}
	remote, mgmt := 0, 0
	for _, chart := range []string{"kof-regional", "kof-child"} {
		specs := []renderSpec{{chart: chart}, {chart: chart, lookup: istio}}
		for _, f := range ciFiles(t, chart) {
			specs = append(specs, renderSpec{chart: chart, files: []string{f}}, renderSpec{chart: chart, files: []string{f}, lookup: istio})
		}
		for _, s := range specs {
			for _, mcs := range renderChart(t, s).OfKind("MultiClusterService") {
				spec := specOf(t, mcs)
				byName := map[string]mcsService{}
				for _, svc := range spec.ServiceSpec.Services {
					byName[svc.Name] = svc
				}
				collectors, ok := byName["kof-collectors"]
				if !ok {
					continue
				}
				where := chart + " " + mcs.GetName() + " " + caseLabel(s)
				if spec.ServiceSpec.Provider.SelfManagement || selects(t, mcs, mgmtLabels) {
					mgmt++
					for _, op := range remoteOperators {
						if _, ok := byName[op]; ok {
							t.Errorf("%s: the management cluster gets %s, which kof-operators installs there through Flux", where, op)
						}
					}
					continue
				}
				remote++
				var deps []string
				for _, d := range collectors.DependsOn {
					deps = append(deps, d.Name)
				}
				for _, op := range remoteOperators {
					svc, ok := byName[op]
					if !ok {
						t.Errorf("%s deploys kof-collectors without %s", where, op)
						continue
					}
					if svc.Namespace != namespace || len(svc.DependsOn) != 0 {
						t.Errorf("%s: %s namespace %q dependsOn %v, want %s and none", where, op, svc.Namespace, svc.DependsOn, namespace)
					}
					if !templates[svc.Template] {
						t.Errorf("%s: %s names ServiceTemplate %q, which kof-mothership does not render", where, op, svc.Template)
					}
					if !contains(deps, op) {
						t.Errorf("%s: kof-collectors dependsOn %v, want %s among them", where, deps, op)
					}
				}
			}
		}
	}
	if remote == 0 || mgmt == 0 {
		t.Errorf("checked %d remote and %d management MultiClusterServices; want some of each", remote, mgmt)
	}
}

// TestRemoteOperatorsCatalogVersion: the operator services follow `catalog` (the umbrella injects its own), named
// `<entry>-<version with . → ->`, and their values are the chart's `opentelemetryOperator.values` and
// `prometheusOperatorCrds.values`.
func TestRemoteOperatorsCatalogVersion(t *testing.T) {
	values := map[string]any{
		"catalog": map[string]any{
			"opentelemetry-operator":   map[string]any{"version": "1.2.3"},
			"prometheus-operator-crds": map[string]any{"version": "25.0.0"},
		},
		"opentelemetryOperator":  map[string]any{"values": map[string]any{"replicaCount": 2}},
		"prometheusOperatorCrds": map[string]any{"values": map[string]any{"crds": map[string]any{"annotations": map[string]any{"a": "b"}}}},
	}
	want := map[string]string{"opentelemetry-operator": "opentelemetry-operator-1-2-3", "prometheus-operator-crds": "prometheus-operator-crds-25-0-0"}
	cds := loadObjects(t, "clusters/standard.yaml")
	for _, tc := range []struct{ chart, mcs, cluster string }{
		{"kof-regional", "kof-regional-cluster", "regional-1"},
		{"kof-child", "kof-child-cluster", "child-1"},
	} {
		mcs := mcsNamed(t, renderChart(t, renderSpec{chart: tc.chart, values: values}), tc.mcs)
		got := map[string]string{}
		for _, svc := range specOf(t, mcs).ServiceSpec.Services {
			if _, ok := want[svc.Name]; ok {
				got[svc.Name] = svc.Template
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s templates (-want +got):\n%s", tc.chart, diff)
		}
		var objects []*unstructured.Unstructured
		if tc.chart == "kof-regional" {
			objects = regionalFixtures(t, cds)
		} else {
			objects = childFixtures(cds, "regional-1", "regional-1.kof.example.com", tc.cluster)
		}
		results := mustInstantiate(t, mcs, capiCluster(t, deployment(t, cds, tc.cluster)), objects)
		if got := valuesOf(t, results, "opentelemetry-operator")["replicaCount"]; got != float64(2) && got != 2 && got != int64(2) {
			t.Errorf("%s: opentelemetry-operator replicaCount = %v (%T), want 2", tc.chart, got, got)
		}
		if got := str(t, valuesOf(t, results, "opentelemetry-operator"), "manager", "collectorImage", "repository"); got != "otel/opentelemetry-collector-contrib" {
			t.Errorf("%s: opentelemetry-operator manager.collectorImage.repository = %q, want the default contrib image", tc.chart, got)
		}
		if got := str(t, valuesOf(t, results, "prometheus-operator-crds"), "crds", "annotations", "a"); got != "b" {
			t.Errorf("%s: prometheus-operator-crds crds.annotations.a = %q, want b", tc.chart, got)
		}
	}
}

// caseLabel names a render of TestRemoteCollectorsGetOperators in failure messages.
func caseLabel(s renderSpec) string {
	label := "defaults"
	if len(s.files) > 0 {
		label = caseName(s.files[0])
	}
	if len(s.lookup) > 0 {
		label += " (Istio namespace)"
	}
	return label
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
