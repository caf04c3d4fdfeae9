package phase

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// recorder is a Controller over a string that records the calls and outcomes.
type recorder struct {
	gone, finalized bool
	phases          []Phase[string]
	calls           []string
	published       []Outcome
}

func (r *recorder) Get(_ context.Context, req reconcile.Request) (string, bool, error) {
	r.calls = append(r.calls, "get")
	return req.Name, !r.gone, nil
}

func (r *recorder) Finalize(context.Context, string) (bool, error) {
	r.calls = append(r.calls, "finalize")
	return r.finalized, nil
}

func (r *recorder) Phases(string) []Phase[string] { return r.phases }

func (r *recorder) Publish(_ context.Context, _ string, o []Outcome) error {
	r.calls = append(r.calls, "publish")
	r.published = o
	return nil
}

func step(name string, o Outcome, err error, calls *[]string) Phase[string] {
	return Phase[string]{Name: name, FailReason: "ApplyFailed", Run: func(context.Context, string) (Outcome, error) {
		*calls = append(*calls, name)
		return o, err
	}}
}

func TestReconcile(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "x"}}
	r := &recorder{}
	r.phases = []Phase[string]{
		step("a", Done("a done"), nil, &r.calls),
		step("b", Degraded("InvalidAnnotation", "bad key"), nil, &r.calls),
		step("c", Wait("Pending", "waiting", time.Minute), nil, &r.calls),
		step("d", Done(""), nil, &r.calls),
	}
	res, err := Reconcile(context.Background(), r, req)
	if err != nil || res.RequeueAfter != time.Minute {
		t.Fatalf("Reconcile = %+v, %v; want requeue after 1m", res, err)
	}
	if d := cmp.Diff([]string{"get", "finalize", "a", "b", "c", "publish"}, r.calls); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if len(r.published) != 3 || r.published[1].Phase != "b" {
		t.Errorf("published %+v, want the outcomes of a, b, c", r.published)
	}

	// A transient error ends the reconcile and still publishes the failing phase with its reason.
	r = &recorder{}
	r.phases = []Phase[string]{step("a", Outcome{}, errors.New("apply: conflict"), &r.calls), step("b", Done(""), nil, &r.calls)}
	if _, err := Reconcile(context.Background(), r, req); err == nil {
		t.Fatal("want the phase error")
	}
	if len(r.published) != 1 || r.published[0].Reason != "ApplyFailed" || !r.published[0].Failed {
		t.Errorf("published %+v, want one ApplyFailed outcome", r.published)
	}

	// Gone or finalized: no phases, no publish.
	for _, r := range []*recorder{{gone: true}, {finalized: true}} {
		r.phases = []Phase[string]{step("a", Done(""), nil, &r.calls)}
		if _, err := Reconcile(context.Background(), r, req); err != nil {
			t.Fatal(err)
		}
		for _, c := range r.calls {
			if c == "a" || c == "publish" {
				t.Errorf("calls %v: no phase or publish wanted", r.calls)
			}
		}
	}
}

func TestSummary(t *testing.T) {
	ok := Summary("Ready", []Outcome{Done("x"), Done(""), Done("y")}, "Succeeded", "fine", 3)
	if ok.Status != metav1.ConditionTrue || ok.Reason != "Succeeded" || ok.Message != "x; y" || ok.ObservedGeneration != 3 {
		t.Errorf("success = %+v", ok)
	}
	if c := Summary("Ready", nil, "Succeeded", "fine", 1); c.Message != "fine" {
		t.Errorf("no notes: message %q, want the fallback", c.Message)
	}
	bad := Summary("Ready", []Outcome{Done("x"), Degraded("A", "first"), Invalid("B", "second")}, "Succeeded", "", 1)
	if bad.Status != metav1.ConditionFalse || bad.Reason != "A" || bad.Message != "first; second" {
		t.Errorf("failure = %+v, want reason A and both messages", bad)
	}
}

func TestMemory(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	m := &Memory{Recorder: rec, Action: "Configure"}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}
	c := metav1.Condition{Type: "T", Status: metav1.ConditionFalse, Reason: "Bad", Message: "m1"}
	if !m.Publish(obj, c) || m.Publish(obj, c) {
		t.Error("first Publish must emit, the same condition again must not")
	}
	c.Message = "m2"
	if !m.Publish(obj, c) {
		t.Error("a new message must emit")
	}
	if got, ok := m.Condition(types.NamespacedName{Namespace: "ns", Name: "cm"}); !ok || got.Message != "m2" {
		t.Errorf("Condition = %+v, %v", got, ok)
	}
	if n := len(rec.Events); n != 2 {
		t.Fatalf("events = %d, want 2", n)
	}
	if e := <-rec.Events; !strings.HasPrefix(e, "Warning Bad") {
		t.Errorf("event %q, want a Warning with reason Bad", e)
	}
	m.Forget(types.NamespacedName{Namespace: "ns", Name: "cm"})
	if !m.Publish(obj, c) {
		t.Error("after Forget the condition is new again")
	}
}
