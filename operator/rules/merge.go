package rules

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Input is everything Merge reads.
type Input struct {
	// Groups are the default rule groups (FromPrometheusRules), alerting and recording rules mixed.
	Groups []Group
	// Sources are the rule patch ConfigMaps, in any order.
	Sources []Source
	// Clusters are clusters that get vmrules values even without patches of their own (the regional clusters);
	// clusters named by record-rule Sources are added to them.
	Clusters []string
}

// Output is what Merge produces.
type Output struct {
	// PromxyFiles maps a promxy rules file name (`<group>.yaml`, `__<cluster>__<group>.yaml`) to its YAML
	// (`groups: [...]`): the data of the promxy rules ConfigMap.
	PromxyFiles map[string]string
	// VMRules maps a cluster name to the `values` key of its `kof-record-vmrules-<cluster>` ConfigMap, YAML of the
	// form `vmrules: {groups: {<group>: [rules]}}`.
	VMRules map[string]string
}

// Problem is one input Merge could not use.
type Problem struct {
	// Source is the ConfigMap `namespace/name` at fault.
	Source string
	// Kind and Cluster tell which outputs the source feeds ("" cluster = defaults, which feed every output of Kind).
	Kind    Kind
	Cluster string
	// Err says what is wrong and how to fix it.
	Err error
}

// Error returns the problem as one line naming the ConfigMap.
func (p Problem) Error() string { return fmt.Sprintf("%s: %v", p.Source, p.Err) }

// vmRulesValues is the shape of the `values` key of a vmrules ConfigMap.
type vmRulesValues struct {
	VMRules struct {
		Groups map[string][]Rule `json:"groups"`
	} `json:"vmrules"`
}

// ruleFile is the shape of one promxy rules file.
type ruleFile struct {
	Groups []Group `json:"groups"`
}

// invalidKeyChars matches characters not allowed in a ConfigMap data key.
var invalidKeyChars = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// FileName returns the promxy rules file name of group for cluster ("" = defaults): `<group>.yaml` or
// `__<cluster>__<group>.yaml`, with characters a ConfigMap key cannot hold replaced by '_'.
func FileName(cluster, group string) string {
	name := group
	if cluster != "" {
		name = ClusterGroupName(cluster, group)
	}
	return invalidKeyChars.ReplaceAllString(name, "_") + ".yaml"
}

// ClusterGroupName returns the name of the cluster-specific copy of group: `__<cluster>__<group>`.
func ClusterGroupName(cluster, group string) string { return "__" + cluster + "__" + group }

// Merge applies the patches of in.Sources to in.Groups and returns the promxy files and vmrules values, plus every
// problem found. An output fed by a faulty source keeps its value from prev: a bad defaults source of a kind keeps
// all outputs of that kind as in prev, a bad cluster source keeps that cluster's outputs as in prev (docs/contract.md:
// bad YAML in one input leaves the outputs unchanged). Within one kind and cluster, sources apply in
// namespace/name order and a later patch of the same rule replaces an earlier one.
func Merge(in Input, prev Output) (Output, []Problem) {
	patches, problems := collect(in.Sources)
	bad := map[Kind]map[string]bool{Alert: {}, Record: {}}
	for _, p := range problems {
		bad[p.Kind][p.Cluster] = true
	}
	alerts, alertProblems := promxyFiles(only(in.Groups, Alert), patches[Alert], bad[Alert], prev.PromxyFiles)
	records, recordProblems := vmRules(only(in.Groups, Record), patches[Record], in.Clusters, bad[Record], prev.VMRules)
	problems = append(problems, alertProblems...)
	problems = append(problems, recordProblems...)
	return Output{PromxyFiles: alerts, VMRules: records}, problems
}

// sourcePatches holds the parsed patches of one kind and cluster, with the sources they came from.
type sourcePatches struct {
	patches GroupPatches
	sources []string
}

// collect parses every source and gathers kind → cluster → patches; unparsable sources become problems.
func collect(sources []Source) (map[Kind]map[string]*sourcePatches, []Problem) {
	sorted := slices.Clone(sources)
	slices.SortFunc(sorted, func(a, b Source) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	out := map[Kind]map[string]*sourcePatches{Alert: {}, Record: {}}
	var problems []Problem
	for _, s := range sorted {
		id := s.Namespace + "/" + s.Name
		if s.Kind != Alert && s.Kind != Record {
			problems = append(problems, Problem{Source: id, Kind: s.Kind, Cluster: s.Cluster, Err: fmt.Errorf("unknown rule kind %q", s.Kind)})
			continue
		}
		gp, err := s.Parse()
		if err != nil {
			problems = append(problems, Problem{Source: id, Kind: s.Kind, Cluster: s.Cluster, Err: err})
			continue
		}
		sp := out[s.Kind][s.Cluster]
		if sp == nil {
			sp = &sourcePatches{patches: GroupPatches{}}
			out[s.Kind][s.Cluster] = sp
		}
		sp.sources = append(sp.sources, id)
		for group, rules := range gp {
			if sp.patches[group] == nil {
				sp.patches[group] = map[string]Patch{}
			}
			maps.Copy(sp.patches[group], rules)
		}
	}
	return out, problems
}

// only returns the groups restricted to rules of kind, dropping groups left empty.
func only(groups []Group, kind Kind) []Group {
	var out []Group
	for _, g := range groups {
		kept := Group{Name: g.Name, Interval: g.Interval}
		for _, r := range g.Rules {
			if r.Kind() == kind {
				kept.Rules = append(kept.Rules, r)
			}
		}
		if len(kept.Rules) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

// applyAll applies gp to groups (of kind) and returns the patched groups, new groups appended in name order.
// touched lists the names of the groups gp changed or added.
func applyAll(groups []Group, gp GroupPatches, kind Kind) (patched []Group, touched []string, err error) {
	var errs []error
	patched = make([]Group, 0, len(groups))
	seen := map[string]bool{}
	for _, g := range groups {
		seen[g.Name] = true
		rules, ok := gp[g.Name]
		if !ok {
			patched = append(patched, g)
			continue
		}
		ng, gerr := applyGroup(g, rules, kind)
		if gerr != nil {
			errs = append(errs, gerr)
		}
		patched = append(patched, ng)
		touched = append(touched, g.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(gp)) {
		if seen[name] {
			continue
		}
		ng, gerr := applyGroup(Group{Name: name}, gp[name], kind)
		if gerr != nil {
			errs = append(errs, gerr)
		}
		patched = append(patched, ng)
		touched = append(touched, name)
	}
	return patched, touched, errors.Join(errs...)
}

// applyGroup applies patches (rule name → patch) to every rule of g with that name; a patch for a missing rule adds
// it when it sets expr and is an error otherwise.
func applyGroup(g Group, patches map[string]Patch, kind Kind) (Group, error) {
	out := Group{Name: g.Name, Interval: g.Interval, Rules: slices.Clone(g.Rules)}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(patches)) {
		p := patches[name]
		found := false
		for i, r := range out.Rules {
			if r.Name() == name {
				out.Rules[i] = p.Apply(r)
				found = true
			}
		}
		if found {
			continue
		}
		if p.Expr == nil {
			errs = append(errs, fmt.Errorf("group %q: rule %q not found; set expr to add it as a new rule", g.Name, name))
			continue
		}
		r := Rule{Record: name}
		if kind == Alert {
			r = Rule{Alert: name}
		}
		out.Rules = append(out.Rules, p.Apply(r))
	}
	return out, errors.Join(errs...)
}

// problemOf turns an apply error into a Problem naming the sources of sp.
func problemOf(sp *sourcePatches, kind Kind, cluster string, err error) Problem {
	return Problem{Source: strings.Join(sp.sources, ","), Kind: kind, Cluster: cluster, Err: err}
}

// promxyFiles builds the promxy rule files from the alerting groups.
func promxyFiles(groups []Group, byCluster map[string]*sourcePatches, bad map[string]bool, prev map[string]string) (map[string]string, []Problem) {
	var problems []Problem
	defaults := groups
	if sp := byCluster[""]; sp != nil {
		patched, _, err := applyAll(groups, sp.patches, Alert)
		if err != nil {
			problems = append(problems, problemOf(sp, Alert, "", err))
			bad[""] = true
		}
		defaults = patched
	}
	if bad[""] {
		return maps.Clone(prev), problems
	}
	files := map[string]string{}
	for _, g := range defaults {
		files[FileName("", g.Name)] = marshalFile(g)
	}
	for _, cluster := range slices.Sorted(maps.Keys(byCluster)) {
		sp := byCluster[cluster]
		if cluster == "" || bad[cluster] {
			continue
		}
		patched, touched, err := applyAll(defaults, sp.patches, Alert)
		if err != nil {
			problems = append(problems, problemOf(sp, Alert, cluster, err))
			bad[cluster] = true
			continue
		}
		for _, g := range patched {
			if !slices.Contains(touched, g.Name) {
				continue
			}
			cg := Group{Name: ClusterGroupName(cluster, g.Name), Interval: g.Interval}
			for _, r := range g.Rules {
				if _, ok := sp.patches[g.Name][r.Name()]; ok {
					cg.Rules = append(cg.Rules, r)
				}
			}
			files[FileName(cluster, g.Name)] = marshalFile(cg)
		}
	}
	for cluster := range bad {
		if cluster == "" {
			continue
		}
		prefix := FileName(cluster, "")
		prefix = strings.TrimSuffix(prefix, ".yaml")
		for name, content := range prev {
			if strings.HasPrefix(name, prefix) {
				files[name] = content
			}
		}
	}
	return files, problems
}

// vmRules builds the vmrules values of every cluster from the recording groups: all groups, with the defaults
// patches and then the cluster's own patches applied (the kof-storage chart renders one VMRule per group and has no
// groups of its own).
func vmRules(groups []Group, byCluster map[string]*sourcePatches, clusters []string, bad map[string]bool, prev map[string]string) (map[string]string, []Problem) {
	var problems []Problem
	defaults := groups
	if sp := byCluster[""]; sp != nil {
		patched, _, err := applyAll(groups, sp.patches, Record)
		if err != nil {
			problems = append(problems, problemOf(sp, Record, "", err))
			bad[""] = true
		}
		defaults = patched
	}
	if bad[""] {
		return maps.Clone(prev), problems
	}
	all := map[string]bool{}
	for _, c := range clusters {
		all[c] = true
	}
	for c := range byCluster {
		all[c] = true
	}
	for c := range bad {
		all[c] = true
	}
	delete(all, "")
	out := map[string]string{}
	shared := "" // the values of every cluster without patches of its own, marshalled once
	for _, cluster := range slices.Sorted(maps.Keys(all)) {
		if byCluster[cluster] == nil && !bad[cluster] {
			if shared == "" {
				shared = marshalValues(defaults)
			}
			out[cluster] = shared
			continue
		}
		patched := defaults
		if sp := byCluster[cluster]; sp != nil && !bad[cluster] {
			var err error
			patched, _, err = applyAll(defaults, sp.patches, Record)
			if err != nil {
				problems = append(problems, problemOf(sp, Record, cluster, err))
				bad[cluster] = true
			}
		}
		if bad[cluster] {
			if v, ok := prev[cluster]; ok {
				out[cluster] = v
			}
			continue
		}
		out[cluster] = marshalValues(patched)
	}
	return out, problems
}

// marshalValues returns the vmrules values YAML of groups: `vmrules: {groups: {<group>: [rules]}}`.
func marshalValues(groups []Group) string {
	var values vmRulesValues
	values.VMRules.Groups = map[string][]Rule{}
	for _, g := range groups {
		values.VMRules.Groups[g.Name] = append(values.VMRules.Groups[g.Name], g.Rules...)
	}
	return marshal(values)
}

// marshalFile returns the YAML of a promxy rule file holding g alone.
func marshalFile(g Group) string { return marshal(ruleFile{Groups: []Group{g}}) }

// marshal returns v as YAML. The values marshalled here (strings, maps and slices of them) cannot fail to encode.
func marshal(v any) string {
	out, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("# marshal error: %v\n", err)
	}
	return string(out)
}
