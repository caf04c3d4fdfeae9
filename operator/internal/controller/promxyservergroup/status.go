package promxyservergroup

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/phase"
)

// Configured returns the PromxyConfigured condition of a group of generation: its own checks' failure when it has
// one (own), else the summary of the Secret's phase outcomes (phase.Summary, reason Succeeded). Ready is the same
// condition under type Ready (the group has no other duty).
func Configured(generation int64, own phase.Outcome, outcomes []phase.Outcome) metav1.Condition {
	all := outcomes
	if own.Failed {
		all = []phase.Outcome{own}
	}
	return phase.Summary(kofv1.ConditionPromxyConfigured, all, kofv1.ReasonSucceeded, "part of the promxy config",
		generation)
}

// statusFor returns the status c gives a group whose status is old.
func statusFor(old kofv1.PromxyServerGroupStatus, c metav1.Condition) kofv1.PromxyServerGroupStatus {
	st := *old.DeepCopy()
	st.ObservedGeneration = c.ObservedGeneration
	meta.SetStatusCondition(&st.Conditions, c)
	ready := c
	ready.Type = kofv1.ConditionReady
	meta.SetStatusCondition(&st.Conditions, ready)
	return st
}

// Publish patches each group's status when it changed, and emits an Event when Ready changes. A group deleted
// meanwhile, or being deleted, is left alone.
func (r *Reconciler) Publish(ctx context.Context, s *state, outcomes []phase.Outcome) error {
	var errs []error
	for i := range s.groups {
		g := &s.groups[i]
		if s.skip[i] {
			continue
		}
		c := Configured(g.Generation, s.own[i], outcomes)
		next := statusFor(g.Status, c)
		if equality.Semantic.DeepEqual(next, g.Status) {
			continue
		}
		before := meta.FindStatusCondition(g.Status.Conditions, kofv1.ConditionReady)
		changed := phase.Changed(before, metav1.Condition{Type: kofv1.ConditionReady, Status: c.Status, Reason: c.Reason,
			Message: c.Message})
		base := g.DeepCopy()
		g.Status = next
		if err := r.Client.Status().Patch(ctx, g, client.MergeFrom(base)); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("patch status of PromxyServerGroup %s/%s: %w", g.Namespace, g.Name, err))
			}
			continue
		}
		if changed {
			r.Recorder.Eventf(g, nil, phase.EventType(c), c.Reason, kofv1.ActionConfigurePromxy, "%s", c.Message)
		}
	}
	return errors.Join(errs...)
}
