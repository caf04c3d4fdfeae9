// Package promql checks the PromQL/MetricsQL expressions KOF ships (its alert and record rules, its dashboards'
// panel queries) with VictoriaMetrics' own parser (github.com/VictoriaMetrics/metricsql), and holds the catalog of
// the metric names KOF's deployed components produce (catalog.yaml, each name with its source), against which every
// metric an expression reads is checked.
package promql

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/VictoriaMetrics/metricsql"
)

// Expr is one expression to check and where it comes from.
type Expr struct {
	// Where names the expression for errors, e.g. `charts/kof-mothership/files/default-rules.yaml: kof-storage/KOFStorageDiskFull`.
	Where string
	// Query is the expression text, with dashboard variables already expanded (see Expand).
	Query string
}

// Metrics parses query with metricsql and returns the metric names it reads, sorted and unique. Errors: a parse
// error, or a selector without a literal metric name (`{job="x"}`, `{__name__=~"a|b"}`), which the catalog check
// could not follow; the error names the selector and the fix (write each metric name out).
func Metrics(query string) ([]string, error) {
	e, err := metricsql.Parse(query)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	seen := map[string]bool{}
	var errs []error
	metricsql.VisitAll(e, func(x metricsql.Expr) {
		me, ok := x.(*metricsql.MetricExpr)
		if !ok {
			return
		}
		for _, group := range me.LabelFilterss {
			name, ok := literalName(group)
			if !ok {
				errs = append(errs, fmt.Errorf("selector %s has no literal metric name; write each metric name out so that it can be checked against the catalog", me.AppendString(nil)))
				continue
			}
			seen[name] = true
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// literalName returns the `__name__` filter of one or-group when it is a plain equality.
func literalName(group []metricsql.LabelFilter) (string, bool) {
	for _, f := range group {
		if f.Label == "__name__" {
			return f.Value, !f.IsRegexp && !f.IsNegative && f.Value != ""
		}
	}
	return "", false
}

// Check parses every expression and checks each metric it reads against the catalog. It returns every problem at
// once, each naming the expression's Where and, for an unknown metric, the fix (add it to catalog.yaml with its
// source, or correct the name); nil when all hold.
func Check(exprs []Expr, c Catalog) error {
	var errs []error
	for _, e := range exprs {
		names, err := Metrics(e.Query)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Where, err))
			continue
		}
		for _, n := range names {
			if _, ok := c.Source(n); !ok {
				errs = append(errs, fmt.Errorf("%s: metric %q is not produced by any KOF component in chartlib/promql/catalog.yaml; correct the name or add it there with its source", e.Where, n))
			}
		}
	}
	return errors.Join(errs...)
}

// Expand replaces Grafana's dashboard variables in a panel query with values a query API accepts, so the query can
// be parsed and executed outside Grafana: `$__rate_interval`, `$__interval` and `$__range` (and their `${...}`
// forms) by the given window, `$var` / `${var}` by vars[var]. Longer names are replaced first, so `$cluster_role`
// is never read as `$cluster`. An unknown variable is left in place, and then fails to parse.
func Expand(query, window string, vars map[string]string) string {
	all := map[string]string{"__rate_interval": window, "__interval": window, "__range": window}
	for k, v := range vars {
		all[k] = v
	}
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || (len(names[i]) == len(names[j]) && names[i] < names[j])
	})
	pairs := make([]string, 0, 4*len(names))
	for _, n := range names {
		pairs = append(pairs, "${"+n+"}", all[n], "$"+n, all[n])
	}
	return strings.NewReplacer(pairs...).Replace(query)
}
