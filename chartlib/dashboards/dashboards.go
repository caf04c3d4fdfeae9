// Package dashboards holds KOF's own Grafana dashboards, written as code with the Grafana Foundation SDK
// (github.com/grafana/grafana-foundation-sdk/go), and writes them as the JSON files of charts/kof-dashboards, which
// wraps each in a grafana-operator GrafanaDashboard (`make generate`; `make verify` fails when they drift).
//
// Every dashboard reads metrics through the datasource variable `metrics` (the promxy datasource "KOF metrics" of
// charts/kof-mothership, templates/grafanadatasource.yaml) and has a `cluster` variable; docs/dashboards.md lists
// them and what each panel shows.
package dashboards

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"kof.dev/kof/chartlib/promql"
)

const (
	// MetricsVariable is the datasource variable every panel query uses.
	MetricsVariable = "metrics"
	// ClusterVariable is the cluster variable every dashboard has; queries filter with `cluster=~"$cluster"`.
	ClusterVariable = "cluster"
	// MetricsDatasourceName is the Grafana datasource the `metrics` variable selects by default: promxy, as named by
	// charts/kof-mothership templates/grafanadatasource.yaml.
	MetricsDatasourceName = "KOF metrics"
	// Tag is put on every KOF dashboard.
	Tag = "kof"
)

// Board is one KOF dashboard: Name is its file name in charts/kof-dashboards/files/dashboards (without `.json`) and
// the suffix of its GrafanaDashboard object.
type Board struct {
	Name      string
	Dashboard dashboard.Dashboard
}

// All builds every KOF dashboard, in a fixed order. Errors: any builder error, naming the dashboard.
func All() ([]Board, error) {
	builders := []struct {
		name  string
		build func() *dashboard.DashboardBuilder
	}{
		{"fleet", fleet},
		{"storage", storage},
		{"collectors", collectors},
		{"cost", cost},
		{"components", components},
	}
	out := make([]Board, 0, len(builders))
	var errs []error
	for _, b := range builders {
		d, err := b.build().Build()
		if err != nil {
			errs = append(errs, fmt.Errorf("build dashboard %s: %w", b.name, err))
			continue
		}
		numberPanels(&d)
		out = append(out, Board{Name: b.name, Dashboard: d})
	}
	return out, errors.Join(errs...)
}

// numberPanels gives every panel and row a unique id, 1, 2, ... in layout order (Grafana keys panel links, the
// panel editor and library panels by id).
func numberPanels(d *dashboard.Dashboard) {
	var id uint32
	for i := range d.Panels {
		id++
		if p := d.Panels[i].Panel; p != nil {
			p.Id = cog.ToPtr(id)
		}
		if r := d.Panels[i].RowPanel; r != nil {
			r.Id = id
			for j := range r.Panels {
				id++
				r.Panels[j].Id = cog.ToPtr(id)
			}
		}
	}
}

// JSON returns a dashboard as indented JSON with a final newline, the form stored in the chart.
func JSON(d dashboard.Dashboard) ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal dashboard %q: %w", deref(d.Uid), err)
	}
	return append(b, '\n'), nil
}

// Query is one Prometheus panel query of a dashboard.
type Query struct {
	// Panel is the panel title.
	Panel string
	// Expr is the query as Grafana sends it, variables not expanded.
	Expr string
}

// Queries returns every Prometheus query of a dashboard's panels (rows included) and of its query variables, in
// order; a variable's query is reported with Panel `variable <name>`, its `label_values(metric, label)` form
// turned into the selector `metric`.
func Queries(d dashboard.Dashboard) []Query {
	var out []Query
	add := func(p dashboard.Panel) {
		for _, t := range p.Targets {
			if q, ok := t.(prometheus.Dataquery); ok {
				out = append(out, Query{Panel: deref(p.Title), Expr: q.Expr})
			}
			if q, ok := t.(*prometheus.Dataquery); ok {
				out = append(out, Query{Panel: deref(p.Title), Expr: q.Expr})
			}
		}
	}
	for _, p := range d.Panels {
		if p.Panel != nil {
			add(*p.Panel)
		}
		if p.RowPanel != nil {
			for _, inner := range p.RowPanel.Panels {
				add(inner)
			}
		}
	}
	if d.Templating.List != nil {
		for _, v := range d.Templating.List {
			if v.Type == dashboard.VariableTypeQuery && v.Query != nil && v.Query.String != nil {
				out = append(out, Query{Panel: "variable " + v.Name, Expr: labelValuesSelector(*v.Query.String)})
			}
		}
	}
	return out
}

// labelValuesSelector turns Grafana's `label_values(selector, label)` into `selector`; other text is returned as is.
func labelValuesSelector(q string) string {
	const prefix = "label_values("
	if len(q) > len(prefix) && q[:len(prefix)] == prefix && q[len(q)-1] == ')' {
		inner := q[len(prefix) : len(q)-1]
		depth := 0
		for i := len(inner) - 1; i >= 0; i-- {
			switch inner[i] {
			case ')', '}':
				depth++
			case '(', '{':
				depth--
			case ',':
				if depth == 0 {
					return inner[:i]
				}
			}
		}
		return inner
	}
	return q
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// metricsRef is the datasource of every panel and query: the `metrics` variable.
func metricsRef() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${" + MetricsVariable + "}")}
}

// newBoard starts a KOF dashboard: uid `kof-<name>`, the KOF tag, a 6-hour window, the `metrics` datasource
// variable and the `cluster` variable over the clusters whose metrics carry the label `cluster`, read from
// clusterSource (a metric every cluster of interest sends).
func newBoard(name, title, description, clusterSource string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid("kof-"+name).
		Description(description).
		Tags([]string{Tag}).
		Time("now-6h", "now").
		Refresh("1m").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder(MetricsVariable).
			Label("Metrics").
			Type("prometheus").
			Regex("/^" + MetricsDatasourceName + "$/").
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: cog.ToPtr(MetricsDatasourceName)}, Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(MetricsDatasourceName)}})).
		WithVariable(dashboard.NewQueryVariableBuilder(ClusterVariable).
			Label("Cluster").
			Datasource(metricsRef()).
			Query(dashboard.StringOrMap{String: cog.ToPtr(fmt.Sprintf("label_values(%s, cluster)", clusterSource))}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Sort(dashboard.VariableSortAlphabeticalAsc).
			Multi(true).
			IncludeAll(true).
			AllValue(".*"))
}

// target is one query of a panel: its expression and legend.
type target struct {
	expr, legend string
}

func promTargets(ts []target, instant bool) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], 0, len(ts))
	for i, t := range ts {
		q := prometheus.NewDataqueryBuilder().
			Datasource(metricsRef()).
			RefId(string(rune('A' + i))).
			Expr(t.expr).
			LegendFormat(t.legend)
		if instant {
			q = q.Instant().Format(prometheus.PromQueryFormatTable)
		}
		out = append(out, q)
	}
	return out
}

// timeSeries is a time-series panel of half the dashboard's width.
func timeSeries(title, description, unit string, ts ...target) cog.Builder[dashboard.Panel] {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Unit(unit).
		Datasource(metricsRef()).
		Targets(promTargets(ts, false)).
		Height(8).
		Span(12).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"lastNotNull", "max"}))
}

// statValue is a single-value panel of a quarter of the dashboard's width, showing the last value.
func statValue(title, description, unit string, ts ...target) cog.Builder[dashboard.Panel] {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Unit(unit).
		Datasource(metricsRef()).
		Targets(promTargets(ts, true)).
		Height(4).
		Span(6).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
}

// tableOf is a full-width table of instant query results, one row per series.
func tableOf(title, description, unit string, ts ...target) cog.Builder[dashboard.Panel] {
	return table.NewPanelBuilder().
		Title(title).
		Description(description).
		Unit(unit).
		Datasource(metricsRef()).
		Targets(promTargets(ts, true)).
		Height(8).
		Span(24)
}

// row is a dashboard row.
func row(title string) cog.Builder[dashboard.RowPanel] {
	return dashboard.NewRowBuilder(title)
}

// Exprs returns a board's queries as expressions to check or execute, Grafana variables expanded (promql.Expand with
// window and vars), each Where `dashboard <name>: <panel>`.
func Exprs(b Board, window string, vars map[string]string) []promql.Expr {
	qs := Queries(b.Dashboard)
	out := make([]promql.Expr, 0, len(qs))
	for _, q := range qs {
		out = append(out, promql.Expr{Where: fmt.Sprintf("dashboard %s: %s", b.Name, q.Panel), Query: promql.Expand(q.Expr, window, vars)})
	}
	return out
}
