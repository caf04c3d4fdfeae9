package remote

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/operator/names"
)

// The merge order of every service's values (docs/values-contract.md): shared keys < computed < chart values <
// scalar annotations < values annotations. These tests are the regression tests of scalar annotations losing to
// chart-wide values (a cluster annotated `kof-storage-class: slow` got every volume `fast` when
// `kof-regional.values.storage.storageClass` was `fast`), one table row per annotation key, in both charts.

// annotatedCluster returns the CAPI Cluster Sveltos shows for a cluster named name with the given annotations,
// as KCM copies them from spec.config.clusterAnnotations.
func annotatedCluster(name string, annotations map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": kcmNamespace, "annotations": annotations},
	}}
}

// withDeploymentAnnotations returns a ClusterDeployment of name whose metadata carries annotations.
func withDeploymentAnnotations(name string, annotations map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
		"metadata": map[string]any{"name": name, "namespace": kcmNamespace, "annotations": annotations},
	}}
}

// volumeClasses returns the storage class of every volume a kof-storage render asks for: vmstorage, both VLClusters'
// vlstorage and the VTCluster's storage.
func volumeClasses(t *testing.T, res *render.Result) map[string]string {
	t.Helper()
	claim := []string{"storage", "volumeClaimTemplate", "spec", "storageClassName"}
	out := map[string]string{}
	for _, v := range []struct{ kind, name, part string }{
		{"VMCluster", "cluster", "vmstorage"}, {"VLCluster", "logs", "vlstorage"},
		{"VLCluster", "audit-logs", "vlstorage"}, {"VTCluster", "traces", "storage"},
	} {
		o := mustGet(t, res, v.kind, namespace, v.name)
		out[v.kind+"/"+v.name] = str(t, o.Object, append([]string{"spec", v.part}, claim...)...)
	}
	return out
}

// TestRegionalAnnotationsWin instantiates the regional MCS (chart-wide storage, collectors and operator values set)
// for a cluster with one annotation at a time, and checks the annotation's value reaches the rendered objects.
func TestRegionalAnnotationsWin(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-regional", values: map[string]any{
		"storage": map[string]any{
			"storageClass": "fast", "certEmail": "chart@example.com", "domain": "chart.example.com",
			"gateway":         map[string]any{"name": "chart-gateway", "namespace": "chart-ns"},
			"victoriametrics": map[string]any{"vmcluster": map[string]any{"spec": map[string]any{"retentionPeriod": "7d"}}},
		},
		"collectors":              map[string]any{"opentelemetry-kube-stack": map[string]any{"clusterName": "chart-name"}},
		"operators":               map[string]any{"values": map[string]any{"global": map[string]any{"registry": "chart.example.com"}}},
		"victoriaMetricsOperator": map[string]any{"values": map[string]any{"replicaCount": 1}},
		"envoyGateway":            map[string]any{"values": map[string]any{"deployment": map[string]any{"replicas": 1}}},
	}})
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	const k = "k0rdent.mirantis.com/"
	cases := []struct {
		annotation, value string
		check             func(t *testing.T, r []serviceResult, storage *render.Result)
	}{
		{k + "kof-storage-class", "slow", func(t *testing.T, _ []serviceResult, s *render.Result) {
			for vol, class := range volumeClasses(t, s) {
				if class != "slow" {
					t.Errorf("%s storage class = %q, want slow (annotation over storage.storageClass fast)", vol, class)
				}
			}
		}},
		{k + "kof-cert-email", "cluster@example.com", func(t *testing.T, _ []serviceResult, s *render.Result) {
			if got := str(t, mustGet(t, s, "ClusterIssuer", "", "kof-issuer").Object, "spec", "acme", "email"); got != "cluster@example.com" {
				t.Errorf("ClusterIssuer email = %q, want cluster@example.com", got)
			}
		}},
		{k + "kof-gateway-name", "cluster-gateway", func(t *testing.T, _ []serviceResult, s *render.Result) {
			mustGet(t, s, "Gateway", "chart-ns", "cluster-gateway")
		}},
		{k + "kof-gateway-namespace", "cluster-ns", func(t *testing.T, _ []serviceResult, s *render.Result) {
			mustGet(t, s, "Gateway", "cluster-ns", "chart-gateway")
		}},
		{k + "kof-regional-domain", "cluster.example.com", func(t *testing.T, _ []serviceResult, s *render.Result) {
			route := mustGet(t, s, "HTTPRoute", namespace, "vmauth")
			if got := field(t, route.Object, "spec", "hostnames").([]any); len(got) != 1 || got[0] != "vmauth.cluster.example.com" {
				t.Errorf("HTTPRoute hostnames = %v, want vmauth.cluster.example.com", got)
			}
		}},
		{k + "kof-storage-values", `{"storageClass":"fastest","victoriametrics":{"vmcluster":{"spec":{"retentionPeriod":"90d"}}}}`,
			func(t *testing.T, _ []serviceResult, s *render.Result) {
				if got := str(t, mustGet(t, s, "VMCluster", namespace, "cluster").Object, "spec", "retentionPeriod"); got != "90d" {
					t.Errorf("VMCluster retention = %q, want 90d", got)
				}
			}},
		{k + "kof-collectors-values", `{"opentelemetry-kube-stack":{"clusterName":"annotated"}}`, func(t *testing.T, r []serviceResult, _ *render.Result) {
			if got := str(t, valuesOf(t, r, "kof-collectors"), "opentelemetry-kube-stack", "clusterName"); got != "annotated" {
				t.Errorf("collectors clusterName = %q, want annotated", got)
			}
		}},
		{k + "kof-operators-values", `{"global":{"registry":"cluster.example.com"}}`, func(t *testing.T, r []serviceResult, _ *render.Result) {
			if got := str(t, valuesOf(t, r, "kof-operators"), "global", "registry"); got != "cluster.example.com" {
				t.Errorf("kof-operators global.registry = %q, want cluster.example.com", got)
			}
		}},
		{k + "kof-victoria-metrics-operator-values", `{"replicaCount":2}`, func(t *testing.T, r []serviceResult, _ *render.Result) {
			if got := field(t, valuesOf(t, r, "victoria-metrics-operator"), "replicaCount"); got != float64(2) {
				t.Errorf("victoria-metrics-operator replicaCount = %v, want 2", got)
			}
		}},
		{k + "kof-envoy-gateway-values", `{"deployment":{"replicas":3}}`, func(t *testing.T, r []serviceResult, _ *render.Result) {
			if got := field(t, valuesOf(t, r, "envoy-gateway"), "deployment", "replicas"); got != float64(3) {
				t.Errorf("envoy-gateway deployment.replicas = %v, want 3", got)
			}
		}},
	}
	for _, c := range cases {
		for _, where := range []string{"clusterAnnotations", "ClusterDeployment metadata"} {
			t.Run(c.annotation[len(k):]+" in "+where, func(t *testing.T) {
				name := "regional-a"
				ann := map[string]any{c.annotation: c.value}
				cluster := annotatedCluster(name, ann)
				objects := []*unstructured.Unstructured{configMap(kcmNamespace, names.VMRulesConfigMap(name), map[string]any{"values": "vmrules: {}\n"})}
				if where != "clusterAnnotations" {
					// The variant: the annotation on the ClusterDeployment's metadata, and a different value in
					// clusterAnnotations, which the metadata beats.
					cluster = annotatedCluster(name, map[string]any{c.annotation: "overridden-" + c.value})
					objects = append(objects, withDeploymentAnnotations(name, ann))
				}
				if c.annotation != k+"kof-regional-domain" {
					ann := cluster.GetAnnotations()
					if _, ok := ann[k+"kof-regional-domain"]; !ok {
						ann[k+"kof-regional-domain"] = "regional-a.example.com"
						cluster.SetAnnotations(ann)
					}
				}
				results := mustInstantiate(t, mcs, cluster, objects)
				storage := renderChart(t, renderSpec{chart: "kof-storage", values: valuesOf(t, results, "kof-storage")})
				c.check(t, results, storage)
			})
		}
	}
}

// TestChildAnnotationsWin instantiates the child MCS (chart-wide collectors endpoints set) and the M2M MCS
// (chart-wide storage class) for a cluster with one annotation at a time: each write endpoint annotation, the
// collectors values annotation over a write endpoint annotation, and the storage class of the M2M storage.
func TestChildAnnotationsWin(t *testing.T) {
	chartWide := map[string]any{}
	for _, signal := range []string{"metrics", "logs", "auditLogs", "traces"} {
		chartWide[signal] = map[string]any{"endpoint": "https://chart.example.com/" + signal}
	}
	res := renderChart(t, renderSpec{chart: "kof-child", values: map[string]any{
		"collectors":     map[string]any{"kof": chartWide},
		"storage":        map[string]any{"storageClass": "fast"},
		"fromManagement": map[string]any{"toManagementCluster": map[string]any{"enabled": true}},
	}})
	child := mcsNamed(t, res, "kof-child-cluster")
	const k = "k0rdent.mirantis.com/"
	for _, c := range []struct{ annotation, signal string }{
		{k + "kof-write-metrics-endpoint", "metrics"},
		{k + "kof-write-logs-endpoint", "logs"},
		{k + "kof-write-audit-logs-endpoint", "auditLogs"},
		{k + "kof-write-traces-endpoint", "traces"},
	} {
		t.Run(c.annotation[len(k):], func(t *testing.T) {
			url := "https://annotated.example.com/" + c.signal
			cluster := annotatedCluster("child-a", map[string]any{c.annotation: url})
			objects := []*unstructured.Unstructured{
				childConfig(kcmNamespace, "child-a", "regional-1", "regional-1.kof.example.com"),
				credentials(kcmNamespace, names.ChildVMUserBase(kcmNamespace, "child-a"), "pw"),
			}
			values := valuesOf(t, mustInstantiate(t, child, cluster, objects), "kof-collectors")
			for signal, ep := range chartWide {
				want := ep.(map[string]any)["endpoint"]
				if signal == c.signal {
					want = url
				}
				if got := str(t, values, "kof", signal, "endpoint"); got != want {
					t.Errorf("%s endpoint = %q, want %q", signal, got, want)
				}
			}
			// The values annotation beats the scalar one.
			cluster = annotatedCluster("child-a", map[string]any{c.annotation: url,
				k + "kof-collectors-values": `{"kof":{"` + c.signal + `":{"endpoint":"https://values.example.com"}}}`})
			values = valuesOf(t, mustInstantiate(t, child, cluster, objects), "kof-collectors")
			if got := str(t, values, "kof", c.signal, "endpoint"); got != "https://values.example.com" {
				t.Errorf("%s endpoint = %q, want the kof-collectors-values annotation's", c.signal, got)
			}
		})
	}
	t.Run("kof-storage-class on the management cluster (M2M)", func(t *testing.T) {
		mgmt := mcsNamed(t, res, "kof-mgmt-cluster")
		cluster := annotatedCluster("mgmt", map[string]any{k + "kof-storage-class": "slow"})
		storage := renderChart(t, renderSpec{chart: "kof-storage", values: valuesOf(t, mustInstantiate(t, mgmt, cluster, nil), "kof-storage")})
		for _, v := range []struct{ kind, name, part string }{{"VLCluster", "logs", "vlstorage"}, {"VTCluster", "traces", "storage"}} {
			o := mustGet(t, storage, v.kind, namespace, v.name)
			if got := str(t, o.Object, "spec", v.part, "storage", "volumeClaimTemplate", "spec", "storageClassName"); got != "slow" {
				t.Errorf("%s %s storage class = %q, want slow (annotation over storage.storageClass fast)", v.kind, v.name, got)
			}
		}
	})
}
