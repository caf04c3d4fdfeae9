package remote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/names"
)

// nameInputs are cluster names covering the hashed-name edge cases: short, contract vectors, dotted, upper case and
// unicode, and names longer than the readable part of a base.
var nameInputs = []string{
	"c7",
	"child-adopted",
	"regional-adopted",
	"mothership",
	"eu.west.child.1",
	"Prod_Cluster",
	"clüster-ünicode",
	strings.Repeat("a", 63),
	"x" + strings.Repeat("-y", 31),
}

// refName returns the resource name of the templateResourceRef identifier of an MCS.
func refName(t *testing.T, mcs *unstructured.Unstructured, identifier string) string {
	t.Helper()
	for _, r := range specOf(t, mcs).ServiceSpec.TemplateResourceRefs {
		if r.Identifier == identifier {
			return r.Resource.Name
		}
	}
	t.Fatalf("MCS %s has no templateResourceRef %s", mcs.GetName(), identifier)
	return ""
}

// TestLayer1NameHelpers checks the charts' layer-1 name helpers against operator/names for every input:
// `kof.names.adminVMUserBase` (kof-child M2R, kof-regional regionless) and `kof.names.composed` (M2R ConfigMap).
func TestLayer1NameHelpers(t *testing.T) {
	for _, name := range nameInputs {
		child := renderChart(t, renderSpec{chart: "kof-child", values: map[string]any{
			"regionless":     map[string]any{"clusterName": name},
			"fromManagement": map[string]any{"toRegionalCluster": map[string]any{"name": "regional-1"}},
		}})
		mgmt := mcsNamed(t, child, "kof-mgmt-cluster")
		want := names.VMUserSecret(names.AdminVMUserBase(kcmNamespace, "regional-1"))
		if got := refName(t, mgmt, "VMUserCredentials"); got != want {
			t.Errorf("M2R credentials Secret %q, want %q", got, want)
		}
		m2r := renderChart(t, renderSpec{chart: "kof-child", values: map[string]any{
			"fromManagement": map[string]any{"toRegionalCluster": map[string]any{"name": name}},
		}})
		mgmt = mcsNamed(t, m2r, "kof-mgmt-cluster")
		want = names.VMUserSecret(names.AdminVMUserBase(kcmNamespace, name))
		if got := refName(t, mgmt, "VMUserCredentials"); got != want {
			t.Errorf("kof-child kof.names.adminVMUserBase(%q): Secret %q, want %q", name, got, want)
		}
		if got := refName(t, mgmt, "RegionalConfig"); got != names.RegionalConfigMap(name) {
			t.Errorf("kof.names.composed(kof-, %q) = %q, want %q", name, got, names.RegionalConfigMap(name))
		}
		regional := renderChart(t, renderSpec{chart: "kof-regional", values: map[string]any{
			"regionless": map[string]any{"enabled": true, "clusterName": name},
		}})
		want = names.VMUserSecret(names.AdminVMUserBase(kcmNamespace, name))
		if got := refName(t, mcsNamed(t, regional, "kof-regional-cluster"), "VMUserCredentials"); got != want {
			t.Errorf("kof.names.adminVMUserBase(%q): Secret %q, want %q", name, got, want)
		}
	}
}

// TestLayer2NameTemplates instantiates the child and regional MCSs for clusters of every input name: Sveltos must
// find the ConfigMaps and Secrets named by operator/names (both required), and the values must carry the same names.
func TestLayer2NameTemplates(t *testing.T) {
	childMCS := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-child"}), "kof-child-cluster")
	regionalMCS := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-regional"}), "kof-regional-cluster")
	for _, name := range nameInputs {
		cluster := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": name, "namespace": kcmNamespace},
		}}
		childBase := names.ChildVMUserBase(kcmNamespace, name)
		objects := []*unstructured.Unstructured{
			childConfig(kcmNamespace, name, "regional-1", "regional-1.kof.example.com"),
			credentials(kcmNamespace, childBase, "pw-"+name),
		}
		results, err := instantiate(t, childMCS, cluster, objects, sveltos.DoublePass)
		if err != nil {
			t.Errorf("child %q: %v", name, err)
			continue
		}
		values := valuesOf(t, results, "kof-collectors")
		if got := str(t, values, "kof", "credentials", "secretName"); got != names.VMUserSecret(childBase) {
			t.Errorf("child %q: secretName %q, want %q", name, got, names.VMUserSecret(childBase))
		}
		if copied := results[2].objects; len(copied) != 0 {
			t.Errorf("child %q: credentials copied without the chart's ConfigMap: %v", name, copied)
		}

		adminSecret := names.VMUserSecret(names.AdminVMUserBase(kcmNamespace, name))
		objects = []*unstructured.Unstructured{
			configMap(kcmNamespace, names.VMRulesConfigMap(name), map[string]any{"values": "vmrules: {}\n"}),
		}
		results, err = instantiate(t, regionalMCS, cluster, objects, sveltos.DoublePass)
		if err != nil {
			t.Errorf("regional %q (vmrules ConfigMap %s): %v", name, names.VMRulesConfigMap(name), err)
			continue
		}
		env := envOf(t, valuesOf(t, results, "kof-collectors"))
		if got := str(t, env[0], "valueFrom", "secretKeyRef", "name"); got != adminSecret {
			t.Errorf("regional %q: admin Secret %q, want %q", name, got, adminSecret)
		}
	}
}

// TestIstioVMAuthNamesAgree is the regression test of an Istio regional whose name is over 56 characters: kof-storage
// cut its in-mesh Service name to `…-vm`, while the child's collectors wrote to `…-vmauth`. Both now use
// operator/names.IstioVMAuthService, for a 59-character name (hashed, suffix kept) and a short one (unchanged).
func TestIstioVMAuthNamesAgree(t *testing.T) {
	childMCS := mcsNamed(t, renderChart(t, renderSpec{chart: "kof-child", values: map[string]any{"istio": map[string]any{"enabled": true}}}), "kof-istio-child-cluster")
	for _, regional := range []string{"regional-" + strings.Repeat("x", 50), "regional-istio"} {
		want := names.IstioVMAuthService(regional)
		if !strings.HasSuffix(want, "-vmauth") || !names.IsDNSLabel(want) {
			t.Fatalf("names.IstioVMAuthService(%q) = %q", regional, want)
		}
		storage := renderChart(t, renderSpec{chart: "kof-storage", values: map[string]any{
			"clusterName": regional, "istio": map[string]any{"enabled": true},
		}})
		if got := objNames(storage, "Service"); !cmp.Equal(got, []string{want}) {
			t.Errorf("kof-storage in-mesh Services of %q = %v, want [%s]", regional, got, want)
		}
		cluster := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "child-istio", "namespace": kcmNamespace},
		}}
		objects := []*unstructured.Unstructured{
			childConfig(kcmNamespace, "child-istio", regional, "unused.example.com"),
			credentials(kcmNamespace, names.ChildVMUserBase(kcmNamespace, "child-istio"), "pw"),
		}
		values := valuesOf(t, mustInstantiate(t, childMCS, cluster, objects), "kof-collectors")
		if got := str(t, values, "kof", "metrics", "endpoint"); got != "http://"+want+":8427/vm/insert/0/prometheus/api/v1/write" {
			t.Errorf("child of %q writes metrics to %q, want the in-mesh Service %s", regional, got, want)
		}
	}
}
