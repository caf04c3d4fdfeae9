package vmstorageconnection

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/phase"
)

// Connected returns the StorageConnected condition of the phase outcomes of a connection of generation
// (phase.Summary, reason Succeeded). Ready is the same condition under type Ready (the connection has no other duty).
func Connected(generation int64, outcomes []phase.Outcome) metav1.Condition {
	return phase.Summary(kofv1.ConditionStorageConnected, outcomes, kofv1.ReasonSucceeded, "connected", generation)
}

// statusFor returns the status c gives a connection whose status is old.
func statusFor(old kofv1.VMStorageConnectionStatus, c metav1.Condition) kofv1.VMStorageConnectionStatus {
	st := *old.DeepCopy()
	st.ObservedGeneration = c.ObservedGeneration
	meta.SetStatusCondition(&st.Conditions, c)
	ready := c
	ready.Type = kofv1.ConditionReady
	meta.SetStatusCondition(&st.Conditions, ready)
	return st
}

// Publish patches the status of the connection (as read at the start of the reconcile) when the outcomes change
// it, and emits an Event when Ready changes. A connection being deleted or gone is left alone.
func (r *Reconciler) Publish(ctx context.Context, s *state, outcomes []phase.Outcome) error {
	if !s.conn.DeletionTimestamp.IsZero() || len(outcomes) == 0 {
		return nil
	}
	conn := s.base
	c := Connected(conn.Generation, outcomes)
	next := statusFor(conn.Status, c)
	if equality.Semantic.DeepEqual(next, conn.Status) {
		return nil
	}
	before := meta.FindStatusCondition(conn.Status.Conditions, kofv1.ConditionReady)
	changed := phase.Changed(before, metav1.Condition{Type: kofv1.ConditionReady, Status: c.Status, Reason: c.Reason,
		Message: c.Message})
	base := conn.DeepCopy()
	conn.Status = next
	if err := r.Client.Status().Patch(ctx, conn, client.MergeFrom(base)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patch status of VMStorageConnection %s/%s: %w", conn.Namespace, conn.Name, err)
	}
	if changed {
		r.Recorder.Eventf(conn, nil, phase.EventType(c), c.Reason, kofv1.ActionConnectStorage, "%s", c.Message)
	}
	return nil
}
