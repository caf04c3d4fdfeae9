package remote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/names"
)

// regionalFixtures returns the management-cluster objects the regional MCS reads for regional-1: its
// ClusterDeployment and the vmrules ConfigMap the KOF operator writes.
func regionalFixtures(t testing.TB, cds []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	rules := "vmrules:\n  groups:\n    kube-apiserver.rules:\n      - record: apiserver_request:burnrate1h\n        expr: sum(rate(apiserver_request_total[1h]))\n"
	return append(append([]*unstructured.Unstructured{}, cds...),
		configMap(kcmNamespace, names.VMRulesConfigMap("regional-1"), map[string]any{"values": rules}),
	)
}

// mcsNamed returns the MultiClusterService name from res, failing the test when it is absent.
func mcsNamed(t testing.TB, res *render.Result, name string) *unstructured.Unstructured {
	t.Helper()
	return mustGet(t, res, "MultiClusterService", "", name)
}

// checkLayer2Texts lints every service's values text and checks that single and double pass agree.
func checkLayer2Texts(t *testing.T, mcs, cluster *unstructured.Unstructured, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, svc := range specOf(t, mcs).ServiceSpec.Services {
		if findings := sveltos.Lint(svc.Values); len(findings) > 0 {
			t.Errorf("MCS %s service %s: lint findings: %v", mcs.GetName(), svc.Name, findings)
		}
		if strings.Contains(svc.Values, " \n") || strings.Contains(svc.Values, "\t") {
			t.Errorf("MCS %s service %s: trailing space or tab in values", mcs.GetName(), svc.Name)
		}
	}
	double, err := instantiate(t, mcs, cluster, objects, sveltos.DoublePass)
	if err != nil {
		t.Fatalf("double pass: %v", err)
	}
	single, err := instantiate(t, mcs, cluster, objects, sveltos.SinglePass)
	if err != nil {
		t.Fatalf("single pass: %v", err)
	}
	for i := range double {
		if diff := cmp.Diff(single[i].result.Values, double[i].result.Values); diff != "" {
			t.Errorf("service %s: single and double pass differ (-single +double):\n%s", double[i].service.Name, diff)
		}
		if single[i].result.Text != double[i].result.Text {
			t.Errorf("service %s: the instantiated text differs between the passes:\nsingle %q\ndouble %q",
				double[i].service.Name, single[i].result.Text, double[i].result.Text)
		}
	}
}

// TestRegionalStandardCluster instantiates kof-regional-cluster for regional-1 and renders its storage and
// collectors: services in dependsOn order, the annotations of the ClusterDeployment beating its
// clusterAnnotations and every other layer, the admin credentials handed over, the vmrules merged from valuesFrom.
func TestRegionalStandardCluster(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional"})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-regional-cluster"}) {
		t.Fatalf("MCS names = %v, want [kof-regional-cluster]", got)
	}
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	cds := loadObjects(t, "clusters/standard.yaml")
	regional := deployment(t, cds, "regional-1")
	if !selects(t, mcs, regional.GetLabels()) || selects(t, mcs, deployment(t, cds, "child-1").GetLabels()) {
		t.Fatal("kof-regional-cluster must select regional-1 and not child-1")
	}
	objects := regionalFixtures(t, cds)
	cluster := capiCluster(t, regional)
	results := mustInstantiate(t, mcs, cluster, objects)
	// Envoy Gateway brings the Gateway API CRDs, so it comes before cert-manager, whose Gateway API support watches
	// them (regression: cert-manager was installed first).
	want := []string{"prometheus-operator-crds", "opentelemetry-operator", "envoy-gateway", "cert-manager", "kof-operators", "victoria-metrics-operator", "external-dns", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}
	if got := serviceNames(results); !cmp.Equal(got, want) {
		t.Fatalf("services = %v, want %v", got, want)
	}
	wantGatewayAPISwitches(t, results, true)
	// The third-party operators and the metric sources have no dependsOn; the others form a chain, kof-collectors
	// also waits for both operators and the metric sources, and OpenCost comes after kof-collectors.
	wantDepsOf := map[string][]string{
		"envoy-gateway":             nil,
		"cert-manager":              {"envoy-gateway"},
		"kof-operators":             {"cert-manager"},
		"victoria-metrics-operator": {"kof-operators"},
		"kof-storage":               {"victoria-metrics-operator"},
		"kof-collectors":            {"kof-storage", "prometheus-operator-crds", "opentelemetry-operator", "kube-state-metrics", "prometheus-node-exporter"},
		"opencost":                  {"kof-collectors"},
	}
	for _, r := range results {
		var deps []string
		for _, d := range r.service.DependsOn {
			deps = append(deps, d.Name)
		}
		wantDeps := wantDepsOf[r.service.Name]
		if !cmp.Equal(deps, wantDeps) {
			t.Errorf("service %s dependsOn %v, want %v", r.service.Name, deps, wantDeps)
		}
	}
	checkLayer2Texts(t, mcs, cluster, objects)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/regional-standard", golden)
	wantExternalDNSValues(t, results, "aws", "external-dns-credentials", "regional-1.kof.example.com",
		"gateway-httproute", "kof-regional-1")

	storage := rendered["kof-storage"]
	base := names.AdminVMUserBase(kcmNamespace, "regional-1")
	for path, want := range map[string]string{
		"clusterName":  "regional-1",
		"domain":       "regional-1.kof.example.com",
		"certEmail":    "admin@example.com",
		"storageClass": "regional-ssd",
	} {
		if got := str(t, storage.values, strings.Split(path, ".")...); got != want {
			t.Errorf("kof-storage values %s = %q, want %q", path, got, want)
		}
	}
	vmcluster := mustGet(t, storage.objects, "VMCluster", namespace, "cluster")
	if got := str(t, vmcluster.Object, "spec", "retentionPeriod"); got != "90d" {
		t.Errorf("VMCluster retention = %q, want 90d (ClusterDeployment annotation beats clusterAnnotations and values)", got)
	}
	if got := str(t, vmcluster.Object, "spec", "vmstorage", "storage", "volumeClaimTemplate", "spec", "storageClassName"); got != "regional-ssd" {
		t.Errorf("vmstorage storage class = %q, want regional-ssd", got)
	}
	route := mustGet(t, storage.objects, "HTTPRoute", namespace, "vmauth")
	if got := field(t, route.Object, "spec", "hostnames"); !cmp.Equal(got, []any{"vmauth.regional-1.kof.example.com"}) {
		t.Errorf("HTTPRoute hostnames = %v", got)
	}
	gw := mustGet(t, storage.objects, "Gateway", "kof", "storage-gateway")
	class := mustGet(t, storage.objects, "GatewayClass", "", str(t, gw.Object, "spec", "gatewayClassName"))
	if got := str(t, class.Object, "spec", "controllerName"); got != "gateway.envoyproxy.io/gatewayclass-controller" {
		t.Errorf("GatewayClass controller = %q", got)
	}
	if rule := mustGet(t, storage.objects, "VMRule", namespace, "kof-record-kube-apiserver-rules"); rule == nil {
		t.Error("vmrules from the valuesFrom ConfigMap were not rendered")
	}
	// The KOF operator propagates the admin and children's VMUser bundles: the chart renders none of them.
	absent(t, storage.objects, "VMUser", "Secret")
	vmauth := mustGet(t, storage.objects, "VMAuth", namespace, "cluster")
	if got := str(t, vmauth.Object, "spec", "userNamespaceSelector", "matchLabels", "kubernetes.io/metadata.name"); got != namespace {
		t.Errorf("VMAuth reads VMUsers of namespace %q, want %s", got, namespace)
	}
	if got := str(t, mustGet(t, storage.objects, "ClusterIssuer", "", "kof-issuer").Object, "spec", "acme", "email"); got != "admin@example.com" {
		t.Errorf("ClusterIssuer email = %q", got)
	}

	collectors := rendered["kof-collectors"]
	env := envOf(t, collectors.values)
	if got := envNames(env); !cmp.Equal(got, []string{"KOF_VM_USER", "KOF_VM_PASSWORD"}) {
		t.Errorf("regional collectors env = %v", got)
	}
	if got := str(t, env[0], "valueFrom", "secretKeyRef", "name"); got != names.VMUserSecret(base) {
		t.Errorf("KOF_VM_USER secret = %q, want %q", got, names.VMUserSecret(base))
	}
	if got := str(t, collectors.values, "kof", "metrics", "endpoint"); got != "http://vmauth-cluster.kof:8427/vm/insert/0/prometheus/api/v1/write" {
		t.Errorf("regional metrics endpoint = %q", got)
	}
}

// TestRegionalIstio renders Istio mode from the kof namespace label: two MCSs with disjoint selectors; the Istio one
// has no cert-manager or gateway service and its storage publishes the in-mesh Service <cluster>-vmauth.
func TestRegionalIstio(t *testing.T) {
	ns := loadObjects(t, "clusters/namespace-istio.yaml")
	// The umbrella injects its shared keys (istio.enabled: false among them) into `storage`; the variant still wins.
	injected := map[string]any{"istio": map[string]any{"enabled": false}}
	res := renderChart(t, renderSpec{chart: "kof-regional", lookup: ns, values: map[string]any{"storage": injected, "collectors": injected}})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-istio-regional-cluster", "kof-regional-cluster"}) {
		t.Fatalf("MCS names = %v", got)
	}
	std, istio := mcsNamed(t, res, "kof-regional-cluster"), mcsNamed(t, res, "kof-istio-regional-cluster")
	cds := append(loadObjects(t, "clusters/standard.yaml"), loadObjects(t, "clusters/istio.yaml")...)
	for _, cd := range cds {
		if selects(t, std, cd.GetLabels()) && selects(t, istio, cd.GetLabels()) {
			t.Errorf("%s is selected by both regional MCS variants", cd.GetName())
		}
	}
	regional := deployment(t, cds, "regional-istio")
	if selects(t, std, regional.GetLabels()) || !selects(t, istio, regional.GetLabels()) {
		t.Fatal("regional-istio must be selected by the Istio variant only")
	}
	if !selects(t, std, deployment(t, cds, "regional-1").GetLabels()) {
		t.Fatal("regional-1 must stay selected by the standard variant")
	}
	cluster := capiCluster(t, regional)
	cds = append(cds, configMap(kcmNamespace, names.VMRulesConfigMap("regional-istio"), map[string]any{"values": "vmrules: {}\n"}))
	results := mustInstantiate(t, istio, cluster, cds)
	want := []string{"prometheus-operator-crds", "opentelemetry-operator", "kof-operators", "victoria-metrics-operator", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}
	if got := serviceNames(results); !cmp.Equal(got, want) {
		t.Fatalf("Istio services = %v, want %v", got, want)
	}
	checkLayer2Texts(t, istio, cluster, cds)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/regional-istio", golden)
	storage := rendered["kof-storage"].objects
	mustGet(t, storage, "Service", namespace, "regional-istio-vmauth")
	for _, kind := range []string{"HTTPRoute", "Gateway", "Ingress", "ClusterIssuer"} {
		if got := objNames(storage, kind); len(got) > 0 {
			t.Errorf("Istio storage renders %s %v", kind, got)
		}
	}
	env := envOf(t, rendered["kof-collectors"].values)
	wantSecret := names.VMUserSecret(names.AdminVMUserBase(kcmNamespace, "regional-istio"))
	if got := str(t, env[0], "valueFrom", "secretKeyRef", "name"); got != wantSecret {
		t.Errorf("collectors credentials Secret = %q, want the propagated %q", got, wantSecret)
	}
}

// TestRegionalRegionless renders regionless mode: one MCS selecting the management cluster with self-management,
// never a regional cluster, whose storage is published at the regionless domain.
func TestRegionalRegionless(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional", files: []string{chartDir("kof-regional") + "/ci/02-regionless-values.yaml"}})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-regional-cluster"}) {
		t.Fatalf("MCS names = %v", got)
	}
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	spec := specOf(t, mcs)
	if !spec.ServiceSpec.Provider.SelfManagement {
		t.Error("regionless MCS must set provider.selfManagement")
	}
	cds := loadObjects(t, "clusters/standard.yaml")
	if selects(t, mcs, deployment(t, cds, "regional-1").GetLabels()) {
		t.Error("regionless MCS selects regional-1")
	}
	mgmt := sveltos.ManagementCluster(map[string]string{"k0rdent.mirantis.com/management-cluster": "true"})
	if !selects(t, mcs, mgmt.GetLabels()) {
		t.Fatal("regionless MCS does not select the management cluster")
	}
	base := names.AdminVMUserBase(kcmNamespace, "mothership")
	objects := append([]*unstructured.Unstructured{credentials(kcmNamespace, base, "mothership-admin-password")}, res.OfKind("ConfigMap")...)
	results := mustInstantiate(t, mcs, mgmt, objects)
	// KCM and the kof umbrella (kof-operators) already install cert-manager, the ingress controller and the
	// operators on the management cluster.
	if got := serviceNames(results); !cmp.Equal(got, []string{"kof-vmuser-credentials", "external-dns", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}) {
		t.Fatalf("regionless services = %v, want [kof-vmuser-credentials external-dns kof-storage ... kof-collectors opencost]", got)
	}
	wantExternalDNSValues(t, results, "aws", "external-dns-credentials", "mothership.kof.example.com", "gateway-httproute",
		"kof-mothership")
	checkLayer2Texts(t, mcs, mgmt, objects)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/regional-regionless", golden)
	storage := rendered["kof-storage"]
	if got := str(t, storage.values, "clusterName"); got != "mothership" {
		t.Errorf("clusterName = %q, want mothership", got)
	}
	route := mustGet(t, storage.objects, "HTTPRoute", namespace, "vmauth")
	if got := field(t, route.Object, "spec", "hostnames"); !cmp.Equal(got, []any{"vmauth.mothership.kof.example.com"}) {
		t.Errorf("HTTPRoute hostnames = %v", got)
	}
	if _, ok, _ := unstructured.NestedMap(mustGet(t, storage.objects, "VMAuth", namespace, "cluster").Object, "spec", "userNamespaceSelector"); ok {
		t.Error("regionless VMAuth must read the VMUsers of every namespace")
	}
	// The admin bundle stays in the KCM namespace; kof-vmuser-credentials copies it next to the collectors.
	wantCopiedSecret(t, results, rendered["kof-collectors"], names.VMUserSecret(base), "mothership-admin-password")
	// Regression (one owner): the storage's VMAlert `cluster` clashed with kof-mothership's on the management
	// cluster; the management cluster's rules are kof-mothership's, so the regionless storage renders none.
	absent(t, storage.objects, "VMAlert")
	if got := field(t, storage.values, "victoriametrics", "vmalert", "enabled"); got != false {
		t.Errorf("regionless victoriametrics.vmalert.enabled = %v, want false", got)
	}
}

// wantGatewayAPISwitches is the regression test of the Gateway API switches of a regional cluster: cert-manager's
// enableGatewayAPI and the VictoriaMetrics operator's VM_GATEWAY_API_ENABLED are on exactly when Envoy Gateway
// installs the Gateway API CRDs there (cert-manager refuses to start with the switch on and no CRDs; the operator's
// switch was never set).
func wantGatewayAPISwitches(t *testing.T, results []serviceResult, gateway bool) {
	t.Helper()
	if got := field(t, valuesOf(t, results, "cert-manager"), "config", "enableGatewayAPI"); got != gateway {
		t.Errorf("cert-manager config.enableGatewayAPI = %v, want %v", got, gateway)
	}
	env, _ := valuesOf(t, results, "victoria-metrics-operator")["env"].([]any)
	var on bool
	for _, e := range env {
		if m, _ := e.(map[string]any); m["name"] == "VM_GATEWAY_API_ENABLED" {
			on = m["value"] == "true"
		}
	}
	if on != gateway {
		t.Errorf("victoria-metrics-operator VM_GATEWAY_API_ENABLED on = %v (env %v), want %v", on, env, gateway)
	}
}

// TestRegionalBareCluster instantiates every regional service for a cluster object with no labels and no
// annotations: nothing fails, the storage renders with defaults and without a public endpoint.
func TestRegionalBareCluster(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional"})
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	bare := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "bare", "namespace": kcmNamespace},
	}}
	objects := []*unstructured.Unstructured{configMap(kcmNamespace, names.VMRulesConfigMap("bare"), map[string]any{"values": "vmrules: {}\n"})}
	results := mustInstantiate(t, mcs, bare, objects)
	_, rendered := layer2Golden(t, results)
	storage := rendered["kof-storage"]
	if got := str(t, storage.values, "domain"); got != "" {
		t.Errorf("domain = %q, want empty", got)
	}
	if got := objNames(storage.objects, "HTTPRoute"); len(got) > 0 {
		t.Errorf("HTTPRoute rendered without a domain: %v", got)
	}
	mustGet(t, storage.objects, "VMCluster", namespace, "cluster")
	// Without the gateway annotations the values name no Gateway: kof-storage's default storage-gateway applies.
	if gw, found, _ := unstructuredString(storage.values, "gateway", "name"); found {
		t.Errorf("gateway name = %q without an annotation, want none (the chart default)", gw)
	}
}

// TestRegionalMalformedAnnotation checks that a malformed kof-storage-values annotation fails that cluster alone
// with an error naming the annotation.
func TestRegionalMalformedAnnotation(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional"})
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "regional-bad", "namespace": kcmNamespace, "annotations": map[string]any{
			"k0rdent.mirantis.com/kof-storage-values": "{victoriametrics: [",
		}},
	}}
	objects := []*unstructured.Unstructured{configMap(kcmNamespace, names.VMRulesConfigMap("regional-bad"), map[string]any{"values": "vmrules: {}\n"})}
	_, err := instantiate(t, mcs, bad, objects, sveltos.DoublePass)
	if err == nil || !strings.Contains(err.Error(), "k0rdent.mirantis.com/kof-storage-values") || !strings.Contains(err.Error(), "regional-bad") {
		t.Fatalf("error = %v, want one naming the annotation and the cluster", err)
	}
	cds := loadObjects(t, "clusters/standard.yaml")
	mustInstantiate(t, mcs, capiCluster(t, deployment(t, cds, "regional-1")), regionalFixtures(t, cds))
}

// unstructuredString returns the string at path of m.
func unstructuredString(m map[string]any, path ...string) (string, bool, error) {
	return unstructured.NestedString(m, path...)
}

// envOf returns opentelemetry-kube-stack.defaultCRConfig.env of kof-collectors values.
func envOf(t testing.TB, values map[string]any) []map[string]any {
	t.Helper()
	raw, ok := field(t, values, "opentelemetry-kube-stack", "defaultCRConfig", "env").([]any)
	if !ok {
		t.Fatalf("defaultCRConfig.env is not a list")
	}
	out := make([]map[string]any, 0, len(raw))
	for _, e := range raw {
		m, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("env entry %v is not a map", e)
		}
		out = append(out, m)
	}
	return out
}

// envNames returns the names of env entries, in order.
func envNames(env []map[string]any) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		out = append(out, e["name"].(string))
	}
	return out
}

// TestRegionalIngressRegistry instantiates ci/03-ingress-storage for regional-1: ingress-nginx instead of Envoy
// Gateway, no version gate, the registry prefixed once to every storage and collector image after both layers,
// and the kof-regional `storage` values below the cluster's annotation.
func TestRegionalIngressRegistry(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional", files: []string{chartDir("kof-regional") + "/ci/03-ingress-storage-values.yaml"}})
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	if _, gated := specOf(t, mcs).ClusterSelector.MatchLabels["k0rdent.mirantis.com/kof-version"]; gated {
		t.Error("autoUpgrade: the selector must not require the version label")
	}
	cds := loadObjects(t, "clusters/standard.yaml")
	results := mustInstantiate(t, mcs, capiCluster(t, deployment(t, cds, "regional-1")), regionalFixtures(t, cds))
	want := []string{"prometheus-operator-crds", "opentelemetry-operator", "ingress-nginx", "cert-manager", "kof-operators", "victoria-metrics-operator", "external-dns", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}
	if got := serviceNames(results); !cmp.Equal(got, want) {
		t.Fatalf("services = %v, want %v", got, want)
	}
	wantGatewayAPISwitches(t, results, false)
	if got := str(t, valuesOf(t, results, "victoria-metrics-operator"), "global", "image", "registry"); got != "registry.example.com" {
		t.Errorf("victoria-metrics-operator global.image.registry = %q", got)
	}
	_, rendered := layer2Golden(t, results)
	storage := rendered["kof-storage"].objects
	mustGet(t, storage, "Ingress", namespace, "vmauth")
	absent(t, storage, "HTTPRoute", "Gateway")
	if got := str(t, mustGet(t, storage, "VMCluster", namespace, "cluster").Object, "spec", "retentionPeriod"); got != "90d" {
		t.Errorf("VMCluster retention = %q, want 90d (annotation over the storage values' 30d)", got)
	}
	for _, name := range []string{"kof-storage", "kof-collectors"} {
		for _, w := range workloads(rendered[name].objects) {
			if !strings.HasPrefix(w.image, "registry.example.com/") || strings.Count(w.image, "registry.example.com") != 1 {
				t.Errorf("%s: image %q not prefixed exactly once", w.where, w.image)
			}
		}
	}
	if got := field(t, rendered["kof-collectors"].values, "collectors", "node", "controlPlaneMetrics"); got != false {
		t.Errorf("collectors values from kof-regional lost: controlPlaneMetrics = %v", got)
	}
}

// TestRegionalRegionlessIstio checks scenario 04 at layer 2: regionless with the Istio namespace label renders only
// kof-istio-regional-cluster for the management cluster, with only kof-storage and kof-collectors, and its storage
// publishes the in-mesh Service mothership-vmauth that children write to.
func TestRegionalRegionlessIstio(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional", lookup: loadObjects(t, "clusters/namespace-istio.yaml"),
		values: map[string]any{"regionless": map[string]any{"enabled": true}}})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-istio-regional-cluster"}) {
		t.Fatalf("MCS names = %v, want [kof-istio-regional-cluster]", got)
	}
	mcs := mcsNamed(t, res, "kof-istio-regional-cluster")
	mgmt := sveltos.ManagementCluster(map[string]string{"k0rdent.mirantis.com/management-cluster": "true"})
	objects := []*unstructured.Unstructured{credentials(kcmNamespace, names.AdminVMUserBase(kcmNamespace, "mothership"), "mothership-admin-password")}
	results := mustInstantiate(t, mcs, mgmt, objects)
	if got := serviceNames(results); !cmp.Equal(got, []string{"kof-vmuser-credentials", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}) {
		t.Fatalf("services = %v", got)
	}
	_, rendered := layer2Golden(t, results)
	mustGet(t, rendered["kof-storage"].objects, "Service", namespace, "mothership-vmauth")
	absent(t, rendered["kof-storage"].objects, "HTTPRoute", "Gateway", "GatewayClass", "Ingress", "ClusterIssuer")
}

// wantExternalDNSValues checks the layer-2 values of the external-dns service (files/external-dns.tpl): the provider,
// the credentials Secret by name only (a read-only volume; for aws the credentials file on it), the cluster's domain
// as its only domain filter, the source of the cluster's VMAuth route and the cluster's own TXT owner ID.
func wantExternalDNSValues(t *testing.T, results []serviceResult, provider, secret, domain, source, owner string) {
	t.Helper()
	var values map[string]any
	for _, r := range results {
		if r.service.Name == "external-dns" {
			values = r.result.Values
		}
	}
	if values == nil {
		t.Fatal("no external-dns service")
	}
	want := map[string]any{
		"provider":          map[string]any{"name": provider},
		"sources":           []any{source},
		"domainFilters":     []any{domain},
		"txtOwnerId":        owner,
		"extraVolumes":      []any{map[string]any{"name": "kof-dns-credentials", "secret": map[string]any{"secretName": secret}}},
		"extraVolumeMounts": []any{map[string]any{"name": "kof-dns-credentials", "mountPath": "/etc/kof/external-dns", "readOnly": true}},
	}
	if provider == "aws" {
		want["env"] = []any{map[string]any{"name": "AWS_SHARED_CREDENTIALS_FILE", "value": "/etc/kof/external-dns/credentials"}}
	}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("external-dns values (-want +got):\n%s", diff)
	}
}
