// Package render renders a Helm chart directory exactly as `helm template` / `helm install` would, through the
// Helm SDK (helm.sh/helm/v3), and returns the objects as a manifest.Set.
//
// # Use
//
//	set, err := render.Chart(ctx, render.Options{
//		ChartDir:    "charts/kof-storage",
//		ValuesFiles: []string{"charts/kof-storage/ci/01-istio-values.yaml"},
//		Set:         []string{"clusterName=regional-1"},
//		Namespace:   "kof",
//		Lookup:      fixtures, // objects `lookup` sees
//	})
//	vmcluster := set.Get("VMCluster", "kof", "cluster")   // or "VMCluster.operator.victoriametrics.com"
//	fmt.Println(set.Kinds())                              // map[ConfigMap:2 VMCluster:1 ...]
//	yaml, _ := set.YAML()                                 // `---` separated, with `# Source:` lines
//
// To render one chart many times (a fleet, a benchmark), Load it once and pass Options.Chart. Files returns the
// rendered text without parsing it, for templates whose output is not YAML (probes of named helpers). Validation of
// the objects against their API types is chartlib/validate's job.
//
// # Pipeline
//
// Chart runs Helm's own steps, in Helm's order, and re-implements none of them:
//  1. load the chart directory (chart/loader), unless Options.Chart is already loaded;
//  2. user values: Options.ValuesFiles in order (later files win), then Options.Values, then each Options.Set and
//     Options.SetString expression (`a.b[0].c=v`, Helm's strvals syntax) — the precedence of `helm -f ... --set`;
//  3. dependency conditions, tags and import-values (chartutil.ProcessDependenciesWithMerge);
//  4. the chart's kubeVersion constraint against Options.KubeVersion;
//  5. coalescing with the chart's values.yaml and validation against every values.schema.json of the chart and its
//     subcharts (chartutil.ToRenderValuesWithSchemaValidation);
//  6. the template engine (engine.Engine) with sprig, include/tpl/required/fail and `lookup`;
//  7. parsing of the rendered files into a manifest.Set (strict YAML: a duplicate map key fails).
//
// Release metadata is that of a first install: .Release.IsInstall true, .Release.Revision 1, .Release.Service Helm.
//
// # Capabilities
//
// .Capabilities are pinned, never discovered: Options.KubeVersion (default DefaultKubeVersion) and Helm's default
// API version set plus Options.APIVersions (entries like `monitoring.coreos.com/v1` or
// `monitoring.coreos.com/v1/ServiceMonitor`, as `helm template --api-versions` takes them).
//
// # lookup
//
// Without Options.Lookup and Options.RESTConfig, `lookup` returns an empty map, as in `helm template`. With
// Options.Lookup, it is answered from those fixture objects by an in-process API server emulation (no network):
// get by name returns the object or an empty map, list returns `{items: [...]}`. A lookup of a kind that is neither
// among the fixtures nor a built-in Kubernetes kind fails, as it does against a cluster that does not serve that
// API. With Options.RESTConfig, lookups go to that live cluster (read-only).
//
// # Strict mode
//
// Options.Strict renders with missingkey=error, as `helm lint --strict` does: a template that reads a value key
// that does not exist fails with the template file, line and column.
//
// # Errors
//
// Errors keep Helm's own text, which names the template file and line (`execution error at
// (chart/templates/x.yaml:12:4): ...`), wrapped with the step that failed (load, values, schema, render, parse).
// Schema violations name the values path. Chart is safe for concurrent use with distinct Options.
package render

import (
	"context"
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/manifest"
)

// DefaultKubeVersion is the Kubernetes version .Capabilities reports when Options.KubeVersion is empty: the minor
// of the k8s.io modules KOF builds against (go.mod), so charts render as for the clusters KOF is tested on.
const DefaultKubeVersion = "v1.37.0"

// DefaultNamespace is the release namespace when Options.Namespace is empty, as in Helm.
const DefaultNamespace = "default"

// Options describes one render. ChartDir or Chart is required; everything else is optional.
type Options struct {
	// ChartDir is the chart directory to load (ignored when Chart is set).
	ChartDir string
	// Chart is an already loaded chart (see Load); rendering never modifies it, so one loaded chart may serve many
	// renders, also concurrently.
	Chart *chart.Chart
	// ValuesFiles are values files applied in order, as `helm -f`.
	ValuesFiles []string
	// Values are applied after ValuesFiles, deep-merged (a map merges into a map; anything else replaces).
	Values map[string]any
	// Set are `--set` expressions applied after Values, e.g. `kof-child.enabled=false`, `list[0].name=x`.
	Set []string
	// SetString are `--set-string` expressions applied after Set (values stay strings).
	SetString []string
	// ReleaseName is .Release.Name; default the chart name.
	ReleaseName string
	// Namespace is .Release.Namespace; default DefaultNamespace.
	Namespace string
	// KubeVersion is .Capabilities.KubeVersion, e.g. `v1.33.2`; default DefaultKubeVersion.
	KubeVersion string
	// APIVersions are added to Helm's default .Capabilities.APIVersions.
	APIVersions []string
	// Lookup are the objects `lookup` sees (fixtures). Takes precedence over RESTConfig.
	Lookup []*unstructured.Unstructured
	// RESTConfig, when set and Lookup is empty, makes `lookup` read from that cluster.
	RESTConfig *rest.Config
	// Strict renders with missingkey=error (a missing value key is an error).
	Strict bool
	// SkipSchemaValidation skips values.schema.json validation (`helm --skip-schema-validation`).
	SkipSchemaValidation bool
}

// Result is what Chart returns besides the objects: the rendered files and the values the templates saw.
type Result struct {
	// Objects are the rendered Kubernetes objects.
	*manifest.Set
	// Files are the rendered template files (path → text) as the engine returned them, NOTES.txt included.
	Files map[string]string
	// Values are the coalesced values (.Values) of the top-level chart.
	Values map[string]any
	// Chart is the chart that was rendered.
	Chart *chart.Chart
}

// Load loads the chart directory (or packaged .tgz) dir with Helm's loader.
// It returns an error naming dir if the chart cannot be read or its Chart.yaml is invalid.
func Load(dir string) (*chart.Chart, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", dir, err)
	}
	return c, nil
}

// Chart renders a chart with opts and returns its objects in manifest order. ctx is checked before rendering
// starts (the Helm engine itself cannot be interrupted). Errors name the failing step and keep Helm's text (template
// file and line for template errors, values path for schema violations).
func Chart(ctx context.Context, opts Options) (*manifest.Set, error) {
	res, err := Render(ctx, opts)
	if err != nil {
		return nil, err
	}
	return res.Set, nil
}

// Render is Chart returning also the rendered files and the coalesced values.
func Render(ctx context.Context, opts Options) (*Result, error) {
	res, err := Files(ctx, opts)
	if err != nil {
		return nil, err
	}
	set, err := manifest.Parse(res.Files)
	if err != nil {
		return nil, fmt.Errorf("chart %q: %w", res.Chart.Name(), err)
	}
	res.Set = set
	return res, nil
}

// Files runs the pipeline up to the template engine and returns the rendered files unparsed (Result.Set is nil):
// for templates whose output is not Kubernetes YAML, such as probes of named helpers.
func Files(ctx context.Context, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	chrt, err := chartOf(opts)
	if err != nil {
		return nil, err
	}
	name := chrt.Name()
	user, err := UserValues(opts)
	if err != nil {
		return nil, fmt.Errorf("chart %q: %w", name, err)
	}
	caps, err := Capabilities(opts.KubeVersion, opts.APIVersions)
	if err != nil {
		return nil, fmt.Errorf("chart %q: %w", name, err)
	}
	top, err := renderValues(chrt, user, opts, caps)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	files, err := newEngine(opts).Render(chrt, top)
	if err != nil {
		return nil, fmt.Errorf("render chart %q: %w", name, err)
	}
	vals, _ := top["Values"].(chartutil.Values)
	return &Result{Files: files, Values: vals, Chart: chrt}, nil
}

// chartOf returns opts.Chart or loads opts.ChartDir.
func chartOf(opts Options) (*chart.Chart, error) {
	if opts.Chart != nil {
		return private(opts.Chart)
	}
	if opts.ChartDir == "" {
		return nil, fmt.Errorf("render: Options.ChartDir or Options.Chart is required")
	}
	return Load(opts.ChartDir)
}

// private returns a chart that this render may modify. Helm's dependency processing rewrites a chart's dependency
// list and values in place, so a chart with dependencies is re-loaded from its raw files; a chart without
// dependencies is never modified and is returned as is.
func private(c *chart.Chart) (*chart.Chart, error) {
	if len(c.Dependencies()) == 0 && len(c.Metadata.Dependencies) == 0 {
		return c, nil
	}
	files := make([]*loader.BufferedFile, 0, len(c.Raw))
	for _, f := range c.Raw {
		files = append(files, &loader.BufferedFile{Name: f.Name, Data: f.Data})
	}
	cp, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("copy chart %q: %w", c.Name(), err)
	}
	return cp, nil
}

// UserValues merges the user-supplied values of opts (ValuesFiles, then Values, then Set, then SetString) into one
// map, with Helm's --values/--set semantics. It returns an error naming the file or expression that fails to parse.
func UserValues(opts Options) (map[string]any, error) {
	// chartutil.MergeTables gives its first argument precedence and keeps explicit nulls (they delete chart
	// defaults later, during coalescing, as a null in a values file does).
	base := map[string]any{}
	for _, file := range opts.ValuesFiles {
		if err := checkMapping(file); err != nil {
			return nil, err
		}
		vals, err := chartutil.ReadValuesFile(file)
		if err != nil {
			return nil, fmt.Errorf("read values file %q: %w", file, err)
		}
		base = chartutil.MergeTables(vals.AsMap(), base)
	}
	if len(opts.Values) > 0 {
		base = chartutil.MergeTables(copyMap(opts.Values), base)
	}
	for _, s := range opts.Set {
		if err := strvals.ParseInto(s, base); err != nil {
			return nil, fmt.Errorf("parse --set %q: %w", s, err)
		}
	}
	for _, s := range opts.SetString {
		if err := strvals.ParseIntoString(s, base); err != nil {
			return nil, fmt.Errorf("parse --set-string %q: %w", s, err)
		}
	}
	return base, nil
}

// checkMapping returns an error naming file when its content is YAML but not a mapping (a list, a string, a number):
// Helm's own error then is a Go unmarshalling message (`cannot unmarshal array into Go value of type
// chartutil.Values`). An empty file, a file of comments or `null` is an empty mapping, as for Helm. Files that do not
// parse are left to Helm's reader, whose error names the line.
func checkMapping(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read values file %q: %w", file, err)
	}
	var doc any
	if yaml.Unmarshal(data, &doc) != nil {
		return nil
	}
	what := "a scalar"
	switch doc.(type) {
	case nil, map[string]any:
		return nil
	case []any:
		what = "a list"
	case string:
		what = "a string"
	case bool:
		what = "a boolean"
	case float64:
		what = "a number"
	}
	return fmt.Errorf("values file %q: the top level is %s, not a mapping; a values file is a mapping of keys, such "+
		"as `regionless: {enabled: true}`", file, what)
}

// copyMap deep-copies the maps of m (lists and scalars are shared) so that merging never writes into the caller's
// Options.Values.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = copyMap(sub)
		}
		out[k] = v
	}
	return out
}

// Capabilities returns the pinned .Capabilities: kubeVersion (default DefaultKubeVersion) and Helm's default API
// versions plus extra. It returns an error if kubeVersion is not a semantic version.
func Capabilities(kubeVersion string, extra []string) (*chartutil.Capabilities, error) {
	if kubeVersion == "" {
		kubeVersion = DefaultKubeVersion
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("kube version %q: %w", kubeVersion, err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	caps.APIVersions = append(caps.APIVersions, extra...)
	return caps, nil
}

// renderValues runs dependency processing, the kubeVersion check, coalescing and schema validation, and returns the
// top-level template data (.Values, .Release, .Chart, .Capabilities).
func renderValues(chrt *chart.Chart, user map[string]any, opts Options, caps *chartutil.Capabilities) (chartutil.Values, error) {
	name := chrt.Name()
	if err := chartutil.ProcessDependenciesWithMerge(chrt, user); err != nil {
		return nil, fmt.Errorf("chart %q dependencies: %w", name, err)
	}
	if c := chrt.Metadata.KubeVersion; c != "" && !chartutil.IsCompatibleRange(c, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart %q requires kubeVersion %s, incompatible with Kubernetes %s", name, c,
			caps.KubeVersion.String())
	}
	release := chartutil.ReleaseOptions{
		Name:      firstNonEmpty(opts.ReleaseName, name),
		Namespace: firstNonEmpty(opts.Namespace, DefaultNamespace),
		Revision:  1,
		IsInstall: true,
	}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, user, release, caps, opts.SkipSchemaValidation)
	if err != nil {
		return nil, fmt.Errorf("chart %q values: %w", name, err)
	}
	return top, nil
}

// newEngine returns the Helm engine for opts: strict or not, with lookup served by fixtures, a live cluster, or
// nothing.
func newEngine(opts Options) engine.Engine {
	var e engine.Engine
	switch {
	case len(opts.Lookup) > 0:
		e = engine.New(fixtureConfig(opts.Lookup))
	case opts.RESTConfig != nil:
		e = engine.New(opts.RESTConfig)
	}
	e.Strict = opts.Strict
	return e
}

// firstNonEmpty returns the first non-empty string of vs, or "".
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
