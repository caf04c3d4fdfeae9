package promxyservergroup

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// statusFields are where a group keeps its observed generation and conditions (phase.PatchStatus).
func statusFields(g *kofv1.PromxyServerGroup) (*int64, *[]metav1.Condition) {
	return &g.Status.ObservedGeneration, &g.Status.Conditions
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
		changed, err := phase.PatchStatus(ctx, r.Client, &r.statuses, "PromxyServerGroup", g, statusFields, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if changed {
			r.Recorder.Eventf(g, nil, phase.EventType(c), c.Reason, kofv1.ActionConfigurePromxy, "%s", c.Message)
		}
	}
	return errors.Join(errs...)
}
