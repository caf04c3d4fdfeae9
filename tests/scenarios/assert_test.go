package scenarios

import (
	"encoding/base64"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/operator/names"
)

// kcmNamespace holds the scenarios' ClusterDeployments and the operator's per-cluster objects.
const kcmNamespace = "kcm-system"

// writePaths are the VMAuth write paths per signal key of the kof-collectors values (docs/contract.md, "Endpoints").
var writePaths = map[string]string{
	"metrics":   "/vm/insert/0/prometheus/api/v1/write",
	"logs":      "/vli/insert/opentelemetry/v1/logs",
	"auditLogs": "/vlai/insert/opentelemetry/v1/logs",
	"traces":    "/vti/insert/opentelemetry/v1/traces",
}

// exporterOf maps a signal key of the kof-collectors values to its OpenTelemetry exporter and the exporter's URL
// field (otlphttp takes full per-signal URLs as logs_endpoint / traces_endpoint; `endpoint` would get /v1/<signal>
// appended).
var exporterOf = map[string]struct{ name, field string }{
	"metrics":   {"prometheusremotewrite", "endpoint"},
	"logs":      {"otlphttp/logs", "logs_endpoint"},
	"auditLogs": {"otlphttp/auditlogs", "logs_endpoint"},
	"traces":    {"otlphttp/traces", "traces_endpoint"},
}

// wantWritesTo checks that the kof-collectors of cluster write every signal to base + its path, both in the
// instantiated values and in the rendered collectors' exporters.
func wantWritesTo(t *testing.T, f *fleet.Fleet, clusterName, base string) {
	t.Helper()
	s := service(t, f, clusterName, "kof-collectors")
	for signal, path := range writePaths {
		wantValue(t, clusterName+" kof-collectors values", s.Values, base+path, "kof", signal, "endpoint")
	}
	wantExporters(t, s, clusterName, func(signal string) string { return base + writePaths[signal] })
}

// wantExporters checks the endpoint of every signal's exporter in every OpenTelemetryCollector of s that has it.
func wantExporters(t *testing.T, s *fleet.Service, clusterName string, want func(signal string) string) {
	t.Helper()
	cols := collectors(t, s)
	for signal, exp := range exporterOf {
		found := 0
		for _, c := range cols {
			got, ok, _ := unstructured.NestedString(c.Object, "spec", "config", "exporters", exp.name, exp.field)
			if !ok {
				continue
			}
			found++
			if w := want(signal); got != w {
				t.Errorf("%s: collector %s exporter %s %s = %s, want %s", clusterName, c.GetName(), exp.name, exp.field, got, w)
			}
		}
		if found == 0 {
			t.Errorf("%s: no OpenTelemetryCollector has exporter %s with %s", clusterName, exp.name, exp.field)
		}
	}
}

// collectors returns the OpenTelemetryCollectors s renders, failing the test when there are none.
func collectors(t *testing.T, s *fleet.Service) []*unstructured.Unstructured {
	t.Helper()
	if s.Objects == nil {
		t.Fatalf("service %s rendered no objects (error: %v)", s.Name, s.Err)
	}
	cols := s.Objects.OfKind("OpenTelemetryCollector")
	if len(cols) == 0 {
		t.Fatalf("service %s renders no OpenTelemetryCollector", s.Name)
	}
	return cols
}

// operatorObject returns an object the operator writes, computed offline, failing the test when absent.
func operatorObject(t *testing.T, f *fleet.Fleet, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range f.Operator {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the operator writes no %s %s/%s", kind, ns, name)
	return nil
}

// wantChildCredentials checks that a child's collectors authenticate with the VMUser Secret the operator makes for
// it (names.ChildVMUserBase: the hashed name of docs/contract.md, not the Adler-32 of earlier releases), and that the
// Secret exists with that username.
func wantChildCredentials(t *testing.T, f *fleet.Fleet, child string) {
	t.Helper()
	base := names.ChildVMUserBase(kcmNamespace, child)
	secret := names.VMUserSecret(base)
	if legacy := names.VMUserSecret(names.LegacyChildVMUserBase(kcmNamespace, child)); legacy == secret {
		t.Fatalf("hashed and legacy credential names coincide: %s", secret)
	}
	s := service(t, f, child, "kof-collectors")
	wantValue(t, child+" credentials", s.Values, secret, "kof", "credentials", "secretName")
	env := value(t, s.Values, "opentelemetry-kube-stack", "defaultCRConfig", "env").([]any)
	found := false
	for _, e := range env {
		m := e.(map[string]any)
		if m["name"] == "KOF_VM_USER" {
			found = true
			wantValue(t, child+" KOF_VM_USER", m, secret, "valueFrom", "secretKeyRef", "name")
		}
	}
	if !found {
		t.Errorf("%s: collectors have no KOF_VM_USER env", child)
	}
	obj := operatorObject(t, f, "Secret", kcmNamespace, secret)
	user, _ := base64.StdEncoding.DecodeString(value(t, obj.Object, "data", "username").(string))
	if string(user) != base {
		t.Errorf("Secret %s username = %q, want %q", secret, user, base)
	}
	// The credentials reach the child as a Secret object (kof-vmuser-credentials), never inside Helm values.
	copied := object(t, service(t, f, child, "kof-vmuser-credentials"), "Secret", "kof", secret)
	if !cmp.Equal(copied.Object["data"], obj.Object["data"]) {
		t.Errorf("%s: copied Secret data %v, want the operator's %v", child, copied.Object["data"], obj.Object["data"])
	}
}

// wantBoundTo checks the regional cluster the operator binds child to (its child ConfigMap).
func wantBoundTo(t *testing.T, f *fleet.Fleet, child, regional string) {
	t.Helper()
	cm := operatorObject(t, f, "ConfigMap", kcmNamespace, names.ChildConfigMap(child))
	wantValue(t, child+" ConfigMap", cm.Object, regional, "data", "regional_cluster_name")
}

// noThirdPartyIngress checks that no cluster receives cert-manager, Envoy Gateway or ingress-nginx.
func noThirdPartyIngress(t *testing.T, f *fleet.Fleet) {
	t.Helper()
	for _, c := range f.Clusters {
		for _, s := range mcsServices(c) {
			switch s.Name {
			case "cert-manager", "envoy-gateway", "ingress-nginx":
				t.Errorf("cluster %s receives %s (%s) in Istio mode", c.Name, s.Name, s.Via)
			}
		}
	}
}

// envValue returns the value of the env var name in list, and whether it is set.
func envValue(list []any, name string) (map[string]any, bool) {
	for _, e := range list {
		m, _ := e.(map[string]any)
		if m["name"] == name {
			return m, true
		}
	}
	return nil, false
}

// wantDashboardsOnManagement: the management cluster receives kof-dashboards after kof-mothership, with KOF's five
// GrafanaDashboards and the kube-prometheus-stack HelmRelease that renders only its default rules (labelled for
// kof-mothership's VMAlert) and dashboards.
func wantDashboardsOnManagement(t *testing.T, f *fleet.Fleet) {
	t.Helper()
	s := service(t, f, "mgmt", "kof-dashboards")
	if !slices.Equal(s.DependsOn, []string{"kof/kof-mothership"}) {
		t.Errorf("kof-dashboards dependsOn %v, want kof-mothership", s.DependsOn)
	}
	for _, name := range []string{"fleet", "storage", "collectors", "cost", "components"} {
		object(t, s, "GrafanaDashboard", "kof", "kof-"+name)
	}
	hr := object(t, s, "HelmRelease", "kof", "kof-kube-prometheus-stack")
	values, _ := hr.Object["spec"].(map[string]any)["values"].(map[string]any)
	wantValue(t, "kube-prometheus-stack", values, "vmalert", "defaultRules", "labels", "k0rdent.mirantis.com/kof-rule-engine")
	wantValue(t, "kube-prometheus-stack", values, false, "prometheus", "enabled")
	wantValue(t, "kube-prometheus-stack", values, true, "grafana", "operator", "dashboardsConfigMapRefEnabled")
}

// metricSources are the catalog entries every KOF cluster gets as metric sources, with their ServiceTemplates.
var metricSources = []string{"kube-state-metrics", "prometheus-node-exporter", "opencost"}

// openCostRead is where a cluster's OpenCost must read its own usage: the read URL and the credentials Secret
// ("" for none).
type openCostRead struct{ url, secret string }

// wantMetricSources: every regional and child cluster (and the management cluster when mgmt is set) receives
// kube-state-metrics, prometheus-node-exporter and OpenCost by the ServiceTemplates kof-mothership renders from the
// catalog, kof-collectors depends on the first two and OpenCost on kof-collectors; kube-state-metrics gets KOF's
// custom-resource metrics; OpenCost reads the cluster's own read endpoint with the cluster's own credentials, by
// Secret reference: a regional's VMAuth with its admin Secret, a child's regional read endpoint (its ChildConfig)
// with the child's tenant-filtered Secret.
func wantMetricSources(t *testing.T, f *fleet.Fleet, mgmt *openCostRead) {
	t.Helper()
	templates := service(t, f, "mgmt", "kof-mothership")
	checked := 0
	for _, c := range f.Clusters {
		if len(c.Services) == 0 {
			continue // a regional ClusterDeployment in regionless mode receives nothing
		}
		var want openCostRead
		switch {
		case c.Role == fleet.RoleRegional:
			want = openCostRead{"http://vmauth-cluster.kof:8427/vm/select/0/prometheus", names.VMUserSecret(names.AdminVMUserBase(c.Namespace, c.Name))}
		case c.Role == fleet.RoleChild:
			cm := operatorObject(t, f, "ConfigMap", c.Namespace, names.ChildConfigMap(c.Name))
			url, _, _ := unstructured.NestedString(cm.Object, "data", "read_metrics_endpoint")
			if url == "" {
				t.Errorf("%s: ChildConfig has no read_metrics_endpoint", c.Name)
			}
			want = openCostRead{url, names.VMUserSecret(names.ChildVMUserBase(c.Namespace, c.Name))}
		case c.Role == fleet.RoleManagement && mgmt != nil:
			want = *mgmt
		default:
			continue
		}
		checked++
		ns := service(t, f, c.Name, "kof-collectors").Namespace
		for _, name := range metricSources {
			s := service(t, f, c.Name, name)
			st := object(t, templates, "ServiceTemplate", kcmNamespace, s.Template)
			if chart := value(t, st.Object, "spec", "helm", "chartSpec", "chart"); chart != s.Chart || s.Chart == "" {
				t.Errorf("%s %s: ServiceTemplate %s serves chart %v, the service is chart %q", c.Name, name, s.Template, chart, s.Chart)
			}
			if s.Namespace != ns {
				t.Errorf("%s %s: namespace %s, want the collectors' %s (where the credentials Secret is)", c.Name, name, s.Namespace, ns)
			}
		}
		collectors := service(t, f, c.Name, "kof-collectors")
		for _, dep := range []string{ns + "/kube-state-metrics", ns + "/prometheus-node-exporter"} {
			if !slices.Contains(collectors.DependsOn, dep) {
				t.Errorf("%s: kof-collectors dependsOn %v, want %s", c.Name, collectors.DependsOn, dep)
			}
		}
		ksm := service(t, f, c.Name, "kube-state-metrics")
		wantValue(t, c.Name+" kube-state-metrics", ksm.Values, true, "customResourceState", "enabled")
		var kinds []string
		for _, r := range value(t, ksm.Values, "customResourceState", "config", "spec", "resources").([]any) {
			kinds = append(kinds, r.(map[string]any)["groupVersionKind"].(map[string]any)["kind"].(string))
		}
		if want := []string{"ClusterDeployment", "Cluster", "HelmRelease"}; !slices.Equal(kinds, want) {
			t.Errorf("%s: kube-state-metrics custom resources %v, want %v", c.Name, kinds, want)
		}
		oc := service(t, f, c.Name, "opencost")
		if !slices.Contains(oc.DependsOn, ns+"/kof-collectors") {
			t.Errorf("%s: opencost dependsOn %v, want %s/kof-collectors", c.Name, oc.DependsOn, ns)
		}
		what := c.Name + " opencost"
		wantValue(t, what, oc.Values, want.url, "opencost", "prometheus", "external", "url")
		wantValue(t, what, oc.Values, false, "opencost", "prometheus", "internal", "enabled")
		prom := value(t, oc.Values, "opencost", "prometheus").(map[string]any)
		if got, _ := prom["secret_name"].(string); got != want.secret {
			t.Errorf("%s: opencost.prometheus.secret_name = %q, want %q", c.Name, got, want.secret)
		}
		if prom["password"] != nil || prom["username"] != nil {
			t.Errorf("%s: opencost values carry credentials instead of a Secret reference", c.Name)
		}
		switch {
		case c.Role == fleet.RoleRegional:
			operatorObject(t, f, "Secret", c.Namespace, want.secret) // the operator propagates it to the regional
		case want.secret != "":
			object(t, service(t, f, c.Name, "kof-vmuser-credentials"), "Secret", ns, want.secret)
		}
		wantCollectorScrapes(t, c.Name, collectors)
	}
	if checked == 0 {
		t.Error("no cluster checked for metric sources")
	}
}

// wantCollectorScrapes: the cluster collector's metrics pipeline has the metric sources receiver.
func wantCollectorScrapes(t *testing.T, clusterName string, s *fleet.Service) {
	t.Helper()
	for _, c := range collectors(t, s) {
		recv, _, _ := unstructured.NestedSlice(c.Object, "spec", "config", "service", "pipelines", "metrics", "receivers")
		if slices.Contains(recv, any("k8s_cluster")) {
			if !slices.Contains(recv, any("prometheus/sources")) {
				t.Errorf("%s: cluster collector %s metrics receivers %v lack prometheus/sources", clusterName, c.GetName(), recv)
			}
			return
		}
	}
	t.Errorf("%s: no cluster collector", clusterName)
}
