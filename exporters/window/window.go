// Package window cuts time into the UTC hour windows the KOF exporters export, each half-open [Start, End): a
// sample stamped exactly on an hour boundary belongs to the hour that starts there and to no other.
//
// Sources: docs/cold-storage.md ("Windows") and docs/audit-logs.md ("Windows").
package window

import (
	"errors"
	"fmt"
	"time"
)

// Hour is one UTC hour window [Start, End), End = Start + 1h.
type Hour struct {
	// Start is the first instant of the window (UTC, on the hour).
	Start time.Time
	// End is the first instant after the window.
	End time.Time
}

// Of returns the hour window holding t (converted to UTC).
func Of(t time.Time) Hour {
	s := t.UTC().Truncate(time.Hour)
	return Hour{Start: s, End: s.Add(time.Hour)}
}

// Contains reports whether t lies in [Start, End).
func (h Hour) Contains(t time.Time) bool { return !t.Before(h.Start) && t.Before(h.End) }

// Next returns the hour window after h.
func (h Hour) Next() Hour { return Hour{Start: h.End, End: h.End.Add(time.Hour)} }

// Prev returns the hour window before h.
func (h Hour) Prev() Hour { return Hour{Start: h.Start.Add(-time.Hour), End: h.Start} }

// String returns the window as `YYYY-MM-DDTHH:00Z`, the form the exporters' logs and flags use.
func (h Hour) String() string { return h.Start.Format("2006-01-02T15Z") }

// Date returns the Hive partition value `dt` of the window: `YYYY-MM-DD`.
func (h Hour) Date() string { return h.Start.Format("2006-01-02") }

// HourOfDay returns the Hive partition value `hour` of the window: two digits `00`…`23`.
func (h Hour) HourOfDay() string { return h.Start.Format("15") }

// Plan says which windows one run looks at.
type Plan struct {
	// Delay is how long after a window's end the window is first exported, so that late data has arrived
	// (collectors batch and retry); at least 0.
	Delay time.Duration
	// CatchUp is how many closed windows back from the newest one a run looks at (1 = only the newest), so a run
	// that was missed, failed or found a window incomplete is caught up by the next one.
	CatchUp int
}

// Validate returns an error naming the field and the fix when p cannot plan any window.
func (p Plan) Validate() error {
	var errs []error
	if p.Delay < 0 {
		errs = append(errs, fmt.Errorf("window delay %s: must be zero or positive", p.Delay))
	}
	if p.CatchUp < 1 {
		errs = append(errs, fmt.Errorf("catch-up %d: must be at least 1 (1 = only the newest closed window)", p.CatchUp))
	}
	return errors.Join(errs...)
}

// Windows returns the windows a run at now exports, oldest first: the newest window whose End+Delay is not after
// now, and the CatchUp-1 windows before it. It returns an error when p is invalid.
func (p Plan) Windows(now time.Time) ([]Hour, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	newest := Of(now.Add(-p.Delay)).Prev()
	out := make([]Hour, p.CatchUp)
	for i := p.CatchUp - 1; i >= 0; i-- {
		out[i] = newest
		newest = newest.Prev()
	}
	return out, nil
}

// Range returns the windows from the one holding from up to the one before the one holding to, oldest first
// ([from, to) rounded out to hours). It returns an error when to is not after from or the range is longer than
// limit windows.
func Range(from, to time.Time, limit int) ([]Hour, error) {
	if !to.After(from) {
		return nil, fmt.Errorf("window range %s to %s: the end must be after the start", from.UTC(), to.UTC())
	}
	var out []Hour
	for h := Of(from); h.Start.Before(to); h = h.Next() {
		if len(out) == limit {
			return nil, fmt.Errorf("window range %s to %s: more than %d hours; narrow it", from.UTC(), to.UTC(), limit)
		}
		out = append(out, h)
	}
	return out, nil
}

// DelayFor returns the Delay that makes h, an hour that has ended, the newest window of a run started at now or up to
// half an hour later: now minus the delay falls at most half an hour after h ends (0 when h ended less than half an
// hour before now). A run given it exports h even when it starts after the top of the next hour, which a fixed delay
// would move on to the hour after h (WINDOW_DELAY for re-exporting one chosen hour, and the exporter tests).
func DelayFor(h Hour, now time.Time) time.Duration {
	return max(0, now.Sub(h.End)-30*time.Minute).Round(time.Second)
}
