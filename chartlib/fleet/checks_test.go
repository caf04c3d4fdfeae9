package fleet

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/manifest"
)

// checkedFleet renders a regional cluster and a child with the default umbrella; every test plants one violation
// in a fresh copy and runs the checks again.
func checkedFleet(t *testing.T, values map[string]any) *Fleet {
	t.Helper()
	f := renderFleet(t, Options{Values: values, Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"), child("c1", "us-east-2", nil),
	}})
	for _, c := range f.Clusters {
		if len(c.Findings) > 0 {
			t.Fatalf("the unplanted fleet has findings on %s: %v", c.Name, c.Findings)
		}
	}
	return f
}

// findings returns the findings of check on cluster name.
func findings(f *Fleet, cluster, check string) []Finding {
	var out []Finding
	for _, fd := range f.Cluster(cluster).Findings {
		if fd.Check == check {
			out = append(out, fd)
		}
	}
	return out
}

// wantFinding fails unless cluster has exactly one finding of check whose text holds every part.
func wantFinding(t *testing.T, f *Fleet, cluster, check string, parts ...string) {
	t.Helper()
	got := findings(f, cluster, check)
	if len(got) != 1 {
		t.Fatalf("%s findings on %s = %v, want one", check, cluster, got)
	}
	for _, p := range parts {
		if !strings.Contains(got[0].String(), p) {
			t.Errorf("finding %q does not say %q", got[0], p)
		}
	}
	if got[0].Fix == "" {
		t.Errorf("finding %q names no fix", got[0])
	}
	if !f.Cluster(cluster).Failed() {
		t.Errorf("cluster %s with a %s finding does not fail", cluster, check)
	}
}

// withObjects returns s's objects plus extra, as the set s renders.
func withObjects(s *Service, extra ...*unstructured.Unstructured) *manifest.Set {
	var objs []manifest.Object
	for _, o := range s.Objects.Entries() {
		objs = append(objs, o)
	}
	for _, o := range extra {
		objs = append(objs, manifest.Object{Unstructured: o, Source: "planted"})
	}
	return manifest.New(objs...)
}

// object returns the first object of kind in s.
func object(t *testing.T, s *Service, kind string) *unstructured.Unstructured {
	t.Helper()
	objs := s.Objects.OfKind(kind)
	if len(objs) == 0 {
		t.Fatalf("service %s renders no %s", s.Name, kind)
	}
	return objs[0]
}

func TestCheckOneOwnerFailsOnAPlantedDuplicate(t *testing.T) {
	f := checkedFleet(t, nil)
	r1 := f.Cluster("r1")
	storage, collectors := r1.Service("kof-storage"), r1.Service("kof-collectors")
	collectors.Objects = withObjects(collectors, object(t, storage, "VMCluster").DeepCopy())
	f.Check()
	wantFinding(t, f, "r1", CheckOneOwner, "VMCluster.operator.victoriametrics.com kof/cluster", "kof/kof-storage", "kof/kof-collectors")

	// A cluster-scoped object with a namespace set in one copy is still one object of the cluster.
	f = checkedFleet(t, nil)
	r1 = f.Cluster("r1")
	issuer := object(t, r1.Service("kof-storage"), "ClusterIssuer").DeepCopy()
	issuer.SetNamespace("somewhere")
	r1.Service("kof-collectors").Objects = withObjects(r1.Service("kof-collectors"), issuer)
	f.Check()
	wantFinding(t, f, "r1", CheckOneOwner, "ClusterIssuer.cert-manager.io kof-issuer", "on the cluster")
}

func TestCheckInstallableFailsOnAKindWithoutCRD(t *testing.T) {
	f := checkedFleet(t, nil)
	c1 := f.Cluster("c1")
	foo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "kof"}}}
	c1.Service("kof-collectors").Objects = withObjects(c1.Service("kof-collectors"), foo)
	f.Check()
	wantFinding(t, f, "c1", CheckInstallable, "Widget.example.com", "served by no CRD")
}

func TestCheckInstallableFailsOnAServiceBeforeItsCRDs(t *testing.T) {
	f := checkedFleet(t, nil)
	storage := f.Cluster("r1").Service("kof-storage")
	storage.DependsOn = nil
	f.Check()
	got := findings(f, "r1", CheckInstallable)
	if len(got) == 0 {
		t.Fatal("kof-storage without dependsOn: no installable finding")
	}
	for _, fd := range got {
		if fd.Service != "kof-storage" || !strings.Contains(fd.Message, "does not wait for") {
			t.Errorf("finding %q, want kof-storage not waiting for the operator that installs its CRDs", fd)
		}
	}
}

func TestCheckInstallableFailsOnAMissingClass(t *testing.T) {
	f := checkedFleet(t, nil)
	storage := f.Cluster("r1").Service("kof-storage")
	gw := object(t, storage, "Gateway")
	if err := unstructured.SetNestedField(gw.Object, "no-such-class", "spec", "gatewayClassName"); err != nil {
		t.Fatal(err)
	}
	f.Check()
	wantFinding(t, f, "r1", CheckInstallable, "spec.gatewayClassName names GatewayClass no-such-class")
}

// mcsService returns service name of the MultiClusterService mcs rendered on the management cluster.
func mcsService(t *testing.T, f *Fleet, mcs, name string) map[string]any {
	t.Helper()
	for _, s := range f.Cluster("mgmt").Services {
		if s.Objects == nil {
			continue
		}
		if o := s.Objects.Get("MultiClusterService", "", mcs); o != nil {
			svcs, _, _ := unstructured.NestedSlice(o.Object, "spec", "serviceSpec", "services")
			for i, sv := range svcs {
				if m := sv.(map[string]any); m["name"] == name {
					// NestedSlice copies: write the service back through the object.
					return liveService(o, i)
				}
			}
		}
	}
	t.Fatalf("no service %s in MultiClusterService %s", name, mcs)
	return nil
}

// liveService returns service i of MCS o, the map held by o itself.
func liveService(o *unstructured.Unstructured, i int) map[string]any {
	spec := o.Object["spec"].(map[string]any)["serviceSpec"].(map[string]any)
	return spec["services"].([]any)[i].(map[string]any)
}

func TestCheckWaitsFailsOnAServiceWithoutWait(t *testing.T) {
	f := checkedFleet(t, nil)
	delete(mcsService(t, f, "kof-regional-cluster", "kof-storage"), "helmOptions")
	f.Check()
	wantFinding(t, f, "mgmt", CheckWaits, "MultiClusterService kof-regional-cluster", "kof/kof-storage has no helmOptions.wait")

	f = checkedFleet(t, nil)
	mcsService(t, f, "kof-child-cluster", "kof-collectors")["dependsOn"] = []any{map[string]any{"name": "nothing", "namespace": "kof"}}
	f.Check()
	wantFinding(t, f, "mgmt", CheckWaits, "dependsOn kof/nothing, which is no service of this MultiClusterService")
}

func TestCheckUpgradesFailsOnAnUpgradeWithoutVersion(t *testing.T) {
	f := checkedFleet(t, nil)
	var chain *unstructured.Unstructured
	for _, o := range f.Cluster("mgmt").Service("kof-mothership").Objects.OfKind("ServiceTemplateChain") {
		if o.GetName() == "kof-storage-2-0-0" {
			chain = o
		}
	}
	if chain == nil {
		t.Fatal("no ServiceTemplateChain kof-storage-2-0-0")
	}
	supported := []any{
		map[string]any{"name": "kof-storage-2-0-0"},
		map[string]any{"name": "kof-storage-1-0-0", "availableUpgrades": []any{map[string]any{"name": "kof-storage-2-0-0"}}},
	}
	if err := unstructured.SetNestedSlice(chain.Object, supported, "spec", "supportedTemplates"); err != nil {
		t.Fatal(err)
	}
	f.Check()
	got := findings(f, "mgmt", CheckUpgrades)
	var texts []string
	for _, fd := range got {
		texts = append(texts, fd.String())
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{`availableUpgrades[0] is {name: "kof-storage-2-0-0", version: ""}`,
		"spec.supportedTemplates[1] names ServiceTemplate kof-storage-1-0-0, which does not exist"} {
		if !strings.Contains(all, want) {
			t.Errorf("upgrades findings do not say %q:\n%s", want, all)
		}
	}
}

func TestCheckSecretsFailsOnAPasswordInValues(t *testing.T) {
	f := checkedFleet(t, nil)
	collectors := f.Cluster("c1").Service("kof-collectors")
	collectors.Values["kof"].(map[string]any)["credentials"].(map[string]any)["password"] = OfflinePassword
	f.Check()
	wantFinding(t, f, "c1", CheckSecrets, "service kof-collectors: values", "data.password of Secret kcm-system/kof-vmuser-creds-c1-",
		"secretKeyRef")
}
