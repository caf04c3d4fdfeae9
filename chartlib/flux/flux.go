// Package flux reads Flux HelmReleases the way helm-controller resolves them: the Helm release name and namespace,
// the values, the chart with its HelmRepository, and the install order that spec.dependsOn imposes. The offline
// preview (chartlib/fleet) and the demo and e2e harness (internal/harness) both read HelmReleases through it, so the
// two cannot disagree.
//
// Sources: fluxcd helm-controller api/v2 HelmReleaseSpec (releaseName, targetNamespace, chart, chartRef,
// dependsOn, values); source-controller api/v1 HelmChartSpec (sourceRef is a local reference: the HelmRepository
// lives in the HelmChart's namespace); docs/design.md ("layer 1").
package flux

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kinds of the Flux objects a HelmRelease refers to.
const (
	KindHelmRelease    = "HelmRelease"
	KindHelmChart      = "HelmChart"
	KindHelmRepository = "HelmRepository"
)

// Find returns the object of kind in namespace with name, or nil when there is none. A rendered object set
// (chartlib/manifest Set.Get) and a live API server both fit.
type Find func(kind, namespace, name string) *unstructured.Unstructured

// Release is what helm-controller makes of one HelmRelease.
type Release struct {
	// HelmRelease is the HelmRelease's `namespace/name`.
	HelmRelease string
	// Name is the Helm release name (spec.releaseName, else the HelmRelease's name); Namespace its target
	// namespace (spec.targetNamespace, else the HelmRelease's namespace).
	Name, Namespace string
	// Chart and Version name the chart, from the spec.chartRef HelmChart or the inline spec.chart template.
	Chart, Version string
	// RepositoryRef is the `namespace/name` of the chart's HelmRepository; Repository its spec.url ("" when that
	// HelmRepository cannot be found).
	RepositoryRef, Repository string
	// DependsOn are the `namespace/name` of the HelmReleases spec.dependsOn names (a dependency without namespace is
	// in the HelmRelease's namespace).
	DependsOn []string
	// Values are spec.values (nil when absent).
	Values map[string]any
}

// MissingError is the error of Read and Order when an object names another that is absent (a HelmChart of
// spec.chartRef, a HelmRelease of spec.dependsOn). Offline that is final; on a live cluster the object may still be
// created (helm-controller creates a release's HelmReleases one by one), so a wait treats it as pending.
type MissingError struct{ msg string }

func (e *MissingError) Error() string { return e.msg }

// IsMissing reports whether err is, or wraps, a MissingError.
func IsMissing(err error) bool {
	var m *MissingError
	return errors.As(err, &m)
}

// Read reads hr as helm-controller does and looks up its HelmChart (spec.chartRef) and HelmRepository with find.
// The HelmRepository of a spec.chartRef HelmChart is in the HelmChart's namespace (HelmChart sourceRefs are
// local); that of an inline spec.chart is in spec.chart.spec.sourceRef.namespace, else the HelmRelease's namespace.
// Errors: a spec.chartRef of another kind than HelmChart, a HelmChart that find does not know, or neither
// spec.chart nor spec.chartRef; each names the HelmRelease and the field.
func Read(hr *unstructured.Unstructured, find Find) (Release, error) {
	ns := hr.GetNamespace()
	rel := Release{HelmRelease: ns + "/" + hr.GetName(), Name: str(hr.Object, "spec", "releaseName"),
		Namespace: str(hr.Object, "spec", "targetNamespace")}
	if rel.Name == "" {
		rel.Name = hr.GetName()
	}
	if rel.Namespace == "" {
		rel.Namespace = ns
	}
	deps, _, _ := unstructured.NestedSlice(hr.Object, "spec", "dependsOn")
	for _, d := range deps {
		dm, _ := d.(map[string]any)
		rel.DependsOn = append(rel.DependsOn, orDefault(str(dm, "namespace"), ns)+"/"+str(dm, "name"))
	}
	if v, ok, _ := unstructured.NestedMap(hr.Object, "spec", "values"); ok {
		rel.Values = v
	}
	var chartSpec map[string]any
	var repoNS string
	if inline, ok, _ := unstructured.NestedMap(hr.Object, "spec", "chart", "spec"); ok {
		chartSpec, repoNS = inline, orDefault(str(inline, "sourceRef", "namespace"), ns)
	} else {
		kind, name := str(hr.Object, "spec", "chartRef", "kind"), str(hr.Object, "spec", "chartRef", "name")
		chartNS := orDefault(str(hr.Object, "spec", "chartRef", "namespace"), ns)
		switch {
		case kind == "":
			return rel, fmt.Errorf("HelmRelease %s: set spec.chartRef (kind HelmChart) or spec.chart", rel.HelmRelease)
		case kind != KindHelmChart:
			return rel, fmt.Errorf("HelmRelease %s: spec.chartRef.kind %q: only HelmChart references are read; "+
				"point spec.chartRef at a HelmChart", rel.HelmRelease, kind)
		}
		hc := find(KindHelmChart, chartNS, name)
		if hc == nil {
			return rel, &MissingError{fmt.Sprintf("HelmRelease %s: spec.chartRef: HelmChart %s/%s not found",
				rel.HelmRelease, chartNS, name)}
		}
		chartSpec, _, _ = unstructured.NestedMap(hc.Object, "spec")
		repoNS = chartNS
	}
	rel.Chart, rel.Version = str(chartSpec, "chart"), str(chartSpec, "version")
	if repoName := str(chartSpec, "sourceRef", "name"); repoName != "" {
		rel.RepositoryRef = repoNS + "/" + repoName
		if repo := find(KindHelmRepository, repoNS, repoName); repo != nil {
			rel.Repository = str(repo.Object, "spec", "url")
		}
	}
	return rel, nil
}

// Order returns releases so that each comes after every release its DependsOn names, as helm-controller installs
// them (it installs a HelmRelease only once its dependencies are Ready): each pass walks the releases in the given
// order and places every one whose dependencies are placed already (earlier in this pass or before). Errors: a dependency that is not among releases, or a dependsOn cycle: helm-controller would wait for
// those releases forever, so the error names them and the fix.
func Order(releases []Release) ([]Release, error) {
	byKey := map[string]int{}
	for i, r := range releases {
		byKey[r.HelmRelease] = i
	}
	var missing []string
	for _, r := range releases {
		for _, d := range r.DependsOn {
			if _, ok := byKey[d]; !ok {
				missing = append(missing, fmt.Sprintf("%s dependsOn %s", r.HelmRelease, d))
			}
		}
	}
	if len(missing) > 0 {
		return nil, &MissingError{fmt.Sprintf("HelmRelease dependsOn names no HelmRelease: %s; Flux waits for a "+
			"missing dependency forever: create it or drop it from spec.dependsOn", strings.Join(missing, ", "))}
	}
	placed := make([]bool, len(releases))
	out := make([]Release, 0, len(releases))
	for len(out) < len(releases) {
		progress := false
		for i, r := range releases {
			if placed[i] || !allPlaced(r.DependsOn, byKey, placed) {
				continue
			}
			placed[i], progress = true, true
			out = append(out, r)
		}
		if !progress {
			var stuck []string
			for i, r := range releases {
				if !placed[i] {
					stuck = append(stuck, r.HelmRelease)
				}
			}
			sort.Strings(stuck)
			return nil, fmt.Errorf("HelmRelease dependsOn cycle: %s wait for one another (or for a release that "+
				"does), so Flux installs none of them; remove one spec.dependsOn entry of the cycle",
				strings.Join(stuck, ", "))
		}
	}
	return out, nil
}

// allPlaced reports whether every dependency in deps is placed.
func allPlaced(deps []string, byKey map[string]int, placed []bool) bool {
	for _, d := range deps {
		if !placed[byKey[d]] {
			return false
		}
	}
	return true
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// str returns the string at path of obj, "" when absent or not a string.
func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}
