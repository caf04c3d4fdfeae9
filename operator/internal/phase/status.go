package phase

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// StatusFields returns where an object of a KOF kind keeps its observed generation and its conditions.
type StatusFields[O client.Object] func(O) (observedGeneration *int64, conditions *[]metav1.Condition)

// PatchStatus is the status publish of a KOF kind with one duty: obj gets condition c, c again under type Ready,
// and c's observed generation, and its status is patched when that changed it. It reports whether Ready changed
// (the caller emits its Event then). An object gone meanwhile is no error and no change; any other failure is
// returned naming kind and the object.
func PatchStatus[O client.Object](ctx context.Context, cl client.Client, kind string, obj O, fields StatusFields[O],
	c metav1.Condition) (readyChanged bool, err error) {
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
	return changed, nil
}
