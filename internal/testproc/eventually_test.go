package testproc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// fatalRecorder records Fatalf instead of stopping the test, so Eventually's failure can be asserted.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	Eventually(t, 5*time.Second, "third call", func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if calls != 3 {
		t.Errorf("calls = %d, want 3", calls)
	}
}

func TestEventuallyFailsWithTheLastErrorAfterTheTimeout(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	start := time.Now()
	func() {
		defer func() {
			if r := recover(); r != rec {
				panic(r)
			}
		}()
		Eventually(rec, 600*time.Millisecond, "the ConfigMap", func(ctx context.Context) error {
			if _, ok := ctx.Deadline(); !ok {
				return errors.New("no deadline on the context")
			}
			return errors.New("data[a] = 1, want 2")
		})
	}()
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Errorf("failed after %s, before the timeout", d)
	}
	want := "the ConfigMap: not within 600ms: data[a] = 1, want 2"
	if rec.msg != want {
		t.Errorf("failure = %q, want %q", rec.msg, want)
	}
}
