package diagnose

import (
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/rules"
)

// storage lists the live PromxyServerGroups and VMStorageConnections with their conditions.
func storage(s *Snapshot) Storage {
	out := Storage{PromxyServerGroups: []PromxyServerGroup{}, Connections: []StorageConnection{}}
	for _, p := range s.PromxyServerGroups {
		out.PromxyServerGroups = append(out.PromxyServerGroups, PromxyServerGroup{Namespace: p.Namespace,
			Name: p.Name, Cluster: p.Spec.ClusterName, Targets: p.Spec.Targets, Scheme: p.Spec.Scheme,
			PathPrefix: p.Spec.PathPrefix, Conditions: conditions(p.Status.Conditions)})
	}
	for _, c := range s.StorageConnections {
		ns := c.Spec.ClusterRef.Namespace
		if ns == "" {
			ns = c.Namespace
		}
		out.Connections = append(out.Connections, StorageConnection{Namespace: c.Namespace, Name: c.Name,
			StorageKind: c.Spec.ClusterRef.Kind, Storage: ns + "/" + c.Spec.ClusterRef.Name,
			Address: c.Spec.TargetStorageNode.Address, Conditions: conditions(c.Status.Conditions)})
	}
	return out
}

// vmRulesValues is the shape of a vmrules ConfigMap's `values` key (docs/contract.md, "Objects the operator
// writes": `vmrules: {groups: {<group>: [rules]}}`).
type vmRulesValues struct {
	VMRules struct {
		Groups map[string][]rules.Rule `json:"groups"`
	} `json:"vmrules"`
}

// ruleFile is one file of the promxy rules ConfigMap (`groups: [...]`, Prometheus rule-file form).
type ruleFile struct {
	Groups []rules.Group `json:"groups"`
}

// ruleSets returns the merged rules as the operator wrote them: the default alerting groups of the promxy rules
// ConfigMap (files `<group>.yaml`), and per cluster its alerting groups (`__<cluster>__<group>`) and the recording
// groups of its vmrules ConfigMap `kof-record-vmrules-<cluster>` (operator/rules, docs/contract.md "Rule
// merging"). Values that do not parse are shown as one group named after the key, without rules.
func ruleSets(s *Snapshot, cfg config.Config) []RuleSet {
	byCluster := map[string]*RuleSet{}
	get := func(cluster, source string) *RuleSet {
		rs := byCluster[cluster]
		if rs == nil {
			rs = &RuleSet{Cluster: cluster, Groups: []RuleGroup{}}
			byCluster[cluster] = rs
		}
		if !strings.Contains(rs.Source, source) {
			rs.Source = strings.TrimPrefix(rs.Source+", "+source, ", ")
		}
		return rs
	}
	if cm := s.configMap(cfg.ReleaseNamespace, cfg.PromxyRulesConfigMap); cfg.PromxyRulesConfigMap != "" && cm != nil {
		promxyRules(cm, get)
	}
	for _, cm := range s.ConfigMaps {
		cluster, ok := strings.CutPrefix(cm.Name, names.VMRulesConfigMapPrefix)
		if !ok || cluster == "" || !isOperatorMade(&cm) {
			continue
		}
		rs := get(cluster, "ConfigMap "+cm.Namespace+"/"+cm.Name)
		var v vmRulesValues
		if err := yaml.Unmarshal([]byte(cm.Data[outputs.VMRulesKey]), &v); err != nil {
			rs.Groups = append(rs.Groups, RuleGroup{Name: outputs.VMRulesKey + " (unreadable: " + err.Error() + ")",
				Kind: string(rules.Record)})
			continue
		}
		for _, g := range sortedGroups(v.VMRules.Groups) {
			rs.Groups = append(rs.Groups, ruleGroup(g, v.VMRules.Groups[g], rules.Record))
		}
	}
	out := make([]RuleSet, 0, len(byCluster))
	for _, rs := range byCluster {
		sort.SliceStable(rs.Groups, func(i, j int) bool {
			if rs.Groups[i].Kind != rs.Groups[j].Kind {
				return rs.Groups[i].Kind < rs.Groups[j].Kind
			}
			return rs.Groups[i].Name < rs.Groups[j].Name
		})
		out = append(out, *rs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// promxyRules adds the groups of every file of the promxy rules ConfigMap to the rule set of its cluster.
func promxyRules(cm *corev1.ConfigMap, get func(cluster, source string) *RuleSet) {
	source := "ConfigMap " + cm.Namespace + "/" + cm.Name
	for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
		var f ruleFile
		if err := yaml.Unmarshal([]byte(cm.Data[key]), &f); err != nil {
			get("", source).Groups = append(get("", source).Groups, RuleGroup{Name: key + " (unreadable: " +
				err.Error() + ")", Kind: string(rules.Alert)})
			continue
		}
		for _, g := range f.Groups {
			cluster, group := "", g.Name
			if rest, ok := strings.CutPrefix(g.Name, "__"); ok {
				if c, name, ok := strings.Cut(rest, "__"); ok {
					cluster, group = c, name
				}
			}
			rs := get(cluster, source)
			rs.Groups = append(rs.Groups, ruleGroup(group, g.Rules, rules.Alert))
		}
	}
}

func sortedGroups(m map[string][]rules.Rule) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ruleGroup converts one group of rules of kind.
func ruleGroup(name string, rs []rules.Rule, kind rules.Kind) RuleGroup {
	g := RuleGroup{Name: name, Kind: string(kind), Rules: make([]Rule, 0, len(rs))}
	for _, r := range rs {
		g.Rules = append(g.Rules, Rule{Name: r.Name(), Expr: strings.TrimSpace(r.Expr)})
	}
	return g
}
