package phase

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// StatusFields returns where an object of a KOF kind keeps its observed generation and its conditions.
type StatusFields[O client.Object] func(O) (observedGeneration *int64, conditions *[]metav1.Condition)

// Statuses remembers, per object, the status this process last patched (observed generation and conditions) until
// the cache holds that patch (Unseen): a reconcile in between would otherwise patch the same status again (with new
// transition times) and emit its Event twice. Its zero value is ready to use; it is safe for concurrent reconciles.
type Statuses struct {
	Unseen[string, patchedStatus]
}

type patchedStatus struct {
	generation int64
	conditions []metav1.Condition
}

// behind returns the status remembered for key when obj holds an older resource version than that patch answered,
// and drops the entry otherwise.
func (s *Statuses) behind(key string, obj client.Object) (patchedStatus, bool) {
	if s == nil {
		return patchedStatus{}, false
	}
	return s.Newer(key, obj.GetResourceVersion())
}

// record remembers the status of a patch of key that the API server answered with resource version rv.
func (s *Statuses) record(key, rv string, generation int64, conditions []metav1.Condition) {
	if s == nil {
		return
	}
	s.Record(key, rv, patchedStatus{generation: generation, conditions: slices.Clone(conditions)})
}

// PatchStatus is the status publish of a KOF kind with one duty: obj gets condition c, c again under type Ready,
// and c's observed generation, and its status is patched when that changed it. With mem (may be nil), an obj older
// than this process's last status patch of it is taken to hold that patch's status (Statuses), so a lagging cache
// causes no second patch and no second Event. It reports whether Ready changed (the caller emits its Event then).
// An object gone meanwhile is no error and no change; any other failure is returned naming kind and the object.
func PatchStatus[O client.Object](ctx context.Context, cl client.Client, mem *Statuses, kind string, obj O,
	fields StatusFields[O], c metav1.Condition) (readyChanged bool, err error) {
	key := kind + "/" + client.ObjectKeyFromObject(obj).String()
	if prev, ok := mem.behind(key, obj); ok {
		gen, conds := fields(obj)
		*gen, *conds = prev.generation, slices.Clone(prev.conditions)
	}
	base := obj.DeepCopyObject().(O)
	baseGen, baseConds := fields(base)
	gen, conds := fields(obj)
	*gen = c.ObservedGeneration
	meta.SetStatusCondition(conds, c)
	ready := c
	ready.Type = kofv1.ConditionReady
	meta.SetStatusCondition(conds, ready)
	if *gen == *baseGen && equality.Semantic.DeepEqual(*conds, *baseConds) {
		return false, nil
	}
	changed := Changed(meta.FindStatusCondition(*baseConds, kofv1.ConditionReady),
		metav1.Condition{Type: kofv1.ConditionReady, Status: c.Status, Reason: c.Reason, Message: c.Message})
	if err := cl.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("patch status of %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	mem.record(key, obj.GetResourceVersion(), *gen, *conds)
	return changed, nil
}
