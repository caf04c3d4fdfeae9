package promql

import (
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"
)

// Rule is one alert or record rule of a rules file in the shape of charts/kof-mothership/files/default-rules.yaml
// (group name → list of rules).
type Rule struct {
	Group  string
	Alert  string `json:"alert,omitempty"`
	Record string `json:"record,omitempty"`
	Expr   string `json:"expr"`
}

// Name returns the alert or record name.
func (r Rule) Name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

// ParseRules reads a rules file (group → [{alert|record, expr, ...}]) and returns its rules, groups sorted by name and
// rules in file order. Errors: bad YAML, or a rule without expr or without exactly one of alert and record, naming
// the group and index.
func ParseRules(data []byte) ([]Rule, error) {
	var groups map[string][]map[string]any
	if err := yaml.Unmarshal(data, &groups); err != nil {
		return nil, fmt.Errorf("parse rules: %w", err)
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	var out []Rule
	for _, g := range names {
		for i, raw := range groups[g] {
			r := Rule{Group: g}
			r.Alert, _ = raw["alert"].(string)
			r.Record, _ = raw["record"].(string)
			r.Expr, _ = raw["expr"].(string)
			if r.Expr == "" || (r.Alert == "") == (r.Record == "") {
				return nil, fmt.Errorf("rules group %s[%d]: needs expr and exactly one of alert and record", g, i)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// RuleExprs turns rules into expressions to check, each Where `<file>: <group>/<name>`.
func RuleExprs(file string, rules []Rule) []Expr {
	out := make([]Expr, 0, len(rules))
	for _, r := range rules {
		out = append(out, Expr{Where: fmt.Sprintf("%s: %s/%s", file, r.Group, r.Name()), Query: r.Expr})
	}
	return out
}
