package rules

import (
	"fmt"
	"testing"
)

// BenchmarkMerge merges 50 groups of 20 rules (half alerting, half recording) with a defaults patch for 100
// clusters, of which every tenth has alert and record patches of its own, and reports the outputs per merge.
func BenchmarkMerge(b *testing.B) {
	var groups []Group
	for g := 0; g < 50; g++ {
		grp := Group{Name: fmt.Sprintf("group-%d", g)}
		for r := 0; r < 20; r++ {
			rule := Rule{Expr: fmt.Sprintf("sum(rate(metric_%d_%d[5m])) > 1", g, r), For: "5m",
				Labels: map[string]string{"severity": "warning"}}
			if r%2 == 0 {
				rule.Alert = fmt.Sprintf("Alert%d", r)
			} else {
				rule.Record = fmt.Sprintf("record:%d:%d", g, r)
			}
			grp.Rules = append(grp.Rules, rule)
		}
		groups = append(groups, grp)
	}
	in := Input{Groups: groups, Sources: []Source{
		{Namespace: "kof", Name: "defaults", Kind: Alert, Data: map[string]string{"group-0": "Alert0:\n  for: 1m\n"}},
	}}
	for c := 0; c < 100; c++ {
		cluster := fmt.Sprintf("c%d", c)
		in.Clusters = append(in.Clusters, cluster)
		if c%10 != 0 {
			continue
		}
		in.Sources = append(in.Sources,
			Source{Namespace: "kof", Name: cluster + "-alerts", Kind: Alert, Cluster: cluster,
				Data: map[string]string{fmt.Sprintf("group-%d", c%50): "Alert2:\n  for: 10m\n"}},
			Source{Namespace: "kof", Name: cluster + "-records", Kind: Record, Cluster: cluster,
				Data: map[string]string{fmt.Sprintf("group-%d", c%50): fmt.Sprintf("record:%d:1:\n  expr: vector(1)\n", c%50)}})
	}
	b.ReportAllocs()
	var out Output
	for b.Loop() {
		var problems []Problem
		out, problems = Merge(in, Output{})
		if len(problems) > 0 {
			b.Fatal(problems)
		}
	}
	b.ReportMetric(float64(len(out.PromxyFiles)+len(out.VMRules)), "outputs/op")
}
