package vmstorageconnection

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/phase"
)

// Connected returns the StorageConnected condition of the phase outcomes of a connection of generation
// (phase.Summary, reason Succeeded). Ready is the same condition under type Ready (the connection has no other duty).
func Connected(generation int64, outcomes []phase.Outcome) metav1.Condition {
	return phase.Summary(kofv1.ConditionStorageConnected, outcomes, kofv1.ReasonSucceeded, "connected", generation)
}

// statusFields are where a connection keeps its observed generation and conditions (phase.PatchStatus).
func statusFields(c *kofv1.VMStorageConnection) (*int64, *[]metav1.Condition) {
	return &c.Status.ObservedGeneration, &c.Status.Conditions
}

// Publish patches the status of the connection (as read at the start of the reconcile) when the outcomes change
// it, and emits an Event when Ready changes. A connection being deleted or gone is left alone.
func (r *Reconciler) Publish(ctx context.Context, s *state, outcomes []phase.Outcome) error {
	if !s.conn.DeletionTimestamp.IsZero() || len(outcomes) == 0 {
		return nil
	}
	conn := s.base
	c := Connected(conn.Generation, outcomes)
	changed, err := phase.PatchStatus(ctx, r.Client, &r.statuses, "VMStorageConnection", conn, statusFields, c)
	if err != nil {
		return err
	}
	if changed {
		r.Recorder.Eventf(conn, nil, phase.EventType(c), c.Reason, kofv1.ActionConnectStorage, "%s", c.Message)
	}
	return nil
}
