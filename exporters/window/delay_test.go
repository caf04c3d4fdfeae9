package window

import (
	"testing"
	"time"
)

// A run given DelayFor(h) with one hour of catch-up exports exactly h, also when it starts after the top of the next
// hour (regression: the benchmarks' fixed WINDOW_DELAY=1h moved an exporter started at 12:00:00 on to the hour after
// theirs, and it exported 0 events).
func TestDelayForKeepsTheRunOnItsHour(t *testing.T) {
	h := Of(time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
	// The delay computed a second before the top of an hour, 1 to 3 hours after h, a minute into it, and later.
	for _, at := range []time.Time{h.End.Add(time.Hour - time.Second), h.End.Add(2*time.Hour - time.Second),
		h.End.Add(3*time.Hour - time.Second), h.End.Add(time.Minute), h.End.Add(61 * time.Minute)} {
		delay, err := ParseDuration(EnvDelay, DelayFor(h, at).String())
		if err != nil {
			t.Fatal(err)
		}
		plan := Plan{Delay: delay, CatchUp: 1}
		// The start at once, and the same start up to 29 minutes later (past the top of the hour).
		for _, later := range []time.Duration{0, 2 * time.Second, 29 * time.Minute} {
			got, err := plan.Windows(at.Add(later))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != h {
				t.Errorf("delay %s computed at %s, start %s later: windows %v, want [%s]", delay,
					at.Format(time.TimeOnly), later, got, h)
			}
		}
	}
}
