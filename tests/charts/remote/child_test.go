package remote

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/names"
)

// childFixtures returns the management-cluster objects the child MCS reads for the clusters of cds bound to
// regional: each child's ClusterDeployment, ChildConfig and VMUser credentials, as the KOF operator writes them.
func childFixtures(cds []*unstructured.Unstructured, regional, domain string, children ...string) []*unstructured.Unstructured {
	objs := append([]*unstructured.Unstructured{}, cds...)
	for _, c := range children {
		objs = append(objs,
			childConfig(kcmNamespace, c, regional, domain),
			credentials(kcmNamespace, names.ChildVMUserBase(kcmNamespace, c), c+"-password"))
	}
	return objs
}

// collectorSpecs returns the OpenTelemetryCollectors of a rendered kof-collectors, failing when there are none.
func collectorSpecs(t testing.TB, res *render.Result) []*unstructured.Unstructured {
	t.Helper()
	cols := res.OfKind("OpenTelemetryCollector")
	if len(cols) == 0 {
		t.Fatal("no OpenTelemetryCollector rendered")
	}
	return cols
}

// exporterEndpoints returns exporter name → write URL of a collector's config: `endpoint`, or the full-URL
// `logs_endpoint` / `traces_endpoint` of otlphttp exporters.
func exporterEndpoints(t testing.TB, col *unstructured.Unstructured) map[string]string {
	t.Helper()
	exporters, _, _ := unstructured.NestedMap(col.Object, "spec", "config", "exporters")
	out := map[string]string{}
	for name, e := range exporters {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		for _, key := range []string{"endpoint", "logs_endpoint", "traces_endpoint"} {
			if ep, ok := m[key].(string); ok {
				if _, dup := out[name]; dup {
					t.Errorf("collector %s exporter %s has more than one endpoint field", col.GetName(), name)
				}
				out[name] = ep
			}
		}
	}
	return out
}

// TestChildStandardCluster instantiates kof-child-cluster for child-1 (annotations in clusterAnnotations): the
// annotation renames the cluster and overrides the metrics endpoint, the others come from its ChildConfig; the env
// is FOO (annotation), KOF_VM_USER, KOF_VM_PASSWORD (secretKeyRef to the child's hashed Secret) and PKI_PATH, each
// once; the credentials are copied to the child.
func TestChildStandardCluster(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-child"})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-child-cluster"}) {
		t.Fatalf("with Istio off, MCS names = %v, want exactly [kof-child-cluster]", got)
	}
	mcs := mcsNamed(t, res, "kof-child-cluster")
	cds := loadObjects(t, "clusters/standard.yaml")
	child := deployment(t, cds, "child-1")
	if !selects(t, mcs, child.GetLabels()) || selects(t, mcs, deployment(t, cds, "regional-1").GetLabels()) {
		t.Fatal("kof-child-cluster must select child-1 and not regional-1")
	}
	objects := append(childFixtures(cds, "regional-1", "regional-1.kof.example.com", "child-1"), res.OfKind("ConfigMap")...)
	cluster := capiCluster(t, child)
	results := mustInstantiate(t, mcs, cluster, objects)
	if got := serviceNames(results); !cmp.Equal(got, []string{"prometheus-operator-crds", "opentelemetry-operator", "kof-vmuser-credentials", "kof-operators", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}) {
		t.Fatalf("services = %v", got)
	}
	checkLayer2Texts(t, mcs, cluster, objects)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/child-standard", golden)

	collectors := rendered["kof-collectors"]
	base := names.ChildVMUserBase(kcmNamespace, "child-1")
	secret := names.VMUserSecret(base)
	env := envOf(t, collectors.values)
	if got := envNames(env); !cmp.Equal(got, []string{"KOF_VM_USER", "KOF_VM_PASSWORD", "PKI_PATH", "FOO"}) {
		t.Errorf("env = %v, want KOF_VM_USER, KOF_VM_PASSWORD, PKI_PATH, FOO", got)
	}
	for _, e := range env[:2] {
		if got := str(t, e, "valueFrom", "secretKeyRef", "name"); got != secret {
			t.Errorf("%s secretKeyRef = %q, want %q", e["name"], got, secret)
		}
	}
	if got := str(t, collectors.values, "opentelemetry-kube-stack", "clusterName"); got != "renamed-child" {
		t.Errorf("clusterName = %q, want renamed-child (annotation)", got)
	}
	wantCopiedSecret(t, results, collectors, secret, "child-1-password")
	for _, col := range collectorSpecs(t, collectors.objects) {
		counts := map[string]int{}
		raw, _, _ := unstructured.NestedSlice(col.Object, "spec", "env")
		for _, e := range raw {
			counts[e.(map[string]any)["name"].(string)]++
		}
		for _, n := range []string{"FOO", "KOF_VM_USER", "KOF_VM_PASSWORD", "PKI_PATH"} {
			if counts[n] != 1 {
				t.Errorf("collector %s: env %s appears %d times, want once", col.GetName(), n, counts[n])
			}
		}
		eps := exporterEndpoints(t, col)
		want := map[string]string{
			"prometheusremotewrite": "https://vmauth.custom.example.com/vm/insert/0/prometheus/api/v1/write",
			"otlphttp/logs":         "https://vmauth.regional-1.kof.example.com/vli/insert/opentelemetry/v1/logs",
			"otlphttp/auditlogs":    "https://vmauth.regional-1.kof.example.com/vlai/insert/opentelemetry/v1/logs",
			"otlphttp/traces":       "https://vmauth.regional-1.kof.example.com/vti/insert/opentelemetry/v1/traces",
		}
		if diff := cmp.Diff(want, eps); diff != "" {
			t.Errorf("collector %s endpoints (-want +got):\n%s", col.GetName(), diff)
		}
	}
}

// wantCopiedSecret is the regression test of credentials in Helm values (a child's VMUser password reached it inside
// the kof-collectors values): the kof-vmuser-credentials service copies the management cluster's Secret name into
// the KOF namespace with the password as the API serves it (base64), while the collectors' values and objects carry
// the Secret's name only.
func wantCopiedSecret(t *testing.T, results []serviceResult, collectors *renderedService, name, password string) {
	t.Helper()
	var copied *unstructured.Unstructured
	for _, r := range results {
		if r.service.Name == "kof-vmuser-credentials" && len(r.objects) == 1 {
			copied = r.objects[0]
		}
	}
	if copied == nil {
		t.Fatalf("kof-vmuser-credentials deploys no single Secret: %v", results)
	}
	if copied.GetKind() != "Secret" || copied.GetName() != name || copied.GetNamespace() != namespace {
		t.Errorf("copied %s %s/%s, want Secret %s/%s", copied.GetKind(), copied.GetNamespace(), copied.GetName(), namespace, name)
	}
	if got := str(t, copied.Object, "data", "password"); got != base64.StdEncoding.EncodeToString([]byte(password)) {
		t.Errorf("copied data.password = %q, want the management Secret's base64 value", got)
	}
	if got := str(t, collectors.values, "kof", "credentials", "secretName"); got != name {
		t.Errorf("kof.credentials.secretName = %q, want %q", got, name)
	}
	vals, _ := json.Marshal(collectors.values)
	if strings.Contains(string(vals), password) {
		t.Errorf("the collectors' values carry the password: %s", vals)
	}
	if len(collectors.objects.OfKind("Secret")) != 0 {
		t.Errorf("kof-collectors renders Secrets %v; credentials reach the cluster through kof-vmuser-credentials", objNames(collectors.objects, "Secret"))
	}
}

// TestChildMalformedAnnotation checks that child-bad's malformed kof-collectors-values annotation fails that cluster
// alone, naming the annotation, while child-2 (no annotations) still renders.
func TestChildMalformedAnnotation(t *testing.T) {
	mcs := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-child"}), "kof-child-cluster")
	cds := loadObjects(t, "clusters/standard.yaml")
	objects := childFixtures(cds, "regional-1", "regional-1.kof.example.com", "child-bad", "child-2")
	_, err := instantiate(t, mcs, capiCluster(t, deployment(t, cds, "child-bad")), objects, sveltos.DoublePass)
	if err == nil || !strings.Contains(err.Error(), "k0rdent.mirantis.com/kof-collectors-values") {
		t.Fatalf("error = %v, want one naming k0rdent.mirantis.com/kof-collectors-values", err)
	}
	child2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "child-2", "namespace": kcmNamespace},
	}}
	results := mustInstantiate(t, mcs, child2, objects)
	if got := str(t, valuesOf(t, results, "kof-collectors"), "opentelemetry-kube-stack", "clusterName"); got != "child-2" {
		t.Errorf("child-2 clusterName = %q", got)
	}
}

// TestChildIstio renders Istio mode from the namespace label: two disjoint child MCSs; child-istio's collectors write
// to its regional's in-mesh VMAuth; the nested user collectors values (with a list) come out unchanged after both
// layers; tls.insecureSkipVerify reaches all four exporters.
func TestChildIstio(t *testing.T) {
	ns := loadObjects(t, "clusters/namespace-istio.yaml")
	res := renderChart(t, renderSpec{chart: "kof-child", lookup: ns, files: []string{chartDir("kof-child") + "/ci/03-istio-values.yaml"}})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-child-cluster", "kof-istio-child-cluster"}) {
		t.Fatalf("MCS names = %v", got)
	}
	std, istio := mcsNamed(t, res, "kof-child-cluster"), mcsNamed(t, res, "kof-istio-child-cluster")
	cds := append(loadObjects(t, "clusters/standard.yaml"), loadObjects(t, "clusters/istio.yaml")...)
	for _, cd := range cds {
		if selects(t, std, cd.GetLabels()) && selects(t, istio, cd.GetLabels()) {
			t.Errorf("%s is selected by both child MCS variants", cd.GetName())
		}
	}
	child := deployment(t, cds, "child-istio")
	if selects(t, std, child.GetLabels()) || !selects(t, istio, child.GetLabels()) {
		t.Fatal("child-istio must be selected by the Istio variant only")
	}
	objects := childFixtures(cds, "regional-istio", "regional-istio.kof.example.com", "child-istio")
	cluster := capiCluster(t, child)
	results := mustInstantiate(t, istio, cluster, objects)
	checkLayer2Texts(t, istio, cluster, objects)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/child-istio", golden)
	collectors := rendered["kof-collectors"]
	wantTolerations := []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}}
	if diff := cmp.Diff(wantTolerations, field(t, collectors.values, "collectors", "node", "tolerations")); diff != "" {
		t.Errorf("nested collectors values changed by layer 2 (-want +got):\n%s", diff)
	}
	node := mustGet(t, collectors.objects, "OpenTelemetryCollector", namespace, "kof-collectors-node")
	if diff := cmp.Diff(wantTolerations, field(t, node.Object, "spec", "tolerations")); diff != "" {
		t.Errorf("node collector tolerations (-want +got):\n%s", diff)
	}
	for _, col := range collectorSpecs(t, collectors.objects) {
		for name, ep := range exporterEndpoints(t, col) {
			if !strings.HasPrefix(ep, "http://regional-istio-vmauth:8427/") {
				t.Errorf("collector %s exporter %s writes to %q, want the in-mesh regional-istio-vmauth", col.GetName(), name, ep)
			}
			if v, _, _ := unstructured.NestedBool(col.Object, "spec", "config", "exporters", name, "tls", "insecure_skip_verify"); !v {
				t.Errorf("collector %s exporter %s: tls.insecure_skip_verify is not true", col.GetName(), name)
			}
		}
	}
}

// TestChildM2M renders M2M with the storage overrides of the "Storing KOF data" guide: kof-mgmt-cluster selects the
// management cluster with self-management; kof-storage (VictoriaMetrics off, promxy and multilevel on) gets traces
// retention 30d on example-ssd 100Gi and audit logs retention 1y; kof-collectors depends on it and gets PKI_PATH once.
func TestChildM2M(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-child", files: []string{chartDir("kof-child") + "/ci/01-m2m-values.yaml"}})
	mcs := mcsNamed(t, res, "kof-mgmt-cluster")
	if !specOf(t, mcs).ServiceSpec.Provider.SelfManagement {
		t.Error("kof-mgmt-cluster must set provider.selfManagement")
	}
	mgmt := sveltos.ManagementCluster(map[string]string{"k0rdent.mirantis.com/management-cluster": "true"})
	if !selects(t, mcs, mgmt.GetLabels()) {
		t.Fatal("kof-mgmt-cluster does not select the management cluster")
	}
	results := mustInstantiate(t, mcs, mgmt, nil)
	if got := serviceNames(results); !cmp.Equal(got, []string{"kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}) {
		t.Fatalf("services = %v", got)
	}
	var deps []string
	for _, d := range results[3].service.DependsOn {
		deps = append(deps, d.Name)
	}
	if want := []string{"kof-storage", "kube-state-metrics", "prometheus-node-exporter"}; !cmp.Equal(deps, want) {
		t.Errorf("kof-collectors dependsOn %v, want %v", deps, want)
	}
	checkLayer2Texts(t, mcs, mgmt, nil)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/child-m2m", golden)
	storage := rendered["kof-storage"].objects
	if got := objNames(storage, "VMCluster"); len(got) > 0 {
		t.Errorf("M2M storage renders VMCluster %v; the management cluster's own stores metrics", got)
	}
	mustGet(t, storage, "PromxyServerGroup", namespace, "promxy-server-group-mothership")
	vt := mustGet(t, storage, "VTCluster", namespace, "traces")
	if got := str(t, vt.Object, "spec", "storage", "retentionPeriod"); got != "30d" {
		t.Errorf("traces retention = %q, want 30d", got)
	}
	pvc := []string{"spec", "storage", "storage", "volumeClaimTemplate", "spec"}
	if got := str(t, vt.Object, append(pvc, "storageClassName")...); got != "example-ssd" {
		t.Errorf("traces storage class = %q", got)
	}
	if got := str(t, vt.Object, append(pvc, "resources", "requests", "storage")...); got != "100Gi" {
		t.Errorf("traces size = %q", got)
	}
	audit := mustGet(t, storage, "VLCluster", namespace, "audit-logs")
	if got := str(t, audit.Object, "spec", "vlstorage", "retentionPeriod"); got != "1y" {
		t.Errorf("audit logs retention = %q, want 1y", got)
	}
	auditPVC := []string{"spec", "vlstorage", "storage", "volumeClaimTemplate", "spec"}
	if got := str(t, audit.Object, append(auditPVC, "storageClassName")...); got != "example-ssd" {
		t.Errorf("audit logs storage class = %q", got)
	}
	env := envOf(t, rendered["kof-collectors"].values)
	if got := envNames(env); !cmp.Equal(got, []string{"PKI_PATH"}) {
		t.Errorf("M2M collectors env = %v, want [PKI_PATH]", got)
	}
	if got := str(t, env[0], "value"); got != "etc/kubernetes" {
		t.Errorf("PKI_PATH = %q, want etc/kubernetes", got)
	}
	for _, col := range collectorSpecs(t, rendered["kof-collectors"].objects) {
		if ep := exporterEndpoints(t, col)["otlphttp/traces"]; ep != "http://vtinsert-traces.kof:10481/insert/opentelemetry/v1/traces" {
			t.Errorf("collector %s traces endpoint = %q", col.GetName(), ep)
		}
	}
}

// TestChildM2R renders M2R: kof-mgmt-cluster installs only kof-collectors on the management cluster, writing to
// regional-1's endpoints with regional-1's admin credentials (the bundle the KOF operator keeps for every regional).
func TestChildM2R(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-child", files: []string{chartDir("kof-child") + "/ci/02-m2r-values.yaml"}})
	mcs := mcsNamed(t, res, "kof-mgmt-cluster")
	mgmt := sveltos.ManagementCluster(map[string]string{"k0rdent.mirantis.com/management-cluster": "true"})
	regionalCM := childConfig(kcmNamespace, "x", "regional-1", "regional-1.kof.example.com")
	regionalCM.SetName(names.RegionalConfigMap("regional-1"))
	base := names.AdminVMUserBase(kcmNamespace, "regional-1")
	objects := append([]*unstructured.Unstructured{regionalCM, credentials(kcmNamespace, base, "mothership-password")}, res.OfKind("ConfigMap")...)
	results := mustInstantiate(t, mcs, mgmt, objects)
	if got := serviceNames(results); !cmp.Equal(got, []string{"kof-vmuser-credentials", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}) {
		t.Fatalf("services = %v, want [kof-vmuser-credentials kof-collectors] (no storage on the management cluster)", got)
	}
	checkLayer2Texts(t, mcs, mgmt, objects)
	golden, rendered := layer2Golden(t, results)
	checkGoldenFiles(t, "layer2/child-m2r", golden)
	collectors := rendered["kof-collectors"]
	wantCopiedSecret(t, results, collectors, names.VMUserSecret(base), "mothership-password")
	for _, col := range collectorSpecs(t, collectors.objects) {
		for name, ep := range exporterEndpoints(t, col) {
			if !strings.HasPrefix(ep, "https://vmauth.regional-1.kof.example.com/") {
				t.Errorf("collector %s exporter %s writes to %q, want regional-1", col.GetName(), name, ep)
			}
		}
	}
	if got := str(t, collectors.values, "opentelemetry-kube-stack", "clusterName"); got != "mothership" {
		t.Errorf("clusterName = %q, want mothership", got)
	}
}

// TestChildM2MAndM2RConflict checks that M2M and M2R together fail with one message naming both keys.
func TestChildM2MAndM2RConflict(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof-child", values: map[string]any{
		"fromManagement": map[string]any{
			"toManagementCluster": map[string]any{"enabled": true},
			"toRegionalCluster":   map[string]any{"name": "regional-1"},
		},
	}})
	for _, key := range []string{"fromManagement.toManagementCluster.enabled", "fromManagement.toRegionalCluster.name"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name %s", err, key)
		}
	}
}

// TestChildValuesTypo checks scenario 14 at the chart: a misspelled fromManagement key fails schema validation,
// naming the key.
func TestChildValuesTypo(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof-child", values: map[string]any{
		"fromManagement": map[string]any{"toManagmentCluster": map[string]any{"enabled": true}},
	}})
	if !strings.Contains(err.Error(), "toManagmentCluster") {
		t.Errorf("error %q does not name the misspelled key", err)
	}
}

// TestChildNullRemovesExporter checks that `null` for a default exporter survives both layers: set in kof-child's
// `collectors` values or in a cluster's annotation, it removes the exporter and its pipeline from the collectors.
func TestChildNullRemovesExporter(t *testing.T) {
	nullTraces := map[string]any{"opentelemetry-kube-stack": map[string]any{"defaultCRConfig": map[string]any{
		"config": map[string]any{"exporters": map[string]any{"otlphttp/traces": nil}},
	}}}
	mcs := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-child", values: map[string]any{"collectors": nullTraces}}), "kof-child-cluster")
	annotated := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-child"}), "kof-child-cluster")
	cds := loadObjects(t, "clusters/standard.yaml")
	objects := childFixtures(cds, "regional-1", "regional-1.kof.example.com", "child-2")
	plain := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "child-2", "namespace": kcmNamespace},
	}}
	withAnnotation := plain.DeepCopy()
	withAnnotation.SetAnnotations(map[string]string{
		"k0rdent.mirantis.com/kof-collectors-values": `{"opentelemetry-kube-stack":{"defaultCRConfig":{"config":{"exporters":{"otlphttp/traces":null}}}}}`,
	})
	for name, c := range map[string]struct {
		mcs     *unstructured.Unstructured
		cluster *unstructured.Unstructured
	}{"helm values": {mcs, plain}, "annotation": {annotated, withAnnotation}} {
		_, rendered := layer2Golden(t, mustInstantiate(t, c.mcs, c.cluster, objects))
		for _, col := range collectorSpecs(t, rendered["kof-collectors"].objects) {
			if _, ok := exporterEndpoints(t, col)["otlphttp/traces"]; ok {
				t.Errorf("%s: collector %s still exports traces to KOF", name, col.GetName())
			}
			if _, ok, _ := unstructured.NestedMap(col.Object, "spec", "config", "service", "pipelines", "traces"); ok {
				t.Errorf("%s: collector %s keeps the traces pipeline without its exporter", name, col.GetName())
			}
			if _, ok := exporterEndpoints(t, col)["otlphttp/logs"]; !ok {
				t.Errorf("%s: collector %s lost the logs exporter", name, col.GetName())
			}
		}
	}
}

// TestChildRegionlessIstio checks scenario 04 for children: regionless with the Istio namespace label renders only
// kof-istio-child-cluster, selecting every child, whose collectors write to http://mothership-vmauth:8427/....
func TestChildRegionlessIstio(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-child", lookup: loadObjects(t, "clusters/namespace-istio.yaml"),
		values: map[string]any{"regionless": map[string]any{"enabled": true}}})
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, []string{"kof-istio-child-cluster"}) {
		t.Fatalf("MCS names = %v, want [kof-istio-child-cluster]", got)
	}
	mcs := mcsNamed(t, res, "kof-istio-child-cluster")
	cds := loadObjects(t, "clusters/standard.yaml")
	child := deployment(t, cds, "child-1")
	if !selects(t, mcs, child.GetLabels()) {
		t.Fatal("the regionless Istio MCS must select children without the istio-role label")
	}
	objects := childFixtures(cds, "mothership", "mothership.kof.example.com", "child-2")
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "child-2", "namespace": kcmNamespace},
	}}
	_, rendered := layer2Golden(t, mustInstantiate(t, mcs, cluster, objects))
	for _, col := range collectorSpecs(t, rendered["kof-collectors"].objects) {
		for name, ep := range exporterEndpoints(t, col) {
			if !strings.HasPrefix(ep, "http://mothership-vmauth:8427/") {
				t.Errorf("collector %s exporter %s writes to %q, want http://mothership-vmauth:8427/...", col.GetName(), name, ep)
			}
		}
	}
}
