package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/internal/harness"
)

// The KOF CRDs the kof-mothership chart installs from crds/ (Helm's keep policy: never deleted on uninstall).
var kofCRDs = []string{"promxyservergroups.kof.k0rdent.mirantis.com", "vmstorageconnections.kof.k0rdent.mirantis.com"}

const (
	regionalWrite  = "https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write"
	mothershipLogs = "https://vmauth.mothership.kof.example.com/vli/insert/opentelemetry/v1/logs"
)

// Scenario 01: one regional cluster stores the data of two children; then an upgrade with changed values and an
// uninstall.
func TestRegionalChildInstallUpgradeUninstall(t *testing.T) {
	ctx := context.Background()
	in := installScenario(t, "01-regional-child")

	if in.Release.Version != 1 || in.Release.Info.Status != "deployed" {
		t.Errorf("umbrella release revision %d %s, want 1 deployed", in.Release.Version, in.Release.Info.Status)
	}
	assertFluxOrder(t, in.Releases)
	waitOperator(t, in)
	assertOfflineMatchesLive(t, in)

	regional := configMap(t, "kcm-system", "kof-regional-1")
	if regional["write_metrics_endpoint"] != regionalWrite {
		t.Errorf("kof-regional-1 write_metrics_endpoint = %q, want %q", regional["write_metrics_endpoint"],
			regionalWrite)
	}
	for _, child := range []string{"child-1", "child-2"} {
		data := configMap(t, "kcm-system", "kof-cluster-config-"+child)
		if data["regional_cluster_name"] != "regional-1" || data["write_metrics_endpoint"] != regionalWrite {
			t.Errorf("%s ConfigMap binds regional %q writing to %q, want regional-1 writing to %q", child,
				data["regional_cluster_name"], data["write_metrics_endpoint"], regionalWrite)
		}
	}

	f, _, err := in.Render(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The management cluster has no problem either: the VictoriaMetrics CRDs the control plane serves in place of
	// the release the environment turns off count as installed (regression: `make demo` reported 5 errors here).
	assertReceives(t, f, harness.ManagementCluster, "kof-mothership")
	assertReceives(t, f, "regional-1", "kof-storage", "kof-collectors")
	assertReceives(t, f, "child-1", "kof-collectors")
	assertReceives(t, f, "child-2", "kof-collectors")

	upgradeKeepsCredentialsAndLeavesNoOrphans(t, in)

	deleteClusters(t, in)
	uninstallLeavesCRDsAndNoOperatorObjects(t, in)
}

// Scenario 02: no regional cluster; the management cluster stores everything.
func TestRegionlessInstallUninstall(t *testing.T) {
	ctx := context.Background()
	in := installScenario(t, "02-regionless")
	waitOperator(t, in)
	assertOfflineMatchesLive(t, in)

	mgmt := configMap(t, "kcm-system", "kof-mothership")
	if mgmt["write_logs_endpoint"] != mothershipLogs {
		t.Errorf("regionless ConfigMap write_logs_endpoint = %q, want %q", mgmt["write_logs_endpoint"],
			mothershipLogs)
	}
	// The operator rewrites the ConfigMap of a cluster it bound before (scenario 01 ran on this control plane, which
	// has no garbage collector) when it reconciles the new ClusterDeployment: wait for that, not just for the name.
	eventually(t, operatorWait, func() string {
		data, err := tryConfigMap("kcm-system", "kof-cluster-config-child-1")
		if err != nil {
			return err.Error() // not written yet, or the API server busy: the wait goes on
		}
		if got := data["write_logs_endpoint"]; got != mothershipLogs {
			return fmt.Sprintf("child-1 write_logs_endpoint = %q, want the management cluster's %q", got, mothershipLogs)
		}
		return ""
	})
	f, _, err := in.Render(ctx)
	if err != nil {
		t.Fatal(err)
	}
	assertReceives(t, f, harness.ManagementCluster, "kof-storage")
	assertReceives(t, f, "child-1", "kof-collectors")
	if r := f.Cluster("regional-1"); r == nil || r.Service("kof-storage") != nil {
		t.Errorf("regional-1 receives kof-storage in regionless mode (cluster %v)", r)
	}

	deleteClusters(t, in)
	uninstallLeavesCRDsAndNoOperatorObjects(t, in)
}

// thirdPartyNote starts the message the harness gives a third-party HelmRelease that Flux cannot install here.
const thirdPartyNote = "third-party chart: needs the internet"

// assertFluxOrder checks that Flux made every KOF HelmRelease Ready at revision 1 and installed them in dependsOn
// order (operators, then mothership, then regional and child: each release first deployed after the releases it
// depends on), and that the third-party releases of kof-operators stay not Ready with the proxy's no-network
// message.
func assertFluxOrder(t *testing.T, rels []harness.FluxRelease) {
	t.Helper()
	deployed := map[string]time.Time{}
	thirdParty := 0
	for _, r := range rels {
		if !r.Local {
			thirdParty++
			if r.Ready || !strings.Contains(r.Message, thirdPartyNote) {
				t.Errorf("%s: want not Ready, explained by %q", r, thirdPartyNote)
			}
			continue
		}
		if !r.Ready || r.Revision != 1 {
			t.Errorf("%s: revision %d, want Ready at revision 1", r, r.Revision)
		}
		rel, err := shared.session.Helm.Get(r.Name, r.Namespace)
		if err != nil || rel == nil {
			t.Errorf("Helm release %s/%s of %s: %v (found %v)", r.Namespace, r.Name, r.HelmRelease, err, rel != nil)
			continue
		}
		deployed[r.Name] = rel.Info.FirstDeployed.Time
	}
	if thirdParty == 0 {
		t.Errorf("no third-party HelmRelease among %v; kof-operators renders one per operator", rels)
	}
	for _, name := range []string{"kof-operators", "kof-mothership", "kof-regional", "kof-child"} {
		if _, ok := deployed[name]; !ok {
			t.Fatalf("no Ready HelmRelease %s; got %v", name, rels)
		}
	}
	for _, dep := range [][2]string{{"kof-operators", "kof-mothership"}, {"kof-mothership", "kof-regional"},
		{"kof-mothership", "kof-child"}} {
		if !deployed[dep[0]].Before(deployed[dep[1]]) {
			t.Errorf("%s first deployed at %s, not before %s at %s: dependsOn broken", dep[0], deployed[dep[0]],
				dep[1], deployed[dep[1]])
		}
	}
}

// assertReceives checks that cluster rendered without problems and receives every service.
func assertReceives(t *testing.T, f *fleet.Fleet, cluster string, services ...string) {
	t.Helper()
	c := f.Cluster(cluster)
	if c == nil {
		t.Errorf("fleet has no cluster %s", cluster)
		return
	}
	if probs := c.Problems(); len(probs) > 0 {
		t.Errorf("cluster %s has problems:\n%s", cluster, strings.Join(probs, "\n"))
	}
	for _, s := range services {
		if c.Service(s) == nil {
			t.Errorf("cluster %s does not receive %s", cluster, s)
		}
	}
}

// upgradeKeepsCredentialsAndLeavesNoOrphans runs `helm upgrade` with one operator replica and the default
// PrometheusRules off: the umbrella and kof-mothership reach revision 2, the operator restarts (its Deployment
// changed) and keeps every credential it made, and the objects the upgrade dropped are gone.
func upgradeKeepsCredentialsAndLeavesNoOrphans(t *testing.T, in *harness.Installation) {
	t.Helper()
	ctx := context.Background()
	before := credentials(t)
	if len(before) < 2 {
		t.Fatalf("operator credentials before upgrade: %v, want one per child", before)
	}
	oldMothership := releaseObjects(t, "kof-mothership", "kof")
	var dropped []*unstructured.Unstructured
	for _, o := range oldMothership {
		if o.GetKind() == "PrometheusRule" {
			dropped = append(dropped, o)
		}
	}
	if len(dropped) == 0 {
		t.Fatal("kof-mothership renders no PrometheusRule with defaultRules on; the orphan check needs one")
	}

	rel, err := in.Upgrade(ctx, map[string]any{"kof-mothership": map[string]any{"values": map[string]any{
		"operator":     map[string]any{"replicas": 1},
		"defaultRules": map[string]any{"enabled": false},
	}}})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if rel.Version != 2 || rel.Info.Status != "deployed" {
		t.Errorf("umbrella release after upgrade: revision %d %s, want 2 deployed", rel.Version, rel.Info.Status)
	}
	for _, r := range in.Releases {
		if r.Name == "kof-mothership" && r.Revision != 2 {
			t.Errorf("kof-mothership revision %d after upgrade, want 2", r.Revision)
		}
	}
	var dep appsv1.Deployment
	if err := c().Get(ctx, client.ObjectKey{Namespace: "kof", Name: "kof-mothership-operator"}, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Errorf("operator Deployment replicas = %v after upgrade, want 1", dep.Spec.Replicas)
	}
	waitOperator(t, in)
	after := credentials(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("credentials Secret %s changed across the upgrade", k)
		}
	}
	for _, o := range dropped {
		if exists(t, o) {
			t.Errorf("%s %s/%s dropped by the upgrade still exists (orphaned)", o.GetKind(), o.GetNamespace(),
				o.GetName())
		}
	}
	for key, o := range releaseObjects(t, "kof-mothership", "kof") {
		if !exists(t, o) {
			t.Errorf("object %v of kof-mothership revision 2 is missing", key)
		}
	}
}

// uninstallLeavesCRDsAndNoOperatorObjects runs `helm uninstall kof`: no KOF release is left, the KOF CRDs stay,
// the operator process stops with its Deployment, and no cluster-scoped object made by the operator remains.
func uninstallLeavesCRDsAndNoOperatorObjects(t *testing.T, in *harness.Installation) {
	t.Helper()
	eventually(t, operatorWait, func() string {
		if left := operatorClusterScoped(t); len(left) > 0 {
			return "operator-made cluster-scoped objects left after the clusters were removed: " +
				strings.Join(left, ", ")
		}
		return ""
	})
	var released []*unstructured.Unstructured
	for _, r := range in.Releases {
		if r.Local {
			for _, o := range releaseObjects(t, r.Name, r.Namespace) {
				// Objects the charts mark `helm.sh/resource-policy: keep` stay on purpose.
				if o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
					released = append(released, o)
				}
			}
		}
	}
	if err := in.Uninstall(context.Background()); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	for _, o := range released {
		if exists(t, o) {
			t.Errorf("%s %s/%s of a KOF release is left after uninstall (orphaned)", o.GetKind(), o.GetNamespace(),
				o.GetName())
		}
	}
	for _, r := range []struct{ name, ns string }{{"kof", "kof"}, {"kof-mothership", "kof"},
		{"kof-operators", "kof"}, {"kof-regional", "kof"}, {"kof-child", "kof"}} {
		rel, err := shared.session.Helm.Get(r.name, r.ns)
		if err != nil || rel != nil {
			t.Errorf("release %s/%s after uninstall: %v (still there: %v)", r.ns, r.name, err, rel != nil)
		}
	}
	for _, name := range kofCRDs {
		if !crdExists(t, name) {
			t.Errorf("CRD %s was deleted by helm uninstall; CRDs are kept", name)
		}
	}
	if in.Operator != nil {
		t.Errorf("operator process still runs after its Deployment was uninstalled")
	}
	if left := operatorClusterScoped(t); len(left) > 0 {
		t.Errorf("operator-made cluster-scoped objects after uninstall: %s", strings.Join(left, ", "))
	}
}
