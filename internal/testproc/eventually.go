package testproc

import (
	"context"
	"testing"
	"time"
)

// Eventually's polling: the first retry after firstPoll, each next one twice as late, at most maxPoll apart, so a
// condition that holds soon is seen soon and a slow one costs few calls.
const (
	firstPoll = 20 * time.Millisecond
	maxPoll   = 250 * time.Millisecond
)

// Eventually calls cond until it returns nil (retrying after 20 ms, then twice as late each time, at most every
// 250 ms), and fails the test (t.Fatalf) once timeout has passed, naming what was awaited and cond's last error. cond gets a context that ends at the deadline, so a condition
// that calls a server cannot outlive it. It is the one polling helper of KOF's tests: a state that can still change
// is pending until the deadline, never a failure before it.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	wait := firstPoll
	for {
		err := cond(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, maxPoll)
	}
}
