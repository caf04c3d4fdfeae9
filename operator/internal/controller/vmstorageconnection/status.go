package vmstorageconnection

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// actionConnect is the events.k8s.io action of this controller's events.
const actionConnect = "ConnectStorage"

// outcome is what one reconcile found for the reconciled connection.
type outcome struct {
	set, ok         bool
	reason, message string
}

// failure returns a failed outcome.
func failure(reason, message string) outcome {
	return outcome{set: true, reason: reason, message: message}
}

// statusFor returns the status o gives a connection of the given generation, starting from old.
func statusFor(old kofv1.VMStorageConnectionStatus, generation int64, o outcome) kofv1.VMStorageConnectionStatus {
	st := *old.DeepCopy()
	st.ObservedGeneration = generation
	status := metav1.ConditionFalse
	if o.ok {
		status = metav1.ConditionTrue
	}
	for _, t := range []string{kofv1.ConditionStorageConnected, kofv1.ConditionReady} {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: o.reason, Message: o.message, ObservedGeneration: generation,
		})
	}
	return st
}

// patchStatus patches the status of conn (as read at the start of the reconcile) when o changes it, and emits an
// event when Ready changes status or reason.
func (r *Reconciler) patchStatus(ctx context.Context, conn *kofv1.VMStorageConnection, o outcome) error {
	if !o.set {
		return nil
	}
	next := statusFor(conn.Status, conn.Generation, o)
	if equality.Semantic.DeepEqual(next, conn.Status) {
		return nil
	}
	before := meta.FindStatusCondition(conn.Status.Conditions, kofv1.ConditionReady)
	base := conn.DeepCopy()
	conn.Status = next
	if err := r.Client.Status().Patch(ctx, conn, client.MergeFrom(base)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patch status of VMStorageConnection %s/%s: %w", conn.Namespace, conn.Name, err)
	}
	if before != nil && before.Reason == o.reason && (before.Status == metav1.ConditionTrue) == o.ok {
		return nil
	}
	eventType := corev1.EventTypeWarning
	if o.ok {
		eventType = corev1.EventTypeNormal
	}
	r.Recorder.Eventf(conn, nil, eventType, o.reason, actionConnect, "%s", o.message)
	return nil
}
