package proxy

import (
	"errors"
	"strings"
	"testing"
)

func TestLogsFilter(t *testing.T) {
	if got := acmeOnly.LogsFilter(); got != `"tenant":="acme"` {
		t.Errorf("one tenant: %s", got)
	}
	if got := acmeTwo.LogsFilter(); got != `"tenant":in("acme","acme-prod")` {
		t.Errorf("two tenants: %s", got)
	}
}

func TestRestrictLogsQL(t *testing.T) {
	for _, in := range []string{`*`, ``, `tenant:="globex"`, `* | union (tenant:="globex")`, `a:in(b:c | fields a)`,
		`* | join by (app) (tenant:="globex" | fields app)`} {
		got, err := RestrictLogsQL(in, acmeOnly, DefaultMaxQueryBytes)
		if err != nil {
			t.Errorf("RestrictLogsQL(%q): %v", in, err)
			continue
		}
		// The tenant filter is in the query and in each subquery.
		want := 1 + strings.Count(in, "(tenant") + strings.Count(in, "in(")
		if n := strings.Count(got, `tenant:=acme`); n < want {
			t.Errorf("RestrictLogsQL(%q) = %q: the tenant filter %d times, want %d", in, got, n, want)
		}
	}
	for in, reason := range map[string]string{`foo:(`: ReasonBadQuery, `* | stream_context before 5`: ReasonForbiddenPipe} {
		_, err := RestrictLogsQL(in, acmeOnly, DefaultMaxQueryBytes)
		var d *denial
		if !errors.As(err, &d) || d.reason != reason {
			t.Errorf("RestrictLogsQL(%q) error %v, want %s", in, err, reason)
		}
	}
	if got, err := RestrictLogsQL(`tenant:="globex"`, Scope{Admin: true}, DefaultMaxQueryBytes); err != nil || got != `tenant:="globex"` {
		t.Errorf("admin: %q %v", got, err)
	}
}

// FuzzRestrictLogsQL: whatever LogsQL query parses, the restricted query parses and holds the tenant filter.
func FuzzRestrictLogsQL(f *testing.F) {
	for _, s := range []string{`*`, `error`, `_stream:{app="x"} | stats count()`, `* | union (x)`, `a:in(* | fields a)`,
		`not tenant:=acme or x`, `* | sort by (_time) | limit 5`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, err := RestrictLogsQL(q, acmeOnly, DefaultMaxQueryBytes)
		if err != nil {
			return
		}
		if _, err := RestrictLogsQL(out, Scope{Admin: true}, 4*DefaultMaxQueryBytes); err != nil {
			t.Fatalf("restricted %q to %q, which does not parse: %v", q, out, err)
		}
		if !strings.Contains(out, `tenant:=acme`) {
			t.Fatalf("restricted %q to %q, without the tenant filter", q, out)
		}
	})
}
