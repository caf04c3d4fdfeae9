package mgmt

import (
	"flag"
	"fmt"
	"testing"

	"kof.dev/kof/operator"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// TestChartDefaultsAreTheOperatorFlagDefaults parses the args kof-mothership gives the kof-operator container with
// its defaults through the operator's own flags (operator.BindFlags) and checks that they are the flags' defaults:
// the chart's values and the program's defaults are one setting, so kof-operator run without flags (the scale
// benchmark runs the chart's args) behaves as installed, and a change of one without the other fails here.
func TestChartDefaultsAreTheOperatorFlagDefaults(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-mothership"})
	var args []string
	found := false
	for _, dep := range res.OfKind("Deployment") {
		if !kofv1.IsOperatorDeployment(dep.GetLabels()) {
			continue
		}
		for _, c := range containers(t, dep) {
			if c["name"] != kofv1.OperatorContainer {
				continue
			}
			found = true
			list, _ := c["args"].([]any)
			for _, a := range list {
				args = append(args, fmt.Sprint(a))
			}
		}
	}
	if !found {
		t.Fatal("no kof-operator container rendered")
	}
	chart := flag.NewFlagSet("chart", flag.ContinueOnError)
	got := operator.BindFlags(chart)
	if err := chart.Parse(args); err != nil {
		t.Fatalf("the chart's args %v: %v", args, err)
	}
	want := operator.BindFlags(flag.NewFlagSet("defaults", flag.ContinueOnError))
	set := map[string]bool{}
	chart.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"workers", "kube-api-qps", "kube-api-burst", "gc-percent", "leader-elect",
		"metrics-bind-address", "health-probe-bind-address"} {
		if !set[name] {
			t.Errorf("the chart does not pass --%s (args %v)", name, args)
		}
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"workers", got.Workers, want.Workers}, {"kube-api-qps", got.QPS, want.QPS},
		{"kube-api-burst", got.Burst, want.Burst}, {"gc-percent", got.GCPercent, want.GCPercent},
		{"leader-elect", got.LeaderElect, want.LeaderElect}, {"metrics-bind-address", got.MetricsAddr, want.MetricsAddr},
		{"health-probe-bind-address", got.ProbeAddr, want.ProbeAddr},
	} {
		if c.got != c.want {
			t.Errorf("--%s: the chart's default %v, the operator's %v", c.name, c.got, c.want)
		}
	}
}
