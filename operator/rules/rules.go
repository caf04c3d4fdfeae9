// Package rules merges KOF's default Prometheus rules with the rule patches users keep in labelled ConfigMaps and
// produces the promxy rule files and the per-cluster vmrules values.
//
// The rule of docs/contract.md, "Rule merging": inputs are the PrometheusRules of the mothership release and the
// ConfigMaps labelled `k0rdent.mirantis.com/kof-alert-rules-cluster-name` or
// `k0rdent.mirantis.com/kof-record-rules-cluster-name` (value "" = defaults for every cluster, else one cluster).
// Each data key of such a ConfigMap is a rule group name; its value is YAML mapping a rule name (the `alert` or
// `record` name) to a patch:
//
//	KubePodCrashLooping:
//	  for: 10m
//	  labels: {severity: critical}
//
// A patch sets only the fields it names; `labels` and `annotations` are merged key by key. A patch that leaves
// `expr` unset keeps the original `expr` string byte for byte. A patch with `expr` for a rule the group lacks adds
// that rule. The package is pure: no API calls, no clock, deterministic output.
package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"
)

// Kind tells alerting rules from recording rules.
type Kind string

const (
	// Alert marks alerting rules (evaluated by promxy across all regional clusters).
	Alert Kind = "alert"
	// Record marks recording rules (evaluated on each regional cluster from its vmrules values).
	Record Kind = "record"
)

// Rule is one rule in Prometheus rule-file form.
type Rule struct {
	Record        string            `json:"record,omitempty"`
	Alert         string            `json:"alert,omitempty"`
	Expr          string            `json:"expr"`
	For           string            `json:"for,omitempty"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Name returns the rule's alert name, or its record name for a recording rule.
func (r Rule) Name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

// Kind returns Alert when the rule has an alert name, else Record.
func (r Rule) Kind() Kind {
	if r.Alert != "" {
		return Alert
	}
	return Record
}

// Group is a named rule group.
type Group struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []Rule `json:"rules"`
}

// Patch changes the fields of one rule it sets; nil fields keep the original value.
type Patch struct {
	Expr          *string           `json:"expr,omitempty"`
	For           *string           `json:"for,omitempty"`
	KeepFiringFor *string           `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Apply returns r with p applied; maps are copied, never shared with r or p.
func (p Patch) Apply(r Rule) Rule {
	out := r
	if p.Expr != nil {
		out.Expr = *p.Expr
	}
	if p.For != nil {
		out.For = *p.For
	}
	if p.KeepFiringFor != nil {
		out.KeepFiringFor = *p.KeepFiringFor
	}
	out.Labels = mergeMaps(r.Labels, p.Labels)
	out.Annotations = mergeMaps(r.Annotations, p.Annotations)
	return out
}

// mergeMaps returns a new map with base overlaid by over, or nil when both are empty.
func mergeMaps(base, over map[string]string) map[string]string {
	if len(base)+len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Source is one rule patch ConfigMap.
type Source struct {
	// Namespace and Name identify the ConfigMap (for problems and ordering).
	Namespace, Name string
	// Kind is Alert for the alert-rules label, Record for the record-rules label.
	Kind Kind
	// Cluster is the label value: "" for defaults, else the cluster the patches are for.
	Cluster string
	// Data is the ConfigMap's data: group name → YAML map of rule name → Patch.
	Data map[string]string
}

// GroupPatches maps group name → rule name → patch.
type GroupPatches map[string]map[string]Patch

// Parse decodes the data of s strictly (unknown patch fields are errors). The error names the ConfigMap, the
// data key and the YAML problem.
func (s Source) Parse() (GroupPatches, error) {
	out := GroupPatches{}
	for _, group := range slices.Sorted(maps.Keys(s.Data)) {
		var patches map[string]Patch
		if err := yaml.UnmarshalStrict([]byte(s.Data[group]), &patches); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s data[%q]: %w; want a map of rule name to {expr, for, keep_firing_for, labels, annotations}",
				s.Namespace, s.Name, group, err)
		}
		out[group] = patches
	}
	return out, nil
}

// FromPrometheusRules returns the groups of prs as Groups, ordered by PrometheusRule namespace/name and then by
// position; groups of one name in several objects are concatenated. Expressions are kept as written (an integer
// expression becomes its decimal string).
func FromPrometheusRules(prs []monitoringv1.PrometheusRule) []Group {
	sorted := slices.Clone(prs)
	slices.SortFunc(sorted, func(a, b monitoringv1.PrometheusRule) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var groups []Group
	index := map[string]int{}
	for _, pr := range sorted {
		for _, g := range pr.Spec.Groups {
			i, ok := index[g.Name]
			if !ok {
				i = len(groups)
				index[g.Name] = i
				groups = append(groups, Group{Name: g.Name})
				if g.Interval != nil {
					groups[i].Interval = string(*g.Interval)
				}
			}
			for _, r := range g.Rules {
				groups[i].Rules = append(groups[i].Rules, fromPrometheusRule(r))
			}
		}
	}
	return groups
}

// fromPrometheusRule converts one prometheus-operator rule.
func fromPrometheusRule(r monitoringv1.Rule) Rule {
	out := Rule{
		Record:      r.Record,
		Alert:       r.Alert,
		Expr:        r.Expr.String(),
		Labels:      mergeMaps(r.Labels, nil),
		Annotations: mergeMaps(r.Annotations, nil),
	}
	if r.For != nil {
		out.For = string(*r.For)
	}
	if r.KeepFiringFor != nil {
		out.KeepFiringFor = string(*r.KeepFiringFor)
	}
	return out
}
