package harness

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/ownership"
)

// OperatorOutputKinds are the kinds of the objects the operator writes per cluster (operator/outputs).
var OperatorOutputKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Group: "operator.victoriametrics.com", Version: "v1beta1", Kind: "VMUser"},
	{Group: "kof.k0rdent.mirantis.com", Version: "v1beta1", Kind: "PromxyServerGroup"},
	{Group: "kof.k0rdent.mirantis.com", Version: "v1beta1", Kind: "VMStorageConnection"},
	{Group: "k0rdent.mirantis.com", Version: "v1beta1", Kind: "MultiClusterService"},
}

// ObjectID names an object as `Kind namespace/name`.
func ObjectID(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// OfflineOutputs renders the scenario of in from its files with the installation's charts (its Source's, such as a
// release's pulled from a registry, else the repository's), as `kof render` does, and returns the operator objects
// the preview predicts, by ObjectID. Errors: the render's, or a prediction of no operator object at all.
func (in *Installation) OfflineOutputs(ctx context.Context) (map[string]*unstructured.Unstructured, error) {
	sc := in.Scenario
	f, err := fleet.Render(ctx, fleet.Options{
		ChartsDir: in.chartsDir(), ValuesFiles: []string{sc.ValuesFile},
		ReleaseName: UmbrellaRelease, Namespace: UmbrellaNamespace, NamespaceObject: sc.Namespace,
		Clusters: sc.Clusters,
	})
	if err != nil {
		return nil, fmt.Errorf("offline render of %s: %w", sc.Name, err)
	}
	if len(f.Operator) == 0 {
		return nil, fmt.Errorf("offline render of %s predicts no operator object", sc.Name)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range f.Operator {
		out[ObjectID(o)] = o
	}
	return out, nil
}

// LiveOutputs returns every object of OperatorOutputKinds labelled `app.kubernetes.io/managed-by: kof-operator`, by
// ObjectID, except the credential copies the VMStorageConnection controller makes next to the storage clusters
// (kofv1.SourceSecretAnnotation), which are no per-cluster output. Errors are the API server's.
func LiveOutputs(ctx context.Context, c client.Client) (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	for _, gvk := range OperatorOutputKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			if _, copied := o.GetAnnotations()[kofv1.SourceSecretAnnotation]; copied {
				continue
			}
			out[ObjectID(o)] = o
		}
	}
	return out, nil
}

// PredictedOutputs returns, by id, the fields of each offline object as the API server would store them for the
// operator: the object is applied in a server-side dry run with the operator's field manager (so server defaults
// inside atomic lists appear as they do live, and the API server validates the prediction), then reduced like
// written (ReduceOutput). Errors name the object the API server refuses.
func PredictedOutputs(ctx context.Context, c client.Client, offline map[string]*unstructured.Unstructured) (
	map[string]map[string]any, error) {
	out := make(map[string]map[string]any, len(offline))
	for id, o := range offline {
		u := o.DeepCopy()
		ownership.Prune(u.Object)
		//nolint:staticcheck // unstructured objects are applied through Patch; client.Apply needs apply configurations
		if err := c.Patch(ctx, u, client.Apply, client.DryRunAll, client.ForceOwnership,
			client.FieldOwner(kofv1.FieldManager)); err != nil {
			return nil, fmt.Errorf("%s: the API server refuses the offline prediction: %w", id, err)
		}
		r, err := ReduceOutput(u)
		if err != nil {
			return nil, err
		}
		out[id] = r
	}
	return out, nil
}

// ReduceOutput returns the fields of o that kof-operator applied (ownership.Owned over its managedFields) with
// metadata reduced to the labels (owner references name live UIDs) and no Secret password (a placeholder offline,
// random live). Errors: the operator applied nothing, or a password is shorter than 16 characters.
func ReduceOutput(o *unstructured.Unstructured) (map[string]any, error) {
	owned, err := ownership.Owned(o.Object, o.GetManagedFields(), kofv1.FieldManager)
	if err != nil || owned == nil {
		return nil, fmt.Errorf("%s: no fields applied by %s (%v)", ObjectID(o), kofv1.FieldManager, err)
	}
	md, _ := owned["metadata"].(map[string]any)
	owned["metadata"] = map[string]any{"labels": md["labels"]}
	if pw, found, _ := unstructured.NestedString(owned, "data", outputs.PasswordKey); found {
		raw, err := base64.StdEncoding.DecodeString(pw)
		if err != nil || len(raw) < 16 {
			return nil, fmt.Errorf("%s: live password of %d characters (%v), want at least 16", ObjectID(o), len(raw), err)
		}
		unstructured.RemoveNestedField(owned, "data", outputs.PasswordKey)
	}
	return owned, nil
}

// DiffOutputs compares the offline prediction (PredictedOutputs) with the live objects (LiveOutputs): the same
// names, and for each object the same labels, data and spec. It returns one line per difference, sorted, and the
// error of a live object that cannot be reduced.
func DiffOutputs(offline map[string]map[string]any, live map[string]*unstructured.Unstructured) ([]string, error) {
	var out []string
	for id, want := range offline {
		l, ok := live[id]
		if !ok {
			out = append(out, id+": predicted offline, not made by the live operator")
			continue
		}
		got, err := ReduceOutput(l)
		if err != nil {
			return nil, err
		}
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
	return out, nil
}
