package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kof.dev/kof/chartlib/manifest"
)

// durationKeys are the Flux HelmRelease fields of type metav1.Duration (helm-controller API v2), by JSON name.
func durationKeys() map[string]bool {
	return map[string]bool{"interval": true, "timeout": true, "retryInterval": true}
}

// durationProblems walks v (an unstructured subtree at path) and reports every string under a duration key that
// time.ParseDuration rejects, with its path; the message carries the parser's text.
func durationProblems(v any, path string) []problem {
	var out []problem
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			p := path + "." + k
			if s, ok := t[k].(string); ok && durationKeys()[k] {
				if _, err := time.ParseDuration(s); err != nil {
					out = append(out, problem{p, fmt.Sprintf("%v; use a Go duration such as 10m or 1h30m", err)})
				}
				continue
			}
			out = append(out, durationProblems(t[k], p)...)
		}
	case []any:
		for i, item := range t {
			out = append(out, durationProblems(item, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

// rule checks one object, decoded (typed) and as parsed (u), and returns its problems.
type rule func(typed runtime.Object, u map[string]any) []problem

// rulesFor returns the rules of gvk beyond its schema.
func rulesFor(gvk schema.GroupVersionKind) []rule {
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: helmv2.GroupVersion.Group, Kind: helmv2.HelmReleaseKind}:
		return []rule{helmReleaseRule}
	case schema.GroupKind{Group: kcmv1.GroupVersion.Group, Kind: kcmv1.MultiClusterServiceKind}:
		return []rule{mcsSelectorRule, mcsServicesRule}
	case schema.GroupKind{Group: kcmv1.GroupVersion.Group, Kind: kcmv1.ClusterDeploymentKind}:
		return []rule{cdServicesRule}
	}
	return nil
}

// helmReleaseRule: exactly one of spec.chart and spec.chartRef (helm-controller's CEL rule on HelmReleaseSpec), a
// positive spec.interval (required by the CRD), and non-negative durations.
func helmReleaseRule(obj runtime.Object, u map[string]any) []problem {
	hr, ok := obj.(*helmv2.HelmRelease)
	if !ok {
		return nil
	}
	out := durationProblems(u["spec"], "spec")
	if len(out) > 0 {
		return out // the typed durations are unreliable when a string did not parse
	}
	switch {
	case hr.Spec.Chart == nil && hr.Spec.ChartRef == nil:
		out = append(out, problem{"spec", "exactly one of spec.chart and spec.chartRef is required; neither is set"})
	case hr.Spec.Chart != nil && hr.Spec.ChartRef != nil:
		out = append(out, problem{"spec", "exactly one of spec.chart and spec.chartRef is allowed; remove one"})
	}
	if hr.Spec.Interval.Duration <= 0 {
		out = append(out, problem{"spec.interval", fmt.Sprintf("must be a positive duration such as 10m, got %q",
			hr.Spec.Interval.Duration.String())})
	}
	if t := hr.Spec.Timeout; t != nil && t.Duration < 0 {
		out = append(out, problem{"spec.timeout", "must not be negative"})
	}
	if c := hr.Spec.Chart; c != nil && c.Spec.Interval != nil && c.Spec.Interval.Duration <= 0 {
		out = append(out, problem{"spec.chart.spec.interval", "must be a positive duration such as 10m"})
	}
	return out
}

// mcsSelectorRule: a MultiClusterService's spec.clusterSelector is never empty — an empty selector matches every
// cluster (KOF contract: MCSs select by the kof-cluster-role label).
func mcsSelectorRule(obj runtime.Object, _ map[string]any) []problem {
	mcs, ok := obj.(*kcmv1.MultiClusterService)
	if !ok {
		return nil
	}
	sel := mcs.Spec.ClusterSelector
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return []problem{{"spec.clusterSelector", "empty selector matches every cluster; set matchLabels or " +
			"matchExpressions"}}
	}
	return nil
}

// mcsServicesRule applies servicesRule to a MultiClusterService.
func mcsServicesRule(obj runtime.Object, _ map[string]any) []problem {
	if mcs, ok := obj.(*kcmv1.MultiClusterService); ok {
		return servicesRule(mcs.Spec.ServiceSpec.Services)
	}
	return nil
}

// cdServicesRule applies servicesRule to a ClusterDeployment.
func cdServicesRule(obj runtime.Object, _ map[string]any) []problem {
	if cd, ok := obj.(*kcmv1.ClusterDeployment); ok {
		return servicesRule(cd.Spec.ServiceSpec.Services)
	}
	return nil
}

// serviceKey identifies a KCM service by release namespace and name; an empty namespace is KCM's default
// ("default", the CRD default of services[].namespace).
func serviceKey(namespace, name string) string {
	if namespace == "" {
		namespace = "default"
	}
	return namespace + "/" + name
}

// servicesRule: service (namespace, name) pairs are unique, every dependsOn entry names a service of the same
// list, and dependsOn forms no cycle (KCM resolves dependsOn within one ServiceSpec).
func servicesRule(services []kcmv1.Service) []problem {
	var out []problem
	index := map[string]int{}
	for i, s := range services {
		k := serviceKey(s.Namespace, s.Name)
		if j, dup := index[k]; dup {
			out = append(out, problem{fmt.Sprintf("spec.serviceSpec.services[%d]", i),
				fmt.Sprintf("service %s is already defined at services[%d]", k, j)})
			continue
		}
		index[k] = i
	}
	graph := map[string][]string{}
	for i, s := range services {
		from := serviceKey(s.Namespace, s.Name)
		for j, d := range s.DependsOn {
			to := serviceKey(d.Namespace, d.Name)
			if _, ok := index[to]; !ok {
				out = append(out, problem{fmt.Sprintf("spec.serviceSpec.services[%d].dependsOn[%d]", i, j),
					fmt.Sprintf("names service %s, which this object does not define; known: %s", to,
						strings.Join(slices.Sorted(maps.Keys(index)), ", "))})
				continue
			}
			graph[from] = append(graph[from], to)
		}
	}
	if cycle := findCycle(graph); cycle != nil {
		out = append(out, problem{"spec.serviceSpec.services",
			"dependsOn forms a cycle: " + strings.Join(cycle, " -> ")})
	}
	return out
}

// mcsCycles reports a cycle among the rendered MultiClusterServices' spec.dependsOn (names of other MCSs). Names
// outside the render are not checked: an MCS may depend on one installed by another chart.
func mcsCycles(set *manifest.Set) []Finding {
	graph := map[string][]string{}
	src := map[string]manifest.Object{}
	for _, o := range set.Entries() {
		gvk := o.GroupVersionKind()
		if gvk.Group != kcmv1.GroupVersion.Group || gvk.Kind != kcmv1.MultiClusterServiceKind {
			continue
		}
		src[o.GetName()] = o
		deps, _, _ := nestedStrings(o.Object, "spec", "dependsOn")
		graph[o.GetName()] = deps
	}
	cycle := findCycle(graph)
	if cycle == nil {
		return nil
	}
	o := src[cycle[0]]
	return []Finding{{Object: manifest.KeyOf(o.Unstructured), Source: o.Source, Path: "spec.dependsOn",
		Message: "MultiClusterService dependsOn forms a cycle: " + strings.Join(cycle, " -> ")}}
}

// nestedStrings reads a []string field of an unstructured map (non-string items are skipped).
func nestedStrings(m map[string]any, path ...string) ([]string, bool, error) {
	cur := any(m)
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = mm[p]
	}
	list, ok := cur.([]any)
	if !ok {
		return nil, false, nil
	}
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out, true, nil
}

// findCycle returns one cycle of graph as a path that starts and ends at the same node (nodes visited in sorted
// order, so the result is deterministic), or nil when graph is acyclic. Edges to nodes absent as keys are leaves.
func findCycle(graph map[string][]string) []string {
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = active
		stack = append(stack, n)
		for _, m := range graph[n] {
			switch state[m] {
			case active:
				for i, s := range stack {
					if s == m {
						return append(append([]string(nil), stack[i:]...), m)
					}
				}
			case unvisited:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(graph)) {
		if state[n] == unvisited {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}
