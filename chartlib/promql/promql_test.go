package promql

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const rulesFile = "charts/kof-mothership/files/default-rules.yaml"

func readRules(t *testing.T) []Rule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := ParseRules(data)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func TestMetrics(t *testing.T) {
	cases := []struct {
		query string
		want  []string
		err   string
	}{
		{query: `sum by (cluster) (rate(a_total{x="1"}[5m])) / b`, want: []string{"a_total", "b"}},
		{query: `histogram_quantile(0.9, sum by (le) (rate(c_bucket[5m]))) or vector(0)`, want: []string{"c_bucket"}},
		{query: `max_over_time(d[1h:5m]) unless on (cluster) e`, want: []string{"d", "e"}},
		{query: `{__name__="f"}`, want: []string{"f"}},
		{query: `{job="x"}`, err: "no literal metric name"},
		{query: `{__name__=~"a|b"}`, err: "no literal metric name"},
		{query: `sum(rate(x[5m]`, err: "parse"},
	}
	for _, c := range cases {
		got, err := Metrics(c.query)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Metrics(%q) error = %v, want one containing %q", c.query, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Metrics(%q): %v", c.query, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Metrics(%q) (-want +got):\n%s", c.query, diff)
		}
	}
}

func TestExpand(t *testing.T) {
	got := Expand(`rate(x{cluster=~"$cluster", role="${cluster_role}"}[$__rate_interval]) offset $__range`, "5m",
		map[string]string{"cluster": ".*", "cluster_role": "child"})
	want := `rate(x{cluster=~".*", role="child"}[5m]) offset 5m`
	if got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
}

func TestCatalog(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Names()); n < 50 {
		t.Errorf("catalog has %d names, want the full set (at least 50)", n)
	}
	if src, ok := c.Source("node_cpu_seconds_total"); !ok || src != "node-exporter" {
		t.Errorf("Source(node_cpu_seconds_total) = %q, %v; want node-exporter", src, ok)
	}
	if _, err := ParseCatalog([]byte("components:\n- name: a\n  source: s\n  metrics: [x]\n- name: b\n  source: s\n  metrics: [x]\n")); err == nil || !strings.Contains(err.Error(), `"x" is listed by a and b`) {
		t.Errorf("duplicate name: error = %v", err)
	}
	if _, err := ParseCatalog([]byte("components:\n- name: a\n  sorce: s\n  metrics: [x]\n")); err == nil {
		t.Error("unknown key sorce: no error")
	}
}

// TestRecordsInCatalog: the kof-rules component lists exactly the record names of the default rules, so a new or
// renamed record rule cannot be used by a dashboard without the catalog following.
func TestRecordsInCatalog(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var records []string
	for _, r := range readRules(t) {
		if r.Record != "" {
			records = append(records, r.Record)
		}
	}
	sort.Strings(records)
	comp, _ := c.Component("kof-rules")
	listed := append([]string(nil), comp.Metrics...)
	sort.Strings(listed)
	if diff := cmp.Diff(records, listed); diff != "" {
		t.Errorf("catalog kof-rules vs records of %s (-records +catalog):\n%s", rulesFile, diff)
	}
}

// TestRules: every expression of KOF's default rules parses with metricsql and reads only catalogued metrics.
func TestRules(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rules := readRules(t)
	if len(rules) < 20 {
		t.Fatalf("%d rules in %s, want at least 20", len(rules), rulesFile)
	}
	if err := Check(RuleExprs(rulesFile, rules), c); err != nil {
		t.Error(err)
	}
}

// TestCheckFailsOnUnknownMetric plants an unknown metric in a copy of a real rule: the check must name it.
func TestCheckFailsOnUnknownMetric(t *testing.T) {
	c, err := DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rules := readRules(t)
	rules[0].Expr = rules[0].Expr + " or kof_planted_unknown_metric_total"
	err = Check(RuleExprs(rulesFile, rules[:1]), c)
	if err == nil || !strings.Contains(err.Error(), `metric "kof_planted_unknown_metric_total" is not produced`) || !strings.Contains(err.Error(), rules[0].Name()) {
		t.Errorf("Check with a planted unknown metric: error = %v", err)
	}
	err = Check([]Expr{{Where: "x", Query: "sum(rate(up[5m]"}}, c)
	if err == nil || !strings.Contains(err.Error(), "x: parse") {
		t.Errorf("Check with a broken expression: error = %v", err)
	}
}
