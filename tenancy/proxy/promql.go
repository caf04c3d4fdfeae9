package proxy

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/VictoriaMetrics/metricsql"

	"kof.dev/kof/operator/outputs"
)

// Scope is what one identity may read: every tenant (Admin) or the listed ones.
type Scope struct {
	Admin   bool
	Tenants []string
}

// metricsFilter returns the label filter that keeps the scope's tenants: `tenant="<t>"` for one tenant,
// `tenant=~"<t1>|<t2>"` (anchored, as every MetricsQL regexp is; names escaped) for several.
func (s Scope) metricsFilter() metricsql.LabelFilter {
	if len(s.Tenants) == 1 {
		return metricsql.LabelFilter{Label: outputs.TenantLabel, Value: s.Tenants[0]}
	}
	quoted := make([]string, len(s.Tenants))
	for i, t := range s.Tenants {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return metricsql.LabelFilter{Label: outputs.TenantLabel, Value: strings.Join(quoted, "|"), IsRegexp: true}
}

// labelWriters are the MetricsQL functions that set, copy, move or rewrite labels: given the tenant label as an
// argument they could present one tenant's series under another's name, so such queries are refused.
// Source: the MetricsQL label manipulation functions (docs.victoriametrics.com/victoriametrics/metricsql/).
var labelWriters = map[string]bool{
	"label_copy": true, "label_graphite_group": true, "label_join": true, "label_lowercase": true, "label_map": true,
	"label_move": true, "label_replace": true, "label_set": true, "label_transform": true, "label_uppercase": true,
}

// RestrictQuery parses the MetricsQL (or PromQL) query q and returns it with the scope's tenant filter appended to
// every selector, in every `or` group, subqueries, `@` expressions and function arguments included, so that the
// query reads only the scope's series. An admin scope gets q unchanged once it parses. The error is a denial: 400
// for a query that does not parse or is longer than maxBytes, for one that names the tenant label in a
// label-rewriting function (labelWriters).
func RestrictQuery(q string, s Scope, maxBytes int) (string, error) {
	if len(q) > maxBytes {
		return "", deny(http.StatusBadRequest, ReasonTooLarge, "the query is %d bytes, more than the limit of %d", len(q), maxBytes)
	}
	e, err := metricsql.Parse(q)
	if err != nil {
		return "", deny(http.StatusBadRequest, ReasonBadQuery, "cannot parse the query: %v", err)
	}
	if s.Admin {
		return q, nil
	}
	var refused error
	metricsql.VisitAll(e, func(x metricsql.Expr) {
		switch t := x.(type) {
		case *metricsql.FuncExpr:
			if labelWriters[strings.ToLower(t.Name)] {
				for _, a := range t.Args {
					if se, ok := a.(*metricsql.StringExpr); ok && se.S == outputs.TenantLabel && refused == nil {
						refused = deny(http.StatusBadRequest, ReasonTenantRewrite,
							"%s may not name the %q label: it would relabel another tenant's series", t.Name, outputs.TenantLabel)
					}
				}
			}
		case *metricsql.MetricExpr:
			restrict(t, s)
		}
	})
	if refused != nil {
		return "", refused
	}
	return string(e.AppendString(nil)), nil
}

// restrict appends the scope's tenant filter to each `or` group of me (an empty selector gets one group).
func restrict(me *metricsql.MetricExpr, s Scope) {
	f := s.metricsFilter()
	if len(me.LabelFilterss) == 0 {
		me.LabelFilterss = [][]metricsql.LabelFilter{{f}}
		return
	}
	for i := range me.LabelFilterss {
		me.LabelFilterss[i] = append(me.LabelFilterss[i], f)
	}
}

// RestrictSelector parses a series selector (a `match[]` value of series, labels, label values, export and
// federate) and returns it restricted like RestrictQuery. Anything but a plain selector is a 400 denial.
func RestrictSelector(sel string, s Scope, maxBytes int) (string, error) {
	if len(sel) > maxBytes {
		return "", deny(http.StatusBadRequest, ReasonTooLarge, "match[] is %d bytes, more than the limit of %d", len(sel), maxBytes)
	}
	e, err := metricsql.Parse(sel)
	if err != nil {
		return "", deny(http.StatusBadRequest, ReasonBadQuery, "cannot parse match[] %q: %v", clip(sel), err)
	}
	me, ok := e.(*metricsql.MetricExpr)
	if !ok {
		return "", deny(http.StatusBadRequest, ReasonBadQuery, "match[] %q is not a series selector", clip(sel))
	}
	if s.Admin {
		return sel, nil
	}
	restrict(me, s)
	return string(me.AppendString(nil)), nil
}

// TenantSelector is the selector of every series of the scope, the `match[]` added when a request names none.
func (s Scope) TenantSelector() string {
	me := &metricsql.MetricExpr{}
	restrict(me, s)
	return string(me.AppendString(nil))
}

func clip(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%s...", s[:80])
	}
	return s
}
