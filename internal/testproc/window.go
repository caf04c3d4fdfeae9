package testproc

import (
	"time"

	"kof.dev/kof/exporters/window"
)

// WindowDelay returns the WINDOW_DELAY value that makes h (an hour that has ended) the newest closed hour of an
// exporter started within the next half hour: its clock minus the delay falls at most half an hour after h ends (0
// when h ended less than half an hour ago). Computed right before each start, it
// keeps an exporter on h when the clock passes the top of an hour between the test choosing h and the start (a
// fixed `WINDOW_DELAY=1h` then moves the exporter on to the next hour).
func WindowDelay(h window.Hour) string {
	return windowDelayAt(h, time.Now())
}

// windowDelayAt is WindowDelay for a start at now.
func windowDelayAt(h window.Hour, now time.Time) string {
	return max(0, now.Sub(h.End)-30*time.Minute).Round(time.Second).String()
}
