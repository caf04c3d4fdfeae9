package fidelity

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	libsveltosv1 "github.com/projectsveltos/libsveltos/api/v1beta1"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/internal/harness"
)

// deployWait bounds the wait for addon-controller to install (or withdraw) every release of one scenario.
const deployWait = 4 * time.Minute

// mcsVia starts fleet.Service.Via for services a MultiClusterService delivers.
const mcsVia = "MultiClusterService "

// The scenarios the fidelity test replays: the default regional and child clusters, M2M (the management cluster
// receives storage and collectors through self-management) and Istio.
var scenarios = []string{"01-regional-child", "05-m2m", "12-istio-regional-child"}

// Sveltos v1.9.0, the version the emulator follows and ci/tools builds, always runs the double pass
// (chartlib/sveltos doc); the emulator's SinglePass follows a later upstream change that this controller lacks,
// so it has no real counterpart here.
func TestEmulatorMatchesAddonController(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) { replay(t, name, sveltos.DoublePass) })
	}
}

// target is one managed cluster of a scenario and the API server that plays it.
type target struct {
	cluster *fleet.Cluster
	server  *harness.ControlPlane
	ref     corev1.ObjectReference
	// services are the KOF releases layer 2 delivers to it (local charts, rendered without error).
	services []*fleet.Service
}

// replay renders scenario name with the emulator in mode, creates the scenario's inputs and KOF's
// MultiClusterServices and ServiceTemplates on the management cluster, lets KCM make its ServiceSets and
// ClusterProfiles and addon-controller deploy them, and compares every release's values and objects with the
// prediction.
func replay(t *testing.T, name string, mode sveltos.Mode) {
	ctx := context.Background()
	sc, err := harness.LoadScenario(filepath.Join(shared.root, "tests", "scenarios", "testdata"), name)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"global": map[string]any{"helmRepo": map[string]any{"kofManaged": map[string]any{
		"url": shared.charts.URL}}}}
	f, err := fleet.Render(ctx, fleet.Options{ChartsDir: filepath.Join(shared.root, "charts"),
		ValuesFiles: []string{sc.ValuesFile}, Values: values, NamespaceObject: sc.Namespace, Clusters: sc.Clusters,
		SveltosClusters: true, Mode: mode})
	if err != nil {
		t.Fatalf("kof render: %v", err)
	}
	targets := pickTargets(t, f)
	var created []*unstructured.Unstructured
	t.Cleanup(func() { cleanup(t, targets, created) })
	created = append(created, managementInputs(t, sc, f)...)
	// Istio members receive the labelled KOF namespace before any other service (kof-istio-namespace, which the
	// Istio MultiClusterServices depend on): watched from before their ClusterProfiles exist.
	orders := map[*target]*namespaceOrder{}
	for _, tg := range targets {
		if s := tg.cluster.Service(istioNamespaceService); s != nil {
			orders[tg] = watchNamespaceOrder(t, tg, s.Namespace)
		}
	}
	var probed bool
	for _, tg := range targets {
		reg := registerCluster(t, sc, tg)
		created = append(created, reg...)
		if tg.cluster.Role == fleet.RoleChild && !probed {
			created = append(created, probe(t, tg, reg[0], mode))
			probed = true
		}
	}
	// KCM turns the MultiClusterServices into ServiceSets and Sveltos profiles once the clusters are registered
	// (holding a MultiClusterService's back on a cluster until those its spec.dependsOn names are deployed there).
	created = append(created, kcmInputs(t, sc, f)...)
	for _, tg := range targets {
		for _, s := range tg.services {
			if s.Resources {
				compareResources(t, tg, s)
				continue
			}
			rel := waitRelease(t, tg, s)
			if rel == nil {
				continue
			}
			compareValues(t, tg, s, rel.Config)
			compareObjects(t, tg, s, rel.Manifest)
		}
		if o := orders[tg]; o != nil {
			o.check(t, tg.cluster.Name, tg.cluster.Service(istioNamespaceService).Namespace)
		}
	}
	if sc.Namespace != nil && sc.Namespace.GetLabels()[istioInjection] == "enabled" {
		// Istio mode: every regional and child target is a member of the scenario and must have been watched.
		for _, tg := range targets {
			if tg.cluster.Role != fleet.RoleManagement && orders[tg] == nil {
				t.Errorf("scenario %s: cluster %s receives no %s service", name, tg.cluster.Name, istioNamespaceService)
			}
		}
	}
}

// istioNamespaceService is the release name of the Istio namespace bootstrap (kof-mothership.istioNamespace).
const istioNamespaceService = "kof-namespace"

// pickTargets returns one regional cluster, one child cluster (each on its own remote API server) and, when it
// receives MultiClusterService services, the management cluster (on itself): every kind of layer-2 target.
func pickTargets(t *testing.T, f *fleet.Fleet) []*target {
	t.Helper()
	var out []*target
	taken := map[string]bool{}
	for _, c := range f.Clusters {
		role := c.Role
		if taken[role] || (role != fleet.RoleRegional && role != fleet.RoleChild && role != fleet.RoleManagement) {
			continue
		}
		tg := &target{cluster: c, ref: sveltosClusterRef(c.Namespace, c.Name)}
		for _, s := range c.Services {
			if !strings.HasPrefix(s.Via, mcsVia) || !s.Local {
				continue
			}
			if s.Err != nil {
				t.Fatalf("kof render: cluster %s service %s: %v", c.Name, s.Name, s.Err)
			}
			tg.services = append(tg.services, s)
		}
		if len(tg.services) == 0 {
			continue
		}
		tg.server = shared.remotes[role]
		if role == fleet.RoleManagement {
			tg.server = shared.mgmt
		}
		taken[role] = true
		out = append(out, tg)
	}
	if !taken[fleet.RoleChild] {
		t.Fatalf("the scenario has no child cluster receiving KOF services; got %d targets", len(out))
	}
	return out
}

// managementInputs creates on the management cluster what layer 2 reads there: the scenario's namespaces,
// ClusterTemplates and ClusterDeployments (each naming a Credential: credentialOf), and the operator's outputs as
// kof render computed them.
func managementInputs(t *testing.T, sc *harness.Scenario, f *fleet.Fleet) []*unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	var objs []*unstructured.Unstructured
	for _, o := range sc.Clusters {
		o = o.DeepCopy()
		harness.CompleteClusterTemplate(o)
		if o.GetKind() == harness.KindClusterDeployment {
			_ = unstructured.SetNestedField(o.Object, credentialOf(o), "spec", "credential")
		}
		objs = append(objs, o)
	}
	for _, o := range f.Operator {
		objs = append(objs, o.DeepCopy())
	}
	for _, o := range objs {
		ensureNamespace(t, shared.mgmt, o.GetNamespace())
		if err := harness.CreateStrict(ctx, shared.mgmt.Client, o); err != nil {
			t.Fatal(err)
		}
	}
	return objs
}

// registerCluster creates the SveltosCluster of tg (the object kof render showed as .Cluster, marked ready) and its
// kubeconfig Secret pointing at tg's API server.
func registerCluster(t *testing.T, sc *harness.Scenario, tg *target) []*unstructured.Unstructured {
	t.Helper()
	var cluster *unstructured.Unstructured
	if tg.cluster.Role == fleet.RoleManagement {
		cluster = sveltos.ManagementCluster(map[string]string{fleet.ManagementClusterLabel: "true"})
	} else {
		for _, o := range sc.Clusters {
			if o.GetKind() == harness.KindClusterDeployment && o.GetName() == tg.cluster.Name &&
				o.GetNamespace() == tg.cluster.Namespace {
				c, err := sveltos.ClusterFromDeployment(o, sveltos.KindSveltos)
				if err != nil {
					t.Fatal(err)
				}
				cluster = c
			}
		}
	}
	if cluster == nil {
		t.Fatalf("no ClusterDeployment %s/%s in the scenario", tg.cluster.Namespace, tg.cluster.Name)
	}
	kubeconfig, err := os.ReadFile(tg.server.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": tg.ref.Name + "-sveltos-kubeconfig", "namespace": tg.ref.Namespace},
		"stringData": map[string]any{"kubeconfig": string(kubeconfig)}}}
	cluster = cluster.DeepCopy()
	_ = unstructured.SetNestedField(cluster.Object, map[string]any{}, "spec")
	_ = unstructured.SetNestedField(cluster.Object, map[string]any{"ready": true}, "status")
	ensureNamespace(t, shared.mgmt, tg.ref.Namespace)
	for _, o := range []*unstructured.Unstructured{secret, cluster} {
		if err := harness.CreateStrict(context.Background(), shared.mgmt.Client, o); err != nil {
			t.Fatal(err)
		}
	}
	return []*unstructured.Unstructured{cluster, secret}
}

// compareResources waits until every object kof render predicted for the plain-resources service s is on tg's API
// server, then compares what the prediction sets (data, stringData, spec, labels) with the live object.
func compareResources(t *testing.T, tg *target, s *fleet.Service) {
	t.Helper()
	if s.Objects == nil || len(s.Objects.Objects()) == 0 {
		t.Errorf("cluster %s service %s: kof render predicts no objects", tg.cluster.Name, s.Name)
		return
	}
	for _, want := range s.Objects.Objects() {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(want.GroupVersionKind())
		ns := want.GetNamespace()
		if ns == "" && namespaced(tg.server, want) {
			ns = defaultNamespace
		}
		deadline := time.Now().Add(deployWait)
		var err error
		for {
			err = tg.server.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: want.GetName()}, live)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("cluster %s service %s: %s not deployed within %s: %v; ClusterSummaries:\n%s", tg.cluster.Name,
				s.Name, key(want), deployWait, err, summaries())
			continue
		}
		w := want.DeepCopy()
		if sd, ok, _ := unstructured.NestedStringMap(w.Object, "stringData"); ok && w.GetKind() == "Secret" {
			// The API server stores stringData as base64 data.
			data, _, _ := unstructured.NestedStringMap(w.Object, "data")
			if data == nil {
				data = map[string]string{}
			}
			for k, v := range sd {
				data[k] = base64.StdEncoding.EncodeToString([]byte(v))
			}
			_ = unstructured.SetNestedStringMap(w.Object, data, "data")
			unstructured.RemoveNestedField(w.Object, "stringData")
		}
		for _, field := range []string{"data", "spec"} {
			wv, wok, _ := unstructured.NestedFieldNoCopy(w.Object, field)
			lv, _, _ := unstructured.NestedFieldNoCopy(live.Object, field)
			if wok {
				if d := cmp.Diff(normalize(t, wv), normalize(t, lv)); d != "" {
					t.Errorf("cluster %s service %s: %s %s differs (-kof render +addon-controller):\n%s",
						tg.cluster.Name, s.Name, key(want), field, d)
				}
			}
		}
		for k, v := range want.GetLabels() {
			if live.GetLabels()[k] != v {
				t.Errorf("cluster %s service %s: %s label %s = %q, want %q", tg.cluster.Name, s.Name, key(want), k,
					live.GetLabels()[k], v)
			}
		}
	}
}

// waitRelease waits until the release of s is deployed on tg's API server and returns it; on timeout it fails the
// test with what addon-controller reported in the ClusterSummaries.
func waitRelease(t *testing.T, tg *target, s *fleet.Service) *releaseInfo {
	t.Helper()
	h := &harness.Helm{Kubeconfig: tg.server.Kubeconfig, Client: tg.server.Client}
	deadline := time.Now().Add(deployWait)
	t.Logf("cluster %s: waiting for release %s/%s", tg.cluster.Name, s.Namespace, s.Name)
	for {
		rel, err := h.Get(s.Name, s.Namespace)
		if err == nil && rel != nil && rel.Info != nil && rel.Info.Status == release.StatusDeployed {
			return &releaseInfo{Config: rel.Config, Manifest: rel.Manifest}
		}
		if rel != nil && rel.Info != nil {
			err = fmt.Errorf("release status %s", rel.Info.Status)
		}
		if time.Now().After(deadline) {
			t.Errorf("cluster %s: addon-controller did not deploy release %s/%s within %s (get: %v); "+
				"ClusterSummaries:\n%s\naddon-controller log: %s", tg.cluster.Name, s.Namespace, s.Name, deployWait, err,
				summaries(), shared.addon.LogPath)
			return nil
		}
		if err, ok := shared.addon.Exited(); ok {
			t.Fatalf("addon-controller ended: %v (log: %s)", err, shared.addon.LogPath)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// releaseInfo is what the comparison reads of an installed Helm release.
type releaseInfo struct {
	Config   map[string]any
	Manifest string
}

// compareValues checks that the values addon-controller installed equal the emulator's instantiated values.
func compareValues(t *testing.T, tg *target, s *fleet.Service, got map[string]any) {
	t.Helper()
	if d := cmp.Diff(normalize(t, s.Values), normalize(t, got)); d != "" {
		t.Errorf("cluster %s release %s/%s: values differ (-kof render +addon-controller):\n%s", tg.cluster.Name,
			s.Namespace, s.Name, d)
	}
}

// compareObjects checks that the release addon-controller installed renders the objects kof render predicted,
// and that each of them exists on the remote API server.
func compareObjects(t *testing.T, tg *target, s *fleet.Service, manifestText string) {
	t.Helper()
	got, err := manifest.Parse(map[string]string{"manifest": manifestText})
	if err != nil {
		t.Fatalf("cluster %s release %s: parse manifest: %v", tg.cluster.Name, s.Name, err)
	}
	want := map[string]*unstructured.Unstructured{}
	for _, o := range s.Objects.Objects() {
		want[key(o)] = o
	}
	have := map[string]*unstructured.Unstructured{}
	for _, o := range got.Objects() {
		have[key(o)] = o
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		h, ok := have[k]
		if !ok {
			t.Errorf("cluster %s release %s: %s predicted, not installed", tg.cluster.Name, s.Name, k)
			continue
		}
		if d := cmp.Diff(normalize(t, want[k].Object), normalize(t, h.Object)); d != "" {
			t.Errorf("cluster %s release %s: %s differs (-kof render +addon-controller):\n%s", tg.cluster.Name,
				s.Name, k, d)
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(h.GroupVersionKind())
		ns := h.GetNamespace()
		if ns == "" && namespaced(tg.server, h) {
			ns = s.Namespace
		}
		if err := tg.server.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: h.GetName()},
			live); err != nil {
			t.Errorf("cluster %s release %s: %s not on the API server: %v", tg.cluster.Name, s.Name, k, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[k]; !ok {
			t.Errorf("cluster %s release %s: %s installed, not predicted", tg.cluster.Name, s.Name, k)
		}
	}
}

// namespaced asks the API server's REST mapping whether obj's kind is namespaced (unknown kinds count as
// namespaced).
func namespaced(cp *harness.ControlPlane, obj *unstructured.Unstructured) bool {
	ok, err := cp.Client.IsObjectNamespaced(obj)
	return err != nil || ok
}

// key names an object `Kind namespace/name` (namespace as written in the manifest).
func key(o *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
}

// normalize turns v into its JSON form (numbers as float64), so values from YAML and from Helm's storage compare.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// summaries formats the status of every ClusterSummary (what addon-controller says of each deployment), ServiceSet
// and MultiClusterService (what KCM says).
func summaries() string {
	var b strings.Builder
	for _, gvk := range []schema.GroupVersionKind{addonv1.GroupVersion.WithKind(addonv1.ClusterSummaryKind),
		kcmv1.GroupVersion.WithKind(kcmv1.ServiceSetKind), kcmv1.GroupVersion.WithKind(kcmv1.MultiClusterServiceKind)} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := shared.mgmt.Client.List(context.Background(), list); err != nil {
			fmt.Fprintf(&b, "list %ss: %v\n", gvk.Kind, err)
			continue
		}
		for _, o := range list.Items {
			status, _, _ := unstructured.NestedMap(o.Object, "status")
			j, _ := json.Marshal(status)
			fmt.Fprintf(&b, "%s: %s\n", key(&o), j)
		}
	}
	return b.String()
}

// cleanup deletes the MultiClusterServices and the probe's ClusterProfile (KCM deletes its ServiceSets and their
// ClusterProfiles; addon-controller withdraws their releases), waits until every release is gone from the remote
// API servers and KCM's and Sveltos' objects are gone, then deletes the ClusterDeployments (KCM holds them until it
// has released them), and the other objects the scenario created after them.
func cleanup(t *testing.T, targets []*target, created []*unstructured.Unstructured) {
	ctx := context.Background()
	del := func(o *unstructured.Unstructured) {
		if err := shared.mgmt.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s: %v", key(o), err)
		}
	}
	for _, o := range created {
		if k := o.GetKind(); k == addonv1.ClusterProfileKind || k == kcmv1.MultiClusterServiceKind {
			del(o)
		}
	}
	deadline := time.Now().Add(deployWait)
	for _, tg := range targets {
		h := &harness.Helm{Kubeconfig: tg.server.Kubeconfig, Client: tg.server.Client}
		for _, s := range tg.services {
			for {
				rel, err := h.Get(s.Name, s.Namespace)
				if err == nil && rel == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("cluster %s: release %s/%s not withdrawn within %s (logs: %s, %s)", tg.cluster.Name,
						s.Namespace, s.Name, deployWait, shared.addon.LogPath, shared.kcm.LogPath)
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	// A MultiClusterService is gone once KCM has deleted its ServiceSets (and they their Profiles, and
	// addon-controller its ClusterSummaries); a next scenario must not meet an object of the same name still being
	// deleted.
	waitGone(t, deadline, []schema.GroupVersionKind{addonv1.GroupVersion.WithKind(addonv1.ClusterProfileKind),
		kcmv1.GroupVersion.WithKind(kcmv1.MultiClusterServiceKind)})
	for _, o := range created {
		if o.GetKind() == harness.KindClusterDeployment {
			del(o)
		}
	}
	// KCM deletes a ClusterDeployment's own ServiceSet (without services here) before it lets it go.
	waitGone(t, deadline, []schema.GroupVersionKind{kcmv1.GroupVersion.WithKind(kcmv1.ClusterDeploymentKind),
		kcmv1.GroupVersion.WithKind(kcmv1.ServiceSetKind), addonv1.GroupVersion.WithKind(addonv1.ProfileKind),
		addonv1.GroupVersion.WithKind(addonv1.ClusterSummaryKind)})
	for i := len(created) - 1; i >= 0; i-- {
		switch created[i].GetKind() {
		case addonv1.ClusterProfileKind, kcmv1.MultiClusterServiceKind, harness.KindClusterDeployment:
		default:
			del(created[i])
		}
	}
	collectOrphanCharts(t)
}

// waitGone waits until the management cluster has no object of kinds left, until deadline; it fails the test
// naming what is left, or the controller that ended.
func waitGone(t *testing.T, deadline time.Time, kinds []schema.GroupVersionKind) {
	t.Helper()
	for {
		var left []string
		for _, gvk := range kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := shared.mgmt.Client.List(context.Background(), list); err != nil {
				left = append(left, fmt.Sprintf("list %ss: %v", gvk.Kind, err)) // unknown yet: the wait goes on
				continue
			}
			for _, o := range list.Items {
				left = append(left, key(&o))
			}
		}
		if len(left) == 0 {
			return
		}
		for _, p := range []*harness.Process{shared.addon, shared.kcm} {
			if err, ended := p.Exited(); ended {
				t.Fatalf("%s ended while the scenario's objects were deleted: %v (log: %s)", p.Name, err, p.LogPath)
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("left after their deletion (logs: %s, %s): %s", shared.addon.LogPath, shared.kcm.LogPath,
				strings.Join(left, ", "))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ensureNamespace creates namespace ns on cp when it is missing ("" is cluster scope: nothing to do).
func ensureNamespace(t *testing.T, cp *harness.ControlPlane, ns string) {
	t.Helper()
	if ns == "" {
		return
	}
	err := cp.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// defaultNamespace is where an object without a namespace lands on a remote API server.
const defaultNamespace = "default"

// sveltosClusterRef returns the reference to the SveltosCluster namespace/name, as KCM writes it in a ClusterProfile
// for a ClusterDeployment without a CAPI Cluster.
func sveltosClusterRef(namespace, name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: libsveltosv1.GroupVersion.String(), Kind: libsveltosv1.SveltosClusterKind,
		Namespace: namespace, Name: name}
}
