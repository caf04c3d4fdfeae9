// Package phase is the one reconciler shape of the kof-operator's controllers (docs/style.md, "Reconcilers"):
// Get the object (NotFound ends the reconcile quietly) → Finalize (deletion and clean-up, or adding the finalizer
// when the object causes cluster-scoped children) → the phases in order → one deferred Publish of the conditions
// the phase outcomes give (a status patch, or Events for objects whose status belongs to others).
//
// A phase returns an Outcome and an error. The error is a transient API failure: the reconcile ends and is
// retried with backoff, and the outcome still reaches Publish with the phase's failure reason. An Outcome that
// Stops ends the later phases: invalid input (not retried until the input changes) or a dependency to wait for
// (Requeue). Conditions are computed by pure functions of the outcomes (Summary and the controllers' own).
package phase

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Outcome is what one phase found.
type Outcome struct {
	// Phase is the phase's name (set by Reconcile).
	Phase string
	// Failed is true when the phase found a problem; Reason (a kofv1.Reason*) and Message say which, naming the
	// key or field and the fix. Message alone is the success note of a phase that did not fail.
	Failed          bool
	Reason, Message string
	// Requeue asks for another reconcile after this long (waiting on a dependency).
	Requeue time.Duration
	// Stop ends the reconcile after this phase: the later phases need what it could not do.
	Stop bool
}

// Done is the outcome of a phase that did its duty; note is an optional success message.
func Done(note string) Outcome { return Outcome{Message: note} }

// Invalid is the outcome of a phase whose input is wrong: the later phases do not run, and nothing is retried
// until the input changes.
func Invalid(reason, message string) Outcome {
	return Outcome{Failed: true, Reason: reason, Message: message, Stop: true}
}

// Degraded is the outcome of a phase that did its duty with a default in place of a faulty setting: the later
// phases still run, the condition reports the problem.
func Degraded(reason, message string) Outcome {
	return Outcome{Failed: true, Reason: reason, Message: message}
}

// Wait is the outcome of a phase waiting on a dependency: the later phases do not run; the reconcile comes again
// after the given time.
func Wait(reason, message string, after time.Duration) Outcome {
	return Outcome{Failed: true, Reason: reason, Message: message, Requeue: after, Stop: true}
}

// Phase is one named step of a reconcile of objects of type T.
type Phase[T any] struct {
	// Name names the phase in outcomes.
	Name string
	// FailReason is the reason of the outcome when Run returns an error without one (kofv1.ReasonApplyFailed for
	// a write).
	FailReason string
	// Run does the step.
	Run func(context.Context, T) (Outcome, error)
}

// Controller is what every KOF controller implements; Reconcile drives it.
type Controller[T any] interface {
	// Get reads the object of req; false (and no error) when it is gone.
	Get(ctx context.Context, req reconcile.Request) (T, bool, error)
	// Finalize handles deletion and ownership: it cleans up and returns true when obj is being deleted (or is no
	// longer the controller's), and otherwise adds the finalizer when obj needs one and returns false.
	Finalize(ctx context.Context, obj T) (bool, error)
	// Phases lists obj's phases in order.
	Phases(obj T) []Phase[T]
	// Publish writes once what the outcomes say about obj: a status patch, or Events.
	Publish(ctx context.Context, obj T, outcomes []Outcome) error
}

// Reconcile runs c for req in the one shape (package documentation). It returns the shortest Requeue of the
// outcomes, and the first phase error joined with Publish's.
func Reconcile[T any](ctx context.Context, c Controller[T], req reconcile.Request) (res reconcile.Result, err error) {
	obj, ok, err := c.Get(ctx, req)
	if err != nil || !ok {
		return reconcile.Result{}, err
	}
	if done, err := c.Finalize(ctx, obj); err != nil || done {
		return reconcile.Result{}, err
	}
	var outcomes []Outcome
	defer func() {
		if perr := c.Publish(ctx, obj, outcomes); perr != nil {
			err = errors.Join(err, perr)
		}
	}()
	for _, p := range c.Phases(obj) {
		o, perr := p.Run(ctx, obj)
		o.Phase = p.Name
		if perr != nil {
			o.Failed, o.Stop, o.Message = true, true, perr.Error()
			if o.Reason == "" {
				o.Reason = p.FailReason
			}
			outcomes = append(outcomes, o)
			return reconcile.Result{}, perr
		}
		outcomes = append(outcomes, o)
		if o.Requeue > 0 && (res.RequeueAfter == 0 || o.Requeue < res.RequeueAfter) {
			res.RequeueAfter = o.Requeue
		}
		if o.Stop {
			break
		}
	}
	return res, nil
}

// Summary returns the condition of type the outcomes give an object of generation: False with the reason of the
// first failed outcome and the messages of every failed one ("; "-joined) when any failed, else True with reason
// success and the outcomes' success notes ("; "-joined, or fallback when there are none).
func Summary(conditionType string, outcomes []Outcome, success, fallback string, generation int64) metav1.Condition {
	c := metav1.Condition{Type: conditionType, Status: metav1.ConditionTrue, Reason: success,
		ObservedGeneration: generation}
	var failed, notes []string
	for _, o := range outcomes {
		switch {
		case o.Failed:
			if len(failed) == 0 {
				c.Status, c.Reason = metav1.ConditionFalse, o.Reason
			}
			failed = append(failed, o.Message)
		case o.Message != "":
			notes = append(notes, o.Message)
		}
	}
	switch {
	case len(failed) > 0:
		c.Message = strings.Join(failed, "; ")
	case len(notes) > 0:
		c.Message = strings.Join(notes, "; ")
	default:
		c.Message = fallback
	}
	return c
}

// EventType returns the Event type that publishes c: Normal when it is True, Warning otherwise.
func EventType(c metav1.Condition) string {
	if c.Status == metav1.ConditionTrue {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// Changed reports whether next is a transition from prev worth an Event: no previous condition, or another
// status, reason or message.
func Changed(prev *metav1.Condition, next metav1.Condition) bool {
	return prev == nil || prev.Status != next.Status || prev.Reason != next.Reason || prev.Message != next.Message
}
