package promxyservergroup

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Event actions (events.k8s.io `action`).
const (
	actionConfigure = "ConfigurePromxy"
)

// outcome is what one reconcile found for one PromxyServerGroup.
type outcome struct {
	// set is true once an outcome was decided; ok tells success from failure.
	set, ok bool
	// skip leaves the status alone (the group is being deleted).
	skip            bool
	reason, message string
}

// failure returns a failed outcome.
func failure(reason, message string) outcome {
	return outcome{set: true, reason: reason, message: message}
}

// markAll sets o on every group that has no outcome yet.
func markAll(outcomes []outcome, o outcome) {
	o.set = true
	for i := range outcomes {
		if !outcomes[i].set && !outcomes[i].skip {
			outcomes[i] = o
		}
	}
}

// conditions returns the status the outcome gives a group of the given generation.
func conditions(old kofv1.PromxyServerGroupStatus, generation int64, o outcome) kofv1.PromxyServerGroupStatus {
	st := *old.DeepCopy()
	st.ObservedGeneration = generation
	status := metav1.ConditionFalse
	if o.ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: kofv1.ConditionPromxyConfigured, Status: status, Reason: o.reason, Message: o.message, ObservedGeneration: generation,
	})
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: kofv1.ConditionReady, Status: status, Reason: o.reason, Message: o.message, ObservedGeneration: generation,
	})
	return st
}

// patchStatuses patches each group's status when it changed, and emits an event when Ready changes or a failure is
// new. A group deleted meanwhile is ignored.
func (r *Reconciler) patchStatuses(ctx context.Context, groups []kofv1.PromxyServerGroup, outcomes []outcome) error {
	var errs []error
	for i := range groups {
		g := &groups[i]
		o := outcomes[i]
		if o.skip || !o.set {
			continue
		}
		next := conditions(g.Status, g.Generation, o)
		if equality.Semantic.DeepEqual(next, g.Status) {
			continue
		}
		before := meta.FindStatusCondition(g.Status.Conditions, kofv1.ConditionReady)
		base := g.DeepCopy()
		g.Status = next
		if err := r.Client.Status().Patch(ctx, g, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("patch status of PromxyServerGroup %s/%s: %w", g.Namespace, g.Name, err))
			continue
		}
		r.event(g, before, o)
	}
	return errors.Join(errs...)
}

// event records a Normal event when the group becomes Ready and a Warning when a failure reason is new.
func (r *Reconciler) event(g *kofv1.PromxyServerGroup, before *metav1.Condition, o outcome) {
	changed := before == nil || before.Reason != o.reason || (before.Status == metav1.ConditionTrue) != o.ok
	if !changed {
		return
	}
	if o.ok {
		r.Recorder.Eventf(g, nil, corev1.EventTypeNormal, o.reason, actionConfigure, "%s", o.message)
		return
	}
	r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, o.reason, actionConfigure, "%s", o.message)
}
