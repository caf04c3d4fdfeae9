package remote

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// semantic holds the assertions of every golden case of TestChartGoldens, keyed `<chart>/<case>`; each case must
// have one, so that a regenerated golden never stands alone.
var semantic = map[string]func(t *testing.T, res *render.Result){
	"kof-storage/00-defaults":             checkStorageDefaults,
	"kof-storage/01-istio":                checkStorageIstio,
	"kof-storage/02-ingress-selfsigned":   checkStorageIngressSelfSigned,
	"kof-storage/03-m2m":                  checkStorageM2M,
	"kof-storage/04-registry-credentials": checkStorageRegistryCredentials,
	"kof-storage/05-grafana":              checkStorageGrafana,
	"kof-collectors/00-defaults":          checkCollectorsDefaults,
	"kof-collectors/01-cloudwatch":        checkCollectorsCloudWatch,
	"kof-collectors/02-child":             checkCollectorsChild,
	"kof-collectors/03-registry":          checkCollectorsRegistry,
	"kof-regional/00-defaults":            checkRegionalDefaults,
	"kof-regional/01-istio":               checkRegionalIstio,
	"kof-regional/02-regionless":          checkRegionalRegionless,
	"kof-regional/03-ingress-storage":     checkRegionalIngressStorage,
	"kof-regional/04-no-external-dns":     checkRegionalNoExternalDNS,
	"kof-regional/05-grafana":             checkRegionalGrafana,
	"kof-child/00-defaults":               checkChildDefaults,
	"kof-child/01-m2m":                    checkChildM2M,
	"kof-child/02-m2r":                    checkChildM2R,
	"kof-child/03-istio":                  checkChildIstio,
}

// regionalServices are the services kof-regional installs on a regional cluster, in order (Envoy Gateway, which
// brings the Gateway API CRDs, before cert-manager, whose Gateway API support watches them).
var regionalServices = []string{"prometheus-operator-crds", "opentelemetry-operator", "envoy-gateway", "cert-manager",
	"kof-operators", "victoria-metrics-operator", "external-dns", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}

// childServices are the services kof-child installs on a child cluster, in order (kof-vmuser-credentials copies
// the child's credentials Secret to it).
var childServices = []string{"prometheus-operator-crds", "opentelemetry-operator", "kof-vmuser-credentials", "kof-operators", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"}

// mgmtLabels are the labels of the SveltosCluster standing for the management cluster.
var mgmtLabels = map[string]string{"k0rdent.mirantis.com/management-cluster": "true"}

// specServices returns the service names of mcs, in order.
func specServices(t *testing.T, mcs *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, s := range specOf(t, mcs).ServiceSpec.Services {
		out = append(out, s.Name)
	}
	return out
}

// wantMCS fails the test unless res renders exactly the MultiClusterServices names, in order.
func wantMCS(t *testing.T, res *render.Result, names ...string) {
	t.Helper()
	if got := objNames(res, "MultiClusterService"); !cmp.Equal(got, names) {
		t.Fatalf("MultiClusterServices = %v, want %v", got, names)
	}
}

// wantServices fails the test unless mcs lists exactly the services want, in order.
func wantServices(t *testing.T, mcs *unstructured.Unstructured, want []string) {
	t.Helper()
	if got := specServices(t, mcs); !cmp.Equal(got, want) {
		t.Errorf("MCS %s services = %v, want %v", mcs.GetName(), got, want)
	}
}

// wantSelection fails the test unless mcs selects the ClusterDeployments in yes and none in no (names of
// clusters/standard.yaml and clusters/istio.yaml).
func wantSelection(t *testing.T, mcs *unstructured.Unstructured, yes, no []string) {
	t.Helper()
	cds := append(loadObjects(t, "clusters/standard.yaml"), loadObjects(t, "clusters/istio.yaml")...)
	for _, n := range yes {
		if !selects(t, mcs, deployment(t, cds, n).GetLabels()) {
			t.Errorf("MCS %s does not select %s", mcs.GetName(), n)
		}
	}
	for _, n := range no {
		if selects(t, mcs, deployment(t, cds, n).GetLabels()) {
			t.Errorf("MCS %s selects %s", mcs.GetName(), n)
		}
	}
}

// checkImagesFrom fails the test for every workload image of res that does not start with registry/.
func checkImagesFrom(t *testing.T, res *render.Result, registry string) {
	t.Helper()
	ws := workloads(res)
	if len(ws) == 0 {
		t.Fatal("no workloads")
	}
	for _, w := range ws {
		if !strings.HasPrefix(w.image, registry+"/") {
			t.Errorf("%s: image %q not from %s", w.where, w.image, registry)
		}
	}
}

// checkCollectorsDefaults checks the defaults: a node and a cluster collector writing to the local vmauth with
// basic auth, complete configs, control plane metrics scraped by the node collector, no KCM monitors.
func checkCollectorsDefaults(t *testing.T, res *render.Result) {
	if got := objNames(res, "OpenTelemetryCollector"); !cmp.Equal(got, []string{"kof-collectors-cluster", "kof-collectors-node"}) {
		t.Fatalf("collectors = %v", got)
	}
	for _, col := range collectorSpecs(t, res) {
		checkExtensions(t, col)
		for name, ep := range exporterEndpoints(t, col) {
			if !strings.HasPrefix(ep, "http://vmauth-cluster.kof:8427/") {
				t.Errorf("collector %s exporter %s writes to %q, want the local vmauth-cluster", col.GetName(), name, ep)
			}
		}
	}
	node := mustGet(t, res, "OpenTelemetryCollector", namespace, "kof-collectors-node")
	receivers, _, _ := unstructured.NestedStringSlice(node.Object, "spec", "config", "service", "pipelines", "metrics", "receivers")
	if !slices.Contains(receivers, "prometheus/controlplane") {
		t.Errorf("node metrics receivers %v lack prometheus/controlplane", receivers)
	}
	absent(t, res, "ServiceMonitor", "PodMonitor")
}

// checkCollectorsRegistry checks ci/03-registry: every image from the registry, the KCM monitors, and no control
// plane scrape when controlPlaneMetrics is off.
func checkCollectorsRegistry(t *testing.T, res *render.Result) {
	checkImagesFrom(t, res, "registry.example.com")
	mustGet(t, res, "ServiceMonitor", namespace, "kof-kcm-controller-manager")
	mustGet(t, res, "PodMonitor", namespace, "kof-kcm-sveltos")
	node := mustGet(t, res, "OpenTelemetryCollector", namespace, "kof-collectors-node")
	if _, ok, _ := unstructured.NestedMap(node.Object, "spec", "config", "receivers", "prometheus/controlplane"); ok {
		t.Error("controlPlaneMetrics: false still defines prometheus/controlplane")
	}
	receivers, _, _ := unstructured.NestedStringSlice(node.Object, "spec", "config", "service", "pipelines", "metrics", "receivers")
	if slices.Contains(receivers, "prometheus/controlplane") {
		t.Errorf("node metrics receivers %v still scrape the control plane", receivers)
	}
}

// checkRegionalDefaults checks the defaults: one MCS selecting regional clusters only, with every regional service.
func checkRegionalDefaults(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-regional-cluster")
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	wantServices(t, mcs, regionalServices)
	wantSelection(t, mcs, []string{"regional-1"}, []string{"child-1", "child-istio"})
	if specOf(t, mcs).ServiceSpec.Provider.SelfManagement {
		t.Error("kof-regional-cluster must not select the management cluster")
	}
}

// checkRegionalNoExternalDNS checks ci/04-no-external-dns: `external-dns.enabled: false` leaves only external-dns out.
func checkRegionalNoExternalDNS(t *testing.T, res *render.Result) {
	wantServices(t, mcsNamed(t, res, "kof-regional-cluster"), slices.DeleteFunc(slices.Clone(regionalServices),
		func(s string) bool { return s == "external-dns" }))
}

// checkRegionalGrafana checks ci/05-grafana: grafana-operator right before kof-storage (whose dependsOn names it)
// from its ServiceTemplate.
func checkRegionalGrafana(t *testing.T, res *render.Result) {
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	want := slices.Clone(regionalServices)
	i := slices.Index(want, "kof-storage")
	want = slices.Insert(want, i, "grafana-operator")
	wantServices(t, mcs, want)
	for _, svc := range specOf(t, mcs).ServiceSpec.Services {
		if svc.Name == "grafana-operator" && svc.Template != "grafana-operator-v5-18-0" {
			t.Errorf("grafana-operator template %q", svc.Template)
		}
		if svc.Name == "kof-storage" && (len(svc.DependsOn) == 0 || svc.DependsOn[0].Name != "grafana-operator") {
			t.Errorf("kof-storage dependsOn %v, want grafana-operator", svc.DependsOn)
		}
	}
}

// checkRegionalIstio checks ci/01-istio: both MCS variants with disjoint selectors; the Istio one installs neither
// cert-manager nor a gateway.
func checkRegionalIstio(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-istio-regional-cluster", "kof-regional-cluster")
	istio, std := mcsNamed(t, res, "kof-istio-regional-cluster"), mcsNamed(t, res, "kof-regional-cluster")
	wantSelection(t, istio, []string{"regional-istio"}, []string{"regional-1", "child-1"})
	wantSelection(t, std, []string{"regional-1"}, []string{"regional-istio", "child-1"})
	got := specServices(t, istio)
	for _, s := range []string{"cert-manager", "envoy-gateway", "ingress-nginx", "external-dns"} {
		if slices.Contains(got, s) {
			t.Errorf("Istio regional MCS installs %s (services %v)", s, got)
		}
	}
	if !slices.Contains(got, "kof-storage") || !slices.Contains(got, "kof-collectors") {
		t.Errorf("Istio regional MCS services %v lack kof-storage or kof-collectors", got)
	}
}

// checkRegionalRegionless checks ci/02-regionless: one MCS selecting the management cluster (and no regional
// cluster) through self-management, with the credentials copy, storage and collectors only (layer 2:
// TestRegionalRegionless).
func checkRegionalRegionless(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-regional-cluster")
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	if !specOf(t, mcs).ServiceSpec.Provider.SelfManagement {
		t.Fatal("regionless kof-regional-cluster must set provider.selfManagement")
	}
	if !selects(t, mcs, mgmtLabels) {
		t.Fatal("regionless kof-regional-cluster does not select the management cluster")
	}
	wantSelection(t, mcs, nil, []string{"regional-1", "child-1"})
	wantServices(t, mcs, []string{"kof-vmuser-credentials", "external-dns", "kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"})
}

// checkRegionalIngressStorage checks ci/03-ingress-storage: ingress-nginx instead of Envoy Gateway, and the
// registry and storage values reaching regional-1's kof-storage through layer 2.
func checkRegionalIngressStorage(t *testing.T, res *render.Result) {
	mcs := mcsNamed(t, res, "kof-regional-cluster")
	want := slices.Clone(regionalServices)
	want[slices.Index(want, "envoy-gateway")] = "ingress-nginx"
	wantServices(t, mcs, want)
	// regional-1 without its kof-storage-values annotations, which would override the chart's storage values.
	cds := loadObjects(t, "clusters/standard.yaml")
	regional := deployment(t, cds, "regional-1")
	regional.SetAnnotations(map[string]string{"k0rdent.mirantis.com/kof-regional-domain": "regional-1.kof.example.com"})
	if err := unstructured.SetNestedField(regional.Object, map[string]any{}, "spec", "config", "clusterAnnotations"); err != nil {
		t.Fatal(err)
	}
	results := mustInstantiate(t, mcs, capiCluster(t, regional), regionalFixtures(t, cds))
	storage := valuesOf(t, results, "kof-storage")
	if got := str(t, storage, "victoriametrics", "vmcluster", "spec", "retentionPeriod"); got != "30d" {
		t.Errorf("kof-storage VMCluster retention = %q, want 30d", got)
	}
	if got := str(t, storage, "global", "registry"); got != "registry.example.com" {
		t.Errorf("kof-storage global.registry = %q", got)
	}
	if v := field(t, valuesOf(t, results, "kof-collectors"), "collectors", "node", "controlPlaneMetrics"); v != false {
		t.Errorf("kof-collectors controlPlaneMetrics = %v, want false", v)
	}
}

// checkChildDefaults checks the defaults: one MCS selecting child clusters only, with the child services.
func checkChildDefaults(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-child-cluster")
	mcs := mcsNamed(t, res, "kof-child-cluster")
	wantServices(t, mcs, childServices)
	wantSelection(t, mcs, []string{"child-1"}, []string{"regional-1", "regional-istio"})
}

// checkChildM2M checks ci/01-m2m: a kof-mgmt-cluster MCS beside the child one, selecting the management cluster
// through self-management with storage then collectors.
func checkChildM2M(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-child-cluster", "kof-mgmt-cluster")
	mcs := mcsNamed(t, res, "kof-mgmt-cluster")
	if !specOf(t, mcs).ServiceSpec.Provider.SelfManagement || !selects(t, mcs, mgmtLabels) {
		t.Error("kof-mgmt-cluster must select the management cluster through self-management")
	}
	wantServices(t, mcs, []string{"kof-storage", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"})
	wantSelection(t, mcs, nil, []string{"child-1", "regional-1"})
}

// checkChildM2R checks ci/02-m2r: kof-mgmt-cluster installs only the collectors on the management cluster.
func checkChildM2R(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-child-cluster", "kof-mgmt-cluster")
	mcs := mcsNamed(t, res, "kof-mgmt-cluster")
	if !selects(t, mcs, mgmtLabels) {
		t.Error("kof-mgmt-cluster does not select the management cluster")
	}
	wantServices(t, mcs, []string{"kof-vmuser-credentials", "kube-state-metrics", "prometheus-node-exporter", "kof-collectors", "opencost"})
}

// checkChildIstio checks ci/03-istio: both child MCS variants, no cluster selected by both, the Istio child by the
// Istio variant only.
func checkChildIstio(t *testing.T, res *render.Result) {
	wantMCS(t, res, "kof-child-cluster", "kof-istio-child-cluster")
	std, istio := mcsNamed(t, res, "kof-child-cluster"), mcsNamed(t, res, "kof-istio-child-cluster")
	wantSelection(t, std, []string{"child-1"}, []string{"child-istio"})
	wantSelection(t, istio, []string{"child-istio"}, []string{"child-1", "regional-1"})
	wantServices(t, istio, childServices)
}
