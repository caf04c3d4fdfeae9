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
// Each scenario replays in a cell of its own (its own management cluster, KCM, Flux, addon-controller and managed
// clusters), beside the others; the cells start one after the other (goCell), first those of the scenarios that
// take their turn first (useCell), the cell of the templates' test last, and each is thrown away with everything
// its scenario created.
func TestEmulatorMatchesAddonController(t *testing.T) {
	for _, name := range scenarios {
		shared.goCell(name, true, false)
	}
	shared.goCell(templatesCell, false, false)
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			replay(t, useCell(t, name, true), name, sveltos.DoublePass)
		})
	}
}

// target is one managed cluster of a scenario and the API server that plays it.
type target struct {
	// cell is the scenario's management cluster and controllers.
	cell    *cell
	cluster *fleet.Cluster
	server  *harness.ControlPlane
	ref     corev1.ObjectReference
	// services are the KOF releases layer 2 delivers to it (local charts, rendered without error).
	services []*fleet.Service
}

// replay renders scenario name with the emulator in mode, creates the scenario's inputs and KOF's
// MultiClusterServices and ServiceTemplates on c's management cluster, lets KCM make its ServiceSets and
// ClusterProfiles and addon-controller deploy them, and compares every release's values and objects with the
// prediction. Nothing is deleted at the end: c is thrown away.
func replay(t *testing.T, c *cell, name string, mode sveltos.Mode) {
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
	targets := pickTargets(t, c, f)
	managementInputs(t, c, sc, f)
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
		if tg.cluster.Role == fleet.RoleChild && !probed {
			probe(t, tg, reg, mode)
			probed = true
		}
	}
	// KCM turns the MultiClusterServices into ServiceSets and Sveltos profiles once the clusters are registered
	// (holding a MultiClusterService's back on a cluster until those its spec.dependsOn names are deployed there).
	kcmInputs(t, c, sc, f)
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

// pickTargets returns one regional cluster, one child cluster (each on its own remote API server of c) and, when
// it receives MultiClusterService services, the management cluster (on itself): every kind of layer-2 target.
func pickTargets(t *testing.T, c *cell, f *fleet.Fleet) []*target {
	t.Helper()
	var out []*target
	taken := map[string]bool{}
	for _, fc := range f.Clusters {
		role := fc.Role
		if taken[role] || (role != fleet.RoleRegional && role != fleet.RoleChild && role != fleet.RoleManagement) {
			continue
		}
		tg := &target{cell: c, cluster: fc, ref: sveltosClusterRef(fc.Namespace, fc.Name)}
		for _, s := range fc.Services {
			if !strings.HasPrefix(s.Via, mcsVia) || !s.Local {
				continue
			}
			if s.Err != nil {
				t.Fatalf("kof render: cluster %s service %s: %v", fc.Name, s.Name, s.Err)
			}
			tg.services = append(tg.services, s)
		}
		if len(tg.services) == 0 {
			continue
		}
		tg.server = c.remotes[role]
		if role == fleet.RoleManagement {
			tg.server = c.mgmt
		}
		taken[role] = true
		out = append(out, tg)
	}
	if !taken[fleet.RoleChild] {
		t.Fatalf("the scenario has no child cluster receiving KOF services; got %d targets", len(out))
	}
	return out
}

// managementInputs creates on c's management cluster what layer 2 reads there: the scenario's namespaces,
// ClusterTemplates and ClusterDeployments (each naming a Credential: credentialOf), and the operator's outputs as
// kof render computed them.
func managementInputs(t *testing.T, c *cell, sc *harness.Scenario, f *fleet.Fleet) {
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
		ensureNamespace(t, c.mgmt, o.GetNamespace())
		if err := harness.CreateStrict(ctx, c.mgmt.Client, o); err != nil {
			t.Fatal(err)
		}
	}
}

// registerCluster creates the SveltosCluster of tg (the object kof render showed as .Cluster, marked ready) and its
// kubeconfig Secret pointing at tg's API server, and returns the SveltosCluster.
func registerCluster(t *testing.T, sc *harness.Scenario, tg *target) *unstructured.Unstructured {
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
	ensureNamespace(t, tg.cell.mgmt, tg.ref.Namespace)
	for _, o := range []*unstructured.Unstructured{secret, cluster} {
		if err := harness.CreateStrict(context.Background(), tg.cell.mgmt.Client, o); err != nil {
			t.Fatal(err)
		}
	}
	return cluster
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
				s.Name, key(want), deployWait, err, summaries(tg.cell))
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
				summaries(tg.cell), tg.cell.addon.LogPath)
			return nil
		}
		if err, ok := tg.cell.addon.Exited(); ok {
			t.Fatalf("addon-controller ended: %v (log: %s)", err, tg.cell.addon.LogPath)
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
// and MultiClusterService (what KCM says) of c's management cluster.
func summaries(c *cell) string {
	var b strings.Builder
	for _, gvk := range []schema.GroupVersionKind{addonv1.GroupVersion.WithKind(addonv1.ClusterSummaryKind),
		kcmv1.GroupVersion.WithKind(kcmv1.ServiceSetKind), kcmv1.GroupVersion.WithKind(kcmv1.MultiClusterServiceKind)} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.mgmt.Client.List(context.Background(), list); err != nil {
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
