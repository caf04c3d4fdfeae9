// Package parity checks that the charts' named name helpers compute exactly what Go's operator/names computes
// (docs/design.md decision 1: one definition per shared fact; docs/contract.md "Hashed names").
//
// For every chart directory that defines one of the Helpers (`{{ define "kof.names.childVMUserBase" }}` in any
// template), Check renders that helper through chartlib/render (the Helm SDK engine with sprig, exactly as at
// install time) for every Case, and compares the output with the Go function. A chart that defines none of the
// helpers is skipped; Check fails when no chart defines any.
//
// Probes: for each (helper, case) Check adds one template file to an in-memory copy of the chart that holds only
// the chart's partials (`_*.tpl`, where helpers live) plus the probes, so the chart's own manifests, value checks
// and `fail` calls never interfere. Inputs are passed as Go string literals, so any byte sequence (unicode, dots,
// upper case, 253 characters) reaches the helper unchanged.
package parity

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/names"
)

// Case is one input: a cluster name and its namespace.
type Case struct {
	// Name describes the case in reports, e.g. "253 characters".
	Name      string
	Cluster   string
	Namespace string
}

// Helper is a named chart helper and the Go function it must equal.
type Helper struct {
	// Name is the template name, e.g. `kof.names.childVMUserBase`.
	Name string
	// Layer2 marks a helper whose output is a Sveltos template expression (`kof.names.*Expr`): Check evaluates
	// the expression with the layer-2 emulator (chartlib/sveltos, Sveltos' function map) and compares its value.
	Layer2 bool
	// Context returns the template expression passed to `include` for a case, e.g.
	// `(dict "cluster" "c7" "namespace" "kcm-system")`; use Quote for string literals.
	Context func(Case) string
	// Want returns the Go result for a case.
	Want func(Case) string
}

// Quote returns s as a Go template string literal.
func Quote(s string) string { return strconv.Quote(s) }

// clusterDict is the `{cluster, namespace}` input of the credential base helpers.
func clusterDict(c Case) string {
	return fmt.Sprintf(`(dict "cluster" %s "namespace" %s)`, Quote(c.Cluster), Quote(c.Namespace))
}

// composedDict returns the `{prefix, name}` input of kof.names.composed.
func composedDict(prefix string) func(Case) string {
	return func(c Case) string {
		return fmt.Sprintf(`(dict "prefix" %s "name" %s)`, Quote(prefix), Quote(c.Cluster))
	}
}

// exprDict returns the `{name, namespace}` input of the layer-2 expression helpers: each a template expression,
// here a string literal.
func exprDict(c Case) string {
	return fmt.Sprintf(`(dict "name" %s "namespace" %s)`, Quote(Quote(c.Cluster)), Quote(Quote(c.Namespace)))
}

// DefaultHelpers returns the helpers KOF charts define and their Go counterparts (docs/values-contract.md "Hashed
// names in charts"), with the context each helper takes:
//   - `kof.names.childVMUserBase`, `kof.names.adminVMUserBase`: dict {cluster, namespace} → names.ChildVMUserBase,
//     names.AdminVMUserBase;
//   - `kof.names.adler32`: a string (the child identity `kof-cluster-config-<cluster>/<namespace>`) → names.Adler32
//     of it (earlier releases' names);
//   - `kof.names.composed`: dict {prefix, name} with the prefixes of names.RegionalConfigMap, names.ChildConfigMap and
//     names.VMRulesConfigMap → those functions;
//   - `kof.names.istioVMAuthService`: dict {cluster} → names.IstioVMAuthService;
//   - layer 2, evaluated by Sveltos: `kof.names.childVMUserBaseExpr`, `kof.names.adminVMUserBaseExpr` (dict {name,
//     namespace} of expressions), `kof.names.composedExpr` (dict {prefix, name}) and `kof.names.suffixedExpr` (dict
//     {name, suffix}) → the same functions.
func DefaultHelpers() []Helper {
	return []Helper{
		{Name: "kof.names.childVMUserBase", Context: clusterDict,
			Want: func(c Case) string { return names.ChildVMUserBase(c.Namespace, c.Cluster) }},
		{Name: "kof.names.adminVMUserBase", Context: clusterDict,
			Want: func(c Case) string { return names.AdminVMUserBase(c.Namespace, c.Cluster) }},
		{Name: "kof.names.adler32",
			Context: func(c Case) string { return Quote(names.ChildIdentity(c.Namespace, c.Cluster)) },
			Want:    func(c Case) string { return names.LegacyChildVMUserBase(c.Namespace, c.Cluster) }},
		{Name: "kof.names.composed", Context: composedDict(names.RegionalConfigMapPrefix),
			Want: func(c Case) string { return names.RegionalConfigMap(c.Cluster) }},
		{Name: "kof.names.composed", Context: composedDict(names.ChildConfigMapPrefix),
			Want: func(c Case) string { return names.ChildConfigMap(c.Cluster) }},
		{Name: "kof.names.composed", Context: composedDict(names.VMRulesConfigMapPrefix),
			Want: func(c Case) string { return names.VMRulesConfigMap(c.Cluster) }},
		{Name: "kof.names.istioVMAuthService",
			Context: func(c Case) string { return fmt.Sprintf(`(dict "cluster" %s)`, Quote(c.Cluster)) },
			Want:    func(c Case) string { return names.IstioVMAuthService(c.Cluster) }},
		{Name: "kof.names.childVMUserBaseExpr", Layer2: true, Context: exprDict,
			Want: func(c Case) string { return names.ChildVMUserBase(c.Namespace, c.Cluster) }},
		{Name: "kof.names.adminVMUserBaseExpr", Layer2: true, Context: exprDict,
			Want: func(c Case) string { return names.AdminVMUserBase(c.Namespace, c.Cluster) }},
		{Name: "kof.names.composedExpr", Layer2: true,
			Context: func(c Case) string {
				return fmt.Sprintf(`(dict "prefix" %s "name" %s)`, Quote(names.ChildConfigMapPrefix), Quote(Quote(c.Cluster)))
			},
			Want: func(c Case) string { return names.ChildConfigMap(c.Cluster) }},
		{Name: "kof.names.suffixedExpr", Layer2: true,
			Context: func(c Case) string {
				return fmt.Sprintf(`(dict "name" %s "suffix" %s)`, Quote(Quote(c.Cluster)), Quote(names.IstioVMAuthSuffix))
			},
			Want: func(c Case) string { return names.IstioVMAuthService(c.Cluster) }},
	}
}

// DefaultCases returns the input table: the contract's vectors, short, 253-character, dotted, upper-case and
// unicode names, names that hit the 29/40/63-character cuts (with a '-' exactly at a cut), a name with no readable
// character, and a long namespace.
func DefaultCases() []Case {
	const ns = "kcm-system"
	return []Case{
		{"contract vector child-adopted", "child-adopted", ns},
		{"contract vector regional-adopted", "regional-adopted", ns},
		{"short", "c7", ns},
		{"253 characters", strings.Repeat("abcdefghij", 25) + "xyz", ns},
		{"dotted", "cluster.eu-west-1.example.com", ns},
		{"upper-case", "Child-ADOPTED", ns},
		{"unicode", "clüster-ñame-日本", ns},
		{"no readable character", "日本", ns},
		{"63 characters", strings.Repeat("a", 63), ns},
		{"64 characters", strings.Repeat("b", 64), ns},
		{"'-' at the 29th character", strings.Repeat("c", 28) + "-dd", ns},
		{"'-' at the 23rd character", strings.Repeat("e", 22) + "-ff", ns},
		{"40 characters", strings.Repeat("g", 40), ns},
		{"long namespace", "child-1", strings.Repeat("n", 63)},
	}
}

// Mismatch is one helper output that differs from Go.
type Mismatch struct {
	Chart, Helper, Case string
	// Input is the include context expression; Got the chart's output; Want the Go result.
	Input, Got, Want string
}

// String returns `chart: helper(input) [case]: chart "got", Go "want"`.
func (m Mismatch) String() string {
	return fmt.Sprintf("%s: %s %s [%s]: chart %q, operator/names %q", m.Chart, m.Helper, m.Input, m.Case, m.Got,
		m.Want)
}

// Report is the outcome of Check.
type Report struct {
	// Checked maps each chart checked to the helpers it defines.
	Checked map[string][]string
	// Comparisons counts the helper outputs compared.
	Comparisons int
	// Mismatches lists every difference.
	Mismatches []Mismatch
}

// Check renders helpers for cases in every chart under chartsDir (a directory of chart directories) that defines
// them, and compares with Go. It returns an error if a chart fails to load or render, or if no chart defines any
// of the helpers.
func Check(ctx context.Context, chartsDir string, helpers []Helper, cases []Case) (*Report, error) {
	dirs, err := filepath.Glob(filepath.Join(chartsDir, "*", "Chart.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list charts in %q: %w", chartsDir, err)
	}
	sort.Strings(dirs)
	rep := &Report{Checked: map[string][]string{}}
	for _, chartYAML := range dirs {
		dir := filepath.Dir(chartYAML)
		if err := CheckChart(ctx, dir, helpers, cases, rep); err != nil {
			return nil, err
		}
	}
	if len(rep.Checked) == 0 {
		return nil, fmt.Errorf("no chart under %q defines any of the name helpers %s", chartsDir, helperNames(helpers))
	}
	return rep, nil
}

// helperNames lists the distinct helper names.
func helperNames(helpers []Helper) string {
	seen := map[string]bool{}
	var out []string
	for _, h := range helpers {
		if !seen[h.Name] {
			seen[h.Name] = true
			out = append(out, h.Name)
		}
	}
	return strings.Join(out, ", ")
}

// CheckChart checks one chart directory and adds its results to rep (nothing when it defines none of helpers).
func CheckChart(ctx context.Context, dir string, helpers []Helper, cases []Case, rep *Report) error {
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		return fmt.Errorf("chart %q: %w", dir, err)
	}
	c, err := render.Load(dir)
	if err != nil {
		return err
	}
	defined := definedHelpers(c)
	probe := probeChart(c)
	type expect struct {
		helper, caseName, input, want string
		layer2                        bool
	}
	expects := map[string]expect{}
	for i, h := range helpers {
		if !defined[h.Name] {
			continue
		}
		if !contains(rep.Checked[c.Name()], h.Name) {
			rep.Checked[c.Name()] = append(rep.Checked[c.Name()], h.Name)
		}
		for j, cs := range cases {
			file := fmt.Sprintf("templates/kof-parity-probe-%03d-%03d.txt", i, j)
			input := h.Context(cs)
			body := fmt.Sprintf(`{{- include %s %s -}}`, Quote(h.Name), input)
			probe.Templates = append(probe.Templates, &chart.File{Name: file, Data: []byte(body)})
			expects[path.Join(c.Name(), file)] = expect{h.Name, cs.Name, input, h.Want(cs), h.Layer2}
		}
	}
	if len(expects) == 0 {
		return nil
	}
	res, err := render.Files(ctx, render.Options{Chart: probe, SkipSchemaValidation: true})
	if err != nil {
		return fmt.Errorf("render name helpers of chart %q: %w", dir, err)
	}
	for _, file := range slices.Sorted(maps.Keys(expects)) {
		e := expects[file]
		got, ok := res.Files[file]
		if !ok {
			return fmt.Errorf("chart %q: probe %s produced no output", dir, file)
		}
		if e.layer2 {
			if got, err = evalLayer2(got); err != nil {
				return fmt.Errorf("chart %q: %s %s: %w", dir, e.helper, e.input, err)
			}
		}
		rep.Comparisons++
		if got != e.want {
			rep.Mismatches = append(rep.Mismatches, Mismatch{Chart: c.Name(), Helper: e.helper, Case: e.caseName,
				Input: e.input, Got: got, Want: e.want})
		}
	}
	return nil
}

// evalLayer2 evaluates a Sveltos template expression with the layer-2 emulator (single pass, a bare cluster) and
// returns its value as text.
func evalLayer2(expr string) (string, error) {
	cluster := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "parity", "namespace": "parity"}}}
	res, err := sveltos.Instantiate(sveltos.Input{Profile: "parity", Service: "parity", Cluster: cluster,
		Values: "value: {{ " + expr + " | toJson }}\n", Mode: sveltos.SinglePass})
	if err != nil {
		return "", err
	}
	s, ok := res.Values["value"].(string)
	if !ok {
		return "", fmt.Errorf("expression %s gives %v, not a string", expr, res.Values["value"])
	}
	return s, nil
}

// defineRE finds `define "name"` actions in templates.
var defineRE = regexp.MustCompile(`\{\{-?\s*define\s+"([^"]+)"`)

// definedHelpers returns the template names the chart's own templates define.
func definedHelpers(c *chart.Chart) map[string]bool {
	out := map[string]bool{}
	for _, t := range c.Templates {
		for _, m := range defineRE.FindAllSubmatch(t.Data, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}

// probeChart returns a copy of c holding only its partials (no dependencies, no schema), ready for probes.
func probeChart(c *chart.Chart) *chart.Chart {
	meta := *c.Metadata
	meta.Dependencies = nil
	cp := &chart.Chart{Metadata: &meta, Values: c.Values}
	for _, t := range c.Templates {
		if strings.HasPrefix(path.Base(t.Name), "_") {
			cp.Templates = append(cp.Templates, t)
		}
	}
	return cp
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
