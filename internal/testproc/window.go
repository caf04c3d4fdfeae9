package testproc

import (
	"time"

	"kof.dev/kof/exporters/window"
)

// WindowDelay returns the WINDOW_DELAY value that makes h the newest closed hour of an exporter started within the
// next half hour: its clock minus the delay falls half an hour after h ends. Computed right before each start, it
// keeps an exporter on h when the clock passes the top of an hour between the test choosing h and the start (a
// fixed `WINDOW_DELAY=1h` then moves the exporter on to the next hour).
func WindowDelay(h window.Hour) string {
	return (time.Since(h.End) - 30*time.Minute).Round(time.Second).String()
}
