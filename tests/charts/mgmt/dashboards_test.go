package mgmt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// kpsRelease is the kube-prometheus-stack HelmRelease of kof-dashboards.
const kpsRelease = "kof-kube-prometheus-stack"

// checkDashboardJSON: the GrafanaDashboard's spec.json is the chart's generated file, and it loads into Grafana's
// model (the Foundation SDK's dashboard type, panels and queries as their typed variants) with the uid kof-<name>.
func checkDashboardJSON(t *testing.T, obj *unstructured.Unstructured, name string) {
	t.Helper()
	plugins.RegisterDefaultPlugins()
	raw := str(t, obj, "spec", "json")
	want, err := os.ReadFile(filepath.Join(chartDir("kof-dashboards"), "files", "dashboards", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if raw != string(want) {
		t.Errorf("GrafanaDashboard %s: spec.json differs from files/dashboards/%s.json", obj.GetName(), name)
	}
	var d dashboard.Dashboard
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatalf("GrafanaDashboard %s: spec.json is not a Grafana dashboard: %v", obj.GetName(), err)
	}
	if d.Uid == nil || *d.Uid != "kof-"+name || len(d.Panels) == 0 {
		t.Errorf("GrafanaDashboard %s: uid %v, %d panels", obj.GetName(), d.Uid, len(d.Panels))
	}
}

func checkDashboardsDefaults(t *testing.T, res *render.Result) {
	if diff := cmp.Diff(map[string]int{"GrafanaDashboard": 5, "HelmRelease": 1, "HelmRepository": 1}, res.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	for _, name := range []string{"fleet", "storage", "collectors", "cost", "components"} {
		d := mustGet(t, res, "GrafanaDashboard", namespace, "kof-"+name)
		checkDashboardJSON(t, d, name)
		sel := field(t, d, "spec", "instanceSelector", "matchLabels").(map[string]any)
		if sel["k0rdent.mirantis.com/kof-grafana"] != "kof-mothership-grafana" {
			t.Errorf("GrafanaDashboard kof-%s selects %v, want kof-mothership's Grafana", name, sel)
		}
	}
	hr := mustGet(t, res, "HelmRelease", namespace, kpsRelease)
	if got := str(t, hr, "spec", "chart", "spec", "chart"); got != "kube-prometheus-stack" {
		t.Errorf("HelmRelease chart %q", got)
	}
	if got := str(t, hr, "spec", "chart", "spec", "version"); got != "88.5.3" {
		t.Errorf("HelmRelease version %q, want the catalog's 88.5.3", got)
	}
	// Only rules and dashboards: every workload-producing part of kube-prometheus-stack is off.
	for _, part := range []string{"prometheus", "alertmanager", "prometheusOperator", "kubeStateMetrics", "nodeExporter", "kubernetesServiceMonitors", "crds", "grafana"} {
		if on, _, _ := unstructured.NestedBool(hr.Object, "spec", "values", part, "enabled"); on {
			t.Errorf("kube-prometheus-stack %s.enabled is true, want only rules and dashboards", part)
		}
	}
	if got := str(t, hr, "spec", "values", "defaultRules", "labels", "k0rdent.mirantis.com/kof-rule-engine"); got != "vmalert" {
		t.Errorf("upstream rules label %q, want vmalert (kof-mothership's VMAlert selects it)", got)
	}
	if got := field(t, hr, "spec", "values", "defaultRules", "additionalAggregationLabels"); !cmp.Equal(got, []any{"cluster"}) {
		t.Errorf("upstream rules aggregate by %v, want [cluster]", got)
	}
	if on, _, _ := unstructured.NestedBool(hr.Object, "spec", "values", "grafana", "operator", "dashboardsConfigMapRefEnabled"); !on {
		t.Error("upstream dashboards are not GrafanaDashboards (grafana.operator.dashboardsConfigMapRefEnabled)")
	}
	if on, _, _ := unstructured.NestedBool(hr.Object, "spec", "values", "defaultRules", "rules", "etcd"); on {
		t.Error("etcd rules on by default; KOF clusters do not expose etcd to the upstream rules")
	}
}

func checkDashboardsNoUpstream(t *testing.T, res *render.Result) {
	if diff := cmp.Diff(map[string]int{"GrafanaDashboard": 3}, res.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kof-collectors", "kof-fleet", "kof-storage"}, names(res, "GrafanaDashboard")); diff != "" {
		t.Errorf("dashboards (-want +got):\n%s", diff)
	}
	d := mustGet(t, res, "GrafanaDashboard", namespace, "kof-fleet")
	checkDashboardJSON(t, d, "fleet")
	if got := str(t, d, "spec", "folder"); got != "Observability" {
		t.Errorf("folder %q", got)
	}
	if sel := field(t, d, "spec", "instanceSelector", "matchLabels"); !cmp.Equal(sel, map[string]any{"dashboards": "kof"}) {
		t.Errorf("instanceSelector %v, want the values' labels only", sel)
	}
}

func checkDashboardsUpstreamToggles(t *testing.T, res *render.Result) {
	if diff := cmp.Diff(map[string]int{"HelmRelease": 1, "HelmRepository": 1}, res.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	hr := mustGet(t, res, "HelmRelease", namespace, kpsRelease)
	for path, want := range map[string]bool{"rules.etcd": true, "rules.kubeApiserverBurnrate": false, "rules.prometheus": false, "disabled.KubeCPUOvercommit": true} {
		got, ok, _ := unstructured.NestedBool(hr.Object, append([]string{"spec", "values", "defaultRules"}, splitDots(path)...)...)
		if !ok || got != want {
			t.Errorf("defaultRules.%s = %v (set %v), want %v", path, got, ok, want)
		}
	}
	if on, _, _ := unstructured.NestedBool(hr.Object, "spec", "values", "kubeEtcd", "enabled"); !on {
		t.Error("upstream.values kubeEtcd.enabled did not reach the HelmRelease")
	}
	if got := str(t, hr, "spec", "values", "defaultRules", "labels", "k0rdent.mirantis.com/kof-rule-engine"); got != "vmalert" {
		t.Errorf("a toggle dropped KOF's rules label: %q", got)
	}
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}
