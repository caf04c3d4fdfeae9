package window

import (
	"testing"
	"time"
)

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestOfBoundary(t *testing.T) {
	b := ts("2026-06-29T17:00:00Z")
	if got := Of(b); !got.Start.Equal(b) {
		t.Errorf("Of(boundary) starts %s, want %s", got.Start, b)
	}
	before := Of(b.Add(-time.Nanosecond))
	if before.Contains(b) {
		t.Error("the window before a boundary contains the boundary instant")
	}
	if !Of(b).Contains(b) {
		t.Error("the window starting at a boundary does not contain it")
	}
	if got := Of(ts("2026-06-29T19:30:00+02:00")); got.String() != "2026-06-29T17Z" {
		t.Errorf("Of(+02:00) = %s, want 2026-06-29T17Z (UTC)", got)
	}
	if h := Of(b); h.Date() != "2026-06-29" || h.HourOfDay() != "17" {
		t.Errorf("partition = %s/%s, want 2026-06-29/17", h.Date(), h.HourOfDay())
	}
}

func TestPlanWindows(t *testing.T) {
	cases := []struct {
		name    string
		plan    Plan
		now     string
		want    []string
		wantErr bool
	}{
		{"newest closed", Plan{Delay: 0, CatchUp: 1}, "2026-06-29T18:00:00Z", []string{"2026-06-29T17Z"}, false},
		{"delay holds back", Plan{Delay: 10 * time.Minute, CatchUp: 1}, "2026-06-29T18:05:00Z", []string{"2026-06-29T16Z"}, false},
		{"delay passed", Plan{Delay: 10 * time.Minute, CatchUp: 1}, "2026-06-29T18:10:00Z", []string{"2026-06-29T17Z"}, false},
		{"catch up", Plan{CatchUp: 3}, "2026-06-29T01:30:00Z", []string{"2026-06-28T22Z", "2026-06-28T23Z", "2026-06-29T00Z"}, false},
		{"no catch up", Plan{CatchUp: 0}, "2026-06-29T01:30:00Z", nil, true},
		{"negative delay", Plan{Delay: -time.Second, CatchUp: 1}, "2026-06-29T01:30:00Z", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.plan.Windows(ts(c.now))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i].String() != c.want[i] {
					t.Errorf("window %d = %s, want %s", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestRange(t *testing.T) {
	got, err := Range(ts("2026-06-29T17:10:00Z"), ts("2026-06-29T19:00:00Z"), 10)
	if err != nil || len(got) != 2 || got[0].String() != "2026-06-29T17Z" || got[1].String() != "2026-06-29T18Z" {
		t.Errorf("Range = %v, %v; want 17Z and 18Z", got, err)
	}
	if _, err := Range(ts("2026-06-29T17:00:00Z"), ts("2026-06-29T17:00:00Z"), 10); err == nil {
		t.Error("empty range: want an error")
	}
	if _, err := Range(ts("2026-06-01T00:00:00Z"), ts("2026-06-29T00:00:00Z"), 24); err == nil {
		t.Error("range over max: want an error")
	}
}
