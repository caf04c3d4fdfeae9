package proxy

import (
	"errors"
	"net/http"
	"testing"

	"github.com/VictoriaMetrics/metricsql"
)

var (
	acmeOnly = Scope{Tenants: []string{"acme"}}
	acmeTwo  = Scope{Tenants: []string{"acme", "acme-prod"}}
)

func TestRestrictQuery(t *testing.T) {
	for _, tt := range []struct {
		in    string
		scope Scope
		want  string
	}{
		{`up`, acmeOnly, `up{tenant="acme"}`},
		{`up{tenant="globex"}`, acmeOnly, `up{tenant="globex",tenant="acme"}`},
		{`{__name__=~".+"}`, acmeOnly, `{__name__=~".+",tenant="acme"}`},
		{`up{job="a" or tenant="globex"}`, acmeOnly, `up{job="a",tenant="acme" or tenant="globex",tenant="acme"}`},
		{`rate(x[5m]) or y offset 1m`, acmeOnly, `rate(x{tenant="acme"}[5m]) or (y{tenant="acme"} offset 1m)`},
		{`max_over_time(x[1h:5m]) @ end()`, acmeOnly, `max_over_time(x{tenant="acme"}[1h:5m]) @ end()`},
		{`x @ scalar(y)`, acmeOnly, `x{tenant="acme"} @ scalar(y{tenant="acme"})`},
		{`sum without (tenant) (x)`, acmeOnly, `sum(x{tenant="acme"}) without(tenant)`},
		{`WITH (s = {tenant="globex"}) s`, acmeOnly, `{tenant="globex",tenant="acme"}`},
		{`x`, acmeTwo, `x{tenant=~"acme|acme-prod"}`},
		{`x`, Scope{Tenants: []string{"a.b", "c"}}, `x{tenant=~"a\\.b|c"}`},
		{`vector(1)`, acmeOnly, `vector(1)`},
		{`label_replace(x, "team", "$1", "job", "(.*)")`, acmeOnly, `label_replace(x{tenant="acme"}, "team", "$1", "job", "(.*)")`},
		{`x{tenant="globex"}`, Scope{Admin: true}, `x{tenant="globex"}`},
	} {
		got, err := RestrictQuery(tt.in, tt.scope, DefaultMaxQueryBytes)
		if err != nil {
			t.Errorf("RestrictQuery(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("RestrictQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRestrictQueryRefuses(t *testing.T) {
	for in, reason := range map[string]string{
		`x{`: ReasonBadQuery,
		`label_replace(x, "tenant", "g", "", "")`: ReasonTenantRewrite,
		`label_join(x, "tenant", ",", "job")`:     ReasonTenantRewrite,
		`sum(label_set(x, "tenant", "globex"))`:   ReasonTenantRewrite,
		`label_copy(x, "job", "tenant")`:          ReasonTenantRewrite,
		`LABEL_MOVE(x, "job", "tenant")`:          ReasonTenantRewrite,
		`up + ` + string(make([]byte, 100)):       ReasonTooLarge,
	} {
		_, err := RestrictQuery(in, acmeOnly, 64)
		var d *denial
		if !errors.As(err, &d) || d.reason != reason || d.status != http.StatusBadRequest {
			t.Errorf("RestrictQuery(%q) error %v, want a 400 %s", in, err, reason)
		}
	}
}

func TestRestrictSelector(t *testing.T) {
	got, err := RestrictSelector(`{__name__=~"kof_.*" or job="x"}`, acmeOnly, DefaultMaxQueryBytes)
	if want := `{__name__=~"kof_.*",tenant="acme" or job="x",tenant="acme"}`; err != nil || got != want {
		t.Errorf("RestrictSelector = %q, %v; want %q", got, err, want)
	}
	for _, in := range []string{`sum(up)`, `rate(up[5m])`, `1`, `up{`} {
		if _, err := RestrictSelector(in, acmeOnly, DefaultMaxQueryBytes); err == nil {
			t.Errorf("RestrictSelector(%q) accepted a non-selector", in)
		}
	}
	if got := acmeTwo.TenantSelector(); got != `{tenant=~"acme|acme-prod"}` {
		t.Errorf("TenantSelector = %q", got)
	}
}

// FuzzRestrictQuery: whatever query parses, the restricted query parses too and every selector in it, in every
// `or` group, carries the scope's tenant filter.
func FuzzRestrictQuery(f *testing.F) {
	for _, s := range []string{`up`, `x{a="b" or c="d"}`, `rate(x[5m] offset 1m) @ end()`, `sum without(tenant) (x)`,
		`WITH (f(a) = a + {tenant="g"}) f(y)`, `max_over_time((x or y)[1h:1m])`, `{__name__=~".+"}`, `label_replace(x,"t","$1","j","(.*)")`,
		`x and on(tenant) y{tenant="globex"}`, `topk(3, {__name__=~"a|b"}) keep_metric_names`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, err := RestrictQuery(q, acmeTwo, DefaultMaxQueryBytes)
		if err != nil {
			return
		}
		e, err := metricsql.Parse(out)
		if err != nil {
			t.Fatalf("restricted %q to %q, which does not parse: %v", q, out, err)
		}
		metricsql.VisitAll(e, func(x metricsql.Expr) {
			me, ok := x.(*metricsql.MetricExpr)
			if !ok {
				return
			}
			if len(me.LabelFilterss) == 0 {
				t.Fatalf("restricted %q to %q: an empty selector", q, out)
			}
			for _, g := range me.LabelFilterss {
				found := false
				for _, lf := range g {
					found = found || (lf == acmeTwo.metricsFilter())
				}
				if !found {
					t.Fatalf("restricted %q to %q: a selector group without the tenant filter", q, out)
				}
			}
		})
	})
}
