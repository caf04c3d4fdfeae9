package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/internal/harness"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/ownership"
)

// operatorKinds are the kinds of the objects the operator writes per cluster (operator/outputs).
var operatorKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Group: "operator.victoriametrics.com", Version: "v1beta1", Kind: "VMUser"},
	{Group: "kof.k0rdent.mirantis.com", Version: "v1beta1", Kind: "PromxyServerGroup"},
	{Group: "kof.k0rdent.mirantis.com", Version: "v1beta1", Kind: "VMStorageConnection"},
	{Group: "k0rdent.mirantis.com", Version: "v1beta1", Kind: "MultiClusterService"},
}

// offlineOutputs renders the scenario of in from its files, as `kof render` does, and returns the operator
// objects the preview predicts, by `Kind namespace/name`.
func offlineOutputs(t *testing.T, in *harness.Installation) map[string]*unstructured.Unstructured {
	t.Helper()
	sc := in.Scenario
	f, err := fleet.Render(context.Background(), fleet.Options{
		ChartsDir: filepath.Join(shared.session.Root, "charts"), ValuesFiles: []string{sc.ValuesFile},
		ReleaseName: harness.UmbrellaRelease, Namespace: harness.UmbrellaNamespace, NamespaceObject: sc.Namespace,
		Clusters: sc.Clusters,
	})
	if err != nil {
		t.Fatalf("offline render of %s: %v", sc.Name, err)
	}
	if len(f.Operator) == 0 {
		t.Fatalf("offline render of %s predicts no operator object", sc.Name)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range f.Operator {
		out[objectID(o)] = o
	}
	return out
}

// liveOutputs returns every object of operatorKinds labelled `app.kubernetes.io/managed-by: kof-operator`, by
// `Kind namespace/name`, except the credential copies the VMStorageConnection controller makes next to the storage
// clusters (kofv1.SourceSecretAnnotation), which are no per-cluster output.
func liveOutputs(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, gvk := range operatorKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c().List(context.Background(), list, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
			t.Fatalf("list %s: %v", gvk.Kind, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			if _, copied := o.GetAnnotations()[kofv1.SourceSecretAnnotation]; copied {
				continue
			}
			out[objectID(o)] = o
		}
	}
	return out
}

// objectID names an object as `Kind namespace/name`.
func objectID(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// predicted returns the fields of an offline object as the API server would store them for the operator: the
// object is applied in a server-side dry run with the operator's field manager (so server defaults inside atomic
// lists appear as they do live, and the API server validates the prediction), then reduced like written.
func predicted(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	u := o.DeepCopy()
	ownership.Prune(u.Object)
	//nolint:staticcheck // unstructured objects are applied through Patch; client.Apply needs apply configurations
	if err := c().Patch(context.Background(), u, client.Apply, client.DryRunAll, client.ForceOwnership,
		client.FieldOwner(kofv1.FieldManager)); err != nil {
		t.Fatalf("%s: the API server refuses the offline prediction: %v", objectID(o), err)
	}
	return reduce(t, u)
}

// reduce returns the fields of o that kof-operator applied (ownership.Owned over its managedFields) with metadata
// reduced to the labels (owner references name live UIDs) and no Secret password (a placeholder offline, random
// live). It fails the test when the operator applied nothing, or a password is shorter than 16 characters.
func reduce(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	owned, err := ownership.Owned(o.Object, o.GetManagedFields(), kofv1.FieldManager)
	if err != nil || owned == nil {
		t.Fatalf("%s: no fields applied by %s (%v)", objectID(o), kofv1.FieldManager, err)
	}
	md, _ := owned["metadata"].(map[string]any)
	owned["metadata"] = map[string]any{"labels": md["labels"]}
	if pw, found, _ := unstructured.NestedString(owned, "data", outputs.PasswordKey); found {
		raw, err := base64.StdEncoding.DecodeString(pw)
		if err != nil || len(raw) < 16 {
			t.Errorf("%s: live password of %d characters (%v), want at least 16", objectID(o), len(raw), err)
		}
		unstructured.RemoveNestedField(owned, "data", outputs.PasswordKey)
	}
	return owned
}

// predictedAll returns predicted for every offline object, by id.
func predictedAll(t *testing.T, offline map[string]*unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	out := make(map[string]map[string]any, len(offline))
	for id, o := range offline {
		out[id] = predicted(t, o)
	}
	return out
}

// diffOutputs compares the offline prediction with the live objects: the same names, and for each object the same
// labels, data and spec. It returns one line per difference, sorted.
func diffOutputs(t *testing.T, offline map[string]map[string]any, live map[string]*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for id, want := range offline {
		l, ok := live[id]
		if !ok {
			out = append(out, id+": predicted offline, not made by the live operator")
			continue
		}
		got := reduce(t, l)
		if !ownership.Same(want, got) {
			out = append(out, fmt.Sprintf("%s differs (-offline +live):\n%s", id, cmp.Diff(want, got)))
		}
	}
	for id := range live {
		if _, ok := offline[id]; !ok {
			out = append(out, id+": made by the live operator, not predicted offline")
		}
	}
	sort.Strings(out)
	return out
}

// assertOfflineMatchesLive waits until the objects the live operator made are those the offline preview predicts
// for in's scenario (names, labels, data, spec), and shows that the comparison catches one planted difference.
func assertOfflineMatchesLive(t *testing.T, in *harness.Installation) {
	t.Helper()
	offline := offlineOutputs(t, in)
	want := predictedAll(t, offline)
	var diffs []string
	eventually(t, operatorWait, func() string {
		diffs = diffOutputs(t, want, liveOutputs(t))
		if len(diffs) == 0 {
			return ""
		}
		return fmt.Sprintf("%s: %d of %d predicted objects differ from the live operator's:\n%s", in.Scenario.Name,
			len(diffs), len(offline), strings.Join(diffs, "\n"))
	})
	t.Logf("%s: %d operator objects predicted offline equal the live ones", in.Scenario.Name, len(offline))

	// A planted difference in the offline path only: one key of one ConfigMap.
	planted := map[string]*unstructured.Unstructured{}
	var targets []string
	for id, o := range offline {
		planted[id] = o
		if o.GetKind() == "ConfigMap" && o.GetLabels()[kofv1.RegionalClusterNameLabel] != "" {
			targets = append(targets, id) // a child ConfigMap
		}
	}
	if len(targets) == 0 {
		t.Fatalf("%s: no child ConfigMap to plant a difference in", in.Scenario.Name)
	}
	sort.Strings(targets)
	target := targets[0]
	changed := planted[target].DeepCopy()
	if err := unstructured.SetNestedField(changed.Object, "https://planted.example.com/vm/insert", "data",
		"write_metrics_endpoint"); err != nil {
		t.Fatal(err)
	}
	planted[target] = changed
	got := diffOutputs(t, predictedAll(t, planted), liveOutputs(t))
	if len(got) != 1 || !strings.HasPrefix(got[0], target+" differs") || !strings.Contains(got[0], "planted.example.com") {
		t.Errorf("%s: a planted write_metrics_endpoint in %s gives differences %q, want exactly that one",
			in.Scenario.Name, target, got)
	}
}

// Scenarios 05 and 08: the management cluster stores its data on itself (M2M) or on regional-1 (M2R); the
// operator's objects are the ones the offline preview predicts.
func TestOfflinePreviewMatchesLiveOperatorM2MAndM2R(t *testing.T) {
	for _, name := range []string{"05-m2m", "08-m2r"} {
		t.Run(name, func(t *testing.T) {
			in := installScenario(t, name)
			waitOperator(t, in)
			assertOfflineMatchesLive(t, in)
			deleteClusters(t, in)
			uninstallLeavesCRDsAndNoOperatorObjects(t, in)
		})
	}
}
