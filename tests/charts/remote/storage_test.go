package remote

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/dashboards"
	"kof.dev/kof/chartlib/render"
)

// absent fails the test for every object of the kinds that res renders.
func absent(t *testing.T, res *render.Result, kinds ...string) {
	t.Helper()
	for _, kind := range kinds {
		if got := objNames(res, kind); len(got) > 0 {
			t.Errorf("unexpected %s %v", kind, got)
		}
	}
}

// checkStorageDefaults checks the default storage: the four storage CRs, VMAuth, the VMUser routes of
// docs/contract.md (each dropping the first path part) and no public endpoint without a domain.
func checkStorageDefaults(t *testing.T, res *render.Result) {
	mustGet(t, res, "VMCluster", namespace, "cluster")
	mustGet(t, res, "VMAuth", namespace, "cluster")
	alert := mustGet(t, res, "VMAlert", namespace, "cluster")
	if got := str(t, alert.Object, "spec", "remoteWrite", "url"); got != "http://vminsert-cluster:8480/insert/0/prometheus" {
		t.Errorf("VMAlert remote write = %q", got)
	}
	if got := str(t, alert.Object, "spec", "ruleSelector", "matchLabels", "app.kubernetes.io/instance"); got != "kof-storage" {
		t.Errorf("VMAlert rule selector = %q, want this release's VMRules", got)
	}
	mustGet(t, res, "VLCluster", namespace, "logs")
	mustGet(t, res, "VLCluster", namespace, "audit-logs")
	mustGet(t, res, "VTCluster", namespace, "traces")
	absent(t, res, "HTTPRoute", "Gateway", "Ingress", "ClusterIssuer", "Service", "PromxyServerGroup", "VMStorageConnection",
		"Grafana", "GrafanaDatasource", "GrafanaDashboard")
	user := mustGet(t, res, "VMUser", namespace, "kof-vmuser-local")
	refs, _, _ := unstructured.NestedSlice(user.Object, "spec", "targetRefs")
	got := map[string]string{}
	for _, r := range refs {
		m := r.(map[string]any)
		if m["drop_src_path_prefix_parts"] != int64(1) && m["drop_src_path_prefix_parts"] != float64(1) {
			t.Errorf("route %v does not drop the first path part", m["paths"])
		}
		got[m["paths"].([]any)[0].(string)] = m["static"].(map[string]any)["url"].(string)
	}
	want := map[string]string{
		"/vm/insert/.*": "http://vminsert-cluster:8480", "/vm/select/.*": "http://vmselect-cluster:8481",
		"/vli/.*": "http://vlinsert-logs:9481", "/vls/.*": "http://vlselect-logs:9471",
		"/vlai/.*": "http://vlinsert-audit-logs:9481", "/vlas/.*": "http://vlselect-audit-logs:9471",
		"/vti/.*": "http://vtinsert-traces:10481", "/vts/.*": "http://vtselect-traces:10471",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VMUser routes (-want +got):\n%s", diff)
	}
	if field(t, user.Object, "spec", "generatePassword") != true {
		t.Error("VMUser without a password must let the operator generate one")
	}
}

// checkStorageIstio checks ci/01-istio: the in-mesh Service and no Gateway, HTTPRoute, Ingress or ClusterIssuer.
func checkStorageIstio(t *testing.T, res *render.Result) {
	svc := mustGet(t, res, "Service", namespace, "regional-istio-vmauth")
	if got := field(t, svc.Object, "spec", "ports"); len(got.([]any)) != 1 || got.([]any)[0].(map[string]any)["port"] != int64(8427) {
		t.Errorf("Service ports = %v, want 8427", got)
	}
	absent(t, res, "HTTPRoute", "Gateway", "Ingress", "ClusterIssuer")
}

// checkStorageIngressSelfSigned checks ci/02-ingress-selfsigned: an Ingress for vmauth.<domain>, a self-signed
// ClusterIssuer and the storage class on every volume claim.
func checkStorageIngressSelfSigned(t *testing.T, res *render.Result) {
	ing := mustGet(t, res, "Ingress", namespace, "vmauth")
	if got := str(t, ing.Object, "metadata", "annotations", "cert-manager.io/cluster-issuer"); got != "kof-issuer" {
		t.Errorf("Ingress issuer = %q", got)
	}
	rules, _, _ := unstructured.NestedSlice(ing.Object, "spec", "rules")
	if len(rules) != 1 || rules[0].(map[string]any)["host"] != "vmauth.regional-1.kof.example.com" {
		t.Errorf("Ingress rules = %v", rules)
	}
	issuer := mustGet(t, res, "ClusterIssuer", "", "kof-issuer")
	if _, ok, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); !ok {
		t.Error("ClusterIssuer is not self-signed")
	}
	absent(t, res, "HTTPRoute", "Gateway")
	classes := map[string]string{
		"VMCluster/cluster":    str(t, mustGet(t, res, "VMCluster", namespace, "cluster").Object, "spec", "vmstorage", "storage", "volumeClaimTemplate", "spec", "storageClassName"),
		"VLCluster/logs":       str(t, mustGet(t, res, "VLCluster", namespace, "logs").Object, "spec", "vlstorage", "storage", "volumeClaimTemplate", "spec", "storageClassName"),
		"VLCluster/audit-logs": str(t, mustGet(t, res, "VLCluster", namespace, "audit-logs").Object, "spec", "vlstorage", "storage", "volumeClaimTemplate", "spec", "storageClassName"),
		"VTCluster/traces":     str(t, mustGet(t, res, "VTCluster", namespace, "traces").Object, "spec", "storage", "storage", "volumeClaimTemplate", "spec", "storageClassName"),
	}
	for k, v := range classes {
		if v != "fast-ssd" {
			t.Errorf("%s storage class = %q, want fast-ssd", k, v)
		}
	}
}

// checkStorageM2M checks ci/03-m2m: no VictoriaMetrics objects, a PromxyServerGroup on the given target and one
// VMStorageConnection per signal pointing the management cluster's multilevel clusters at the local storage.
func checkStorageM2M(t *testing.T, res *render.Result) {
	absent(t, res, "VMCluster", "VMAuth", "VMAlert", "VMUser", "VMRule", "Secret", "ClusterIssuer", "HTTPRoute", "Gateway")
	psg := mustGet(t, res, "PromxyServerGroup", namespace, "promxy-server-group-mothership")
	if got := field(t, psg.Object, "spec", "targets"); !cmp.Equal(got, []any{"vmselect-cluster.kof.svc:8481"}) {
		t.Errorf("PromxyServerGroup targets = %v", got)
	}
	if got := str(t, psg.Object, "metadata", "labels", "k0rdent.mirantis.com/secret-name"); got != "kof-mothership-promxy-config" {
		t.Errorf("PromxyServerGroup secret-name label = %q", got)
	}
	got := map[string]string{}
	for _, c := range res.OfKind("VMStorageConnection") {
		got[str(t, c.Object, "spec", "cluster_ref", "name")] = str(t, c.Object, "spec", "target_storage_node", "address")
	}
	want := map[string]string{
		"kof-logs":       "vlselect-logs.kof.svc:9471",
		"kof-logs-audit": "vlselect-audit-logs.kof.svc:9471",
		"kof-traces":     "vtselect-traces.kof.svc:10471",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VMStorageConnections (-want +got):\n%s", diff)
	}
}

// checkStorageRegistryCredentials checks ci/04-registry-credentials: the handed-over credentials in a Secret the
// VMUser references, one VMRule per group, no audit logs cluster (scenario 13) and every image from the registry.
func checkStorageRegistryCredentials(t *testing.T, res *render.Result) {
	checkImagesFrom(t, res, "registry.example.com")
	const base = "admin-regional-1-0123456789"
	user := mustGet(t, res, "VMUser", namespace, "kof-vmuser-"+base)
	if got := str(t, user.Object, "spec", "passwordRef", "name"); got != "kof-vmuser-creds-"+base {
		t.Errorf("passwordRef = %q", got)
	}
	mustGet(t, res, "Secret", namespace, "kof-vmuser-creds-"+base)
	if got := objNames(res, "VLCluster"); !cmp.Equal(got, []string{"logs"}) {
		t.Errorf("VLClusters = %v, want only logs (audit logs disabled)", got)
	}
	rule := mustGet(t, res, "VMRule", namespace, "kof-record-kube-apiserver-rules")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	if len(groups) != 1 || groups[0].(map[string]any)["name"] != "kube-apiserver.rules" {
		t.Errorf("VMRule groups = %v", groups)
	}
}

// TestStorageAuditDisabledThroughRegional checks scenario 13 end to end: `storage.victoriametrics.vlcluster_audit
// .enabled: false` on kof-regional reaches every regional cluster's storage through layer 2.
func TestStorageAuditDisabledThroughRegional(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional", values: map[string]any{
		"storage": map[string]any{"victoriametrics": map[string]any{"vlcluster_audit": map[string]any{"enabled": false}}},
	}})
	cds := loadObjects(t, "clusters/standard.yaml")
	results := mustInstantiate(t, mcsNamed(t, res, "kof-regional-cluster"), capiCluster(t, deployment(t, cds, "regional-1")), regionalFixtures(t, cds))
	_, rendered := layer2Golden(t, results)
	got := objNames(rendered["kof-storage"].objects, "VLCluster")
	sort.Strings(got)
	if !cmp.Equal(got, []string{"logs"}) {
		t.Errorf("VLClusters = %v, want only logs", got)
	}
}

// checkStorageGrafana checks ci/05-grafana: a Grafana, its data sources on this cluster's own select endpoints (the
// metrics one named as the dashboards' `metrics` variable expects) and one GrafanaDashboard per dashboard but the
// disabled one, each byte for byte the management cluster's file (charts/kof-dashboards, whose queries
// tests/dashboards runs on real VictoriaMetrics), every object selecting this Grafana.
func checkStorageGrafana(t *testing.T, res *render.Result) {
	const grafana = "kof-storage-grafana"
	g := mustGet(t, res, "Grafana", namespace, grafana)
	if got := g.GetLabels()["k0rdent.mirantis.com/kof-grafana"]; got != grafana {
		t.Errorf("Grafana label = %q", got)
	}
	selects := func(o *unstructured.Unstructured) {
		t.Helper()
		if got := str(t, o.Object, "spec", "instanceSelector", "matchLabels", "k0rdent.mirantis.com/kof-grafana"); got != grafana {
			t.Errorf("%s %s selects Grafana %q, want %s", o.GetKind(), o.GetName(), got, grafana)
		}
	}
	want := map[string]string{
		dashboards.MetricsDatasourceName: "http://vmselect-cluster:8481/select/0/prometheus",
		"KOF logs":                       "http://vlselect-logs:9471",
		"KOF traces":                     "http://vtselect-traces:10471/select/jaeger",
	}
	got := map[string]string{}
	for _, ds := range res.OfKind("GrafanaDatasource") {
		selects(ds)
		got[str(t, ds.Object, "spec", "datasource", "name")] = str(t, ds.Object, "spec", "datasource", "url")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data sources (-want +got):\n%s", diff)
	}
	files, err := filepath.Glob(filepath.Join(chartDir("kof-dashboards"), "files", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("management dashboards: %v (%d)", err, len(files))
	}
	var wantBoards []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if name == "cost" {
			continue // disabled by the case
		}
		wantBoards = append(wantBoards, "kof-"+name)
		d := mustGet(t, res, "GrafanaDashboard", namespace, "kof-"+name)
		selects(d)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if str(t, d.Object, "spec", "json") != string(data) {
			t.Errorf("GrafanaDashboard kof-%s differs from the management cluster's %s", name, f)
		}
	}
	if got := objNames(res, "GrafanaDashboard"); !cmp.Equal(got, wantBoards) {
		t.Errorf("GrafanaDashboards = %v, want %v", got, wantBoards)
	}
}
