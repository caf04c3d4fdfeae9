package dashboards

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"kof.dev/kof/chartlib/promql"
)

// testVars are the values Grafana gives the dashboard variables when every cluster is selected.
var testVars = map[string]string{ClusterVariable: ".*", MetricsVariable: MetricsDatasourceName}

func boards(t *testing.T) []Board {
	t.Helper()
	bs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 5 {
		t.Fatalf("%d dashboards, want 5 (fleet, storage, collectors, cost, components)", len(bs))
	}
	return bs
}

// TestRoundTrip: each dashboard's JSON unmarshals into the SDK's Grafana model (panels and Prometheus queries as
// their typed variants) and marshals back to the same bytes, so nothing in it is unknown to Grafana's schema.
func TestRoundTrip(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	for _, b := range boards(t) {
		data, err := JSON(b.Dashboard)
		if err != nil {
			t.Fatal(err)
		}
		var back dashboard.Dashboard
		if err := json.Unmarshal(data, &back); err != nil {
			t.Errorf("%s: unmarshal into dashboard.Dashboard: %v", b.Name, err)
			continue
		}
		again, err := JSON(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, again) {
			t.Errorf("%s: JSON changes through the SDK's types", b.Name)
		}
		if n := len(Queries(back)); n != len(Queries(b.Dashboard)) || n == 0 {
			t.Errorf("%s: %d queries after the round trip, %d before", b.Name, n, len(Queries(b.Dashboard)))
		}
	}
}

// TestShape: uid kof-<name>, the kof tag, the metrics and cluster variables, every panel on the metrics variable,
// unique panel ids.
func TestShape(t *testing.T) {
	for _, b := range boards(t) {
		d := b.Dashboard
		if deref(d.Uid) != "kof-"+b.Name {
			t.Errorf("%s: uid %q", b.Name, deref(d.Uid))
		}
		vars := map[string]dashboard.VariableType{}
		for _, v := range d.Templating.List {
			vars[v.Name] = v.Type
		}
		if vars[MetricsVariable] != dashboard.VariableTypeDatasource || vars[ClusterVariable] != dashboard.VariableTypeQuery {
			t.Errorf("%s: variables %v, want datasource %q and query %q", b.Name, vars, MetricsVariable, ClusterVariable)
		}
		ids := map[uint32]bool{}
		check := func(p dashboard.Panel) {
			if p.Id == nil || ids[*p.Id] {
				t.Errorf("%s: panel %q has no unique id", b.Name, deref(p.Title))
			} else {
				ids[*p.Id] = true
			}
			if p.Datasource == nil || deref(p.Datasource.Uid) != "${"+MetricsVariable+"}" {
				t.Errorf("%s: panel %q does not read the %s variable", b.Name, deref(p.Title), MetricsVariable)
			}
			if len(p.Targets) == 0 || deref(p.Description) == "" {
				t.Errorf("%s: panel %q needs a query and a description", b.Name, deref(p.Title))
			}
		}
		for _, p := range d.Panels {
			if p.Panel != nil {
				check(*p.Panel)
			}
			var pos *dashboard.GridPos
			if p.Panel != nil {
				pos = p.Panel.GridPos
			}
			if p.RowPanel != nil {
				pos = p.RowPanel.GridPos
			}
			if pos == nil || pos.X+pos.W > 24 {
				t.Errorf("%s: a panel lies outside the 24-column grid: %+v", b.Name, pos)
			}
		}
	}
}

// TestQueries: every query of every dashboard parses with metricsql and reads only metrics of the catalog.
func TestQueries(t *testing.T) {
	c, err := promql.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range boards(t) {
		exprs := Exprs(b, "5m", testVars)
		n += len(exprs)
		if err := promql.Check(exprs, c); err != nil {
			t.Error(err)
		}
	}
	if n < 50 {
		t.Errorf("%d queries in all dashboards, want at least 50", n)
	}
}

// TestPlantedUnknownMetric: a panel reading a metric no KOF component produces fails the check, naming the panel.
func TestPlantedUnknownMetric(t *testing.T) {
	c, err := promql.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	d, err := newBoard("planted", "Planted", "A dashboard with an unknown metric.", "up").
		WithPanel(timeSeries("Planted panel", "Reads an unknown metric.", "short",
			target{`sum by (cluster) (rate(kof_planted_unknown_total{cluster=~"$cluster"}[$__rate_interval]))`, ""})).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	err = promql.Check(Exprs(Board{Name: "planted", Dashboard: d}, "5m", testVars), c)
	if err == nil || !strings.Contains(err.Error(), "Planted panel") || !strings.Contains(err.Error(), "kof_planted_unknown_total") {
		t.Errorf("planted unknown metric: error = %v", err)
	}
}

// TestGenerated: both charts' JSON files are what the Go code builds (make generate writes them).
func TestGenerated(t *testing.T) {
	for _, dir := range ChartDirs {
		drift, err := Sync(filepath.Join("..", "..", dir), false)
		if err != nil {
			t.Fatal(err)
		}
		if len(drift) > 0 {
			t.Errorf("run make generate:\n%s", strings.Join(drift, "\n"))
		}
	}
}

func TestLabelValuesSelector(t *testing.T) {
	for in, want := range map[string]string{
		"label_values(up, cluster)":             "up",
		`label_values(up{job=~"a,b"}, cluster)`: `up{job=~"a,b"}`,
		"label_values(cluster)":                 "cluster",
		"up":                                    "up",
	} {
		if got := labelValuesSelector(in); got != want {
			t.Errorf("labelValuesSelector(%q) = %q, want %q", in, got, want)
		}
	}
}
