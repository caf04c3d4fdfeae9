package values

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// PassThroughAllowList returns the umbrella values paths (`<component>.values.<path>`) whose subtrees need not
// exist in the component chart's values.yaml, each with the reason: subtrees that the component hands on unchanged
// to a chart KOF does not own. It is empty today: every default the umbrella sets under a component's `values`
// is a key of that component's own values.yaml.
func PassThroughAllowList() map[string]string {
	return map[string]string{}
}

// Consistency checks that every leaf (scalar, list, empty map or null) under `<component>.values` in
// `<chartsDir>/<umbrella>/values.yaml` exists in `<chartsDir>/<component>/values.yaml` with a compatible type
// (same JSON kind; null matches anything; integers and floats are both numbers), for every top-level block of the
// umbrella that has a `values` map and a local chart of that name. Paths under an allow entry are skipped. It
// returns the findings sorted by path, or an error if a values file cannot be read.
func Consistency(chartsDir, umbrella string, allow map[string]string) ([]Finding, error) {
	top, err := readValues(filepath.Join(chartsDir, umbrella, "values.yaml"))
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, component := range slices.Sorted(maps.Keys(top)) {
		block, ok := top[component].(map[string]any)
		if !ok {
			continue
		}
		vals, ok := block["values"].(map[string]any)
		if !ok {
			continue
		}
		file := filepath.Join(chartsDir, component, "values.yaml")
		if _, err := os.Stat(file); err != nil {
			continue // third-party component: no local chart
		}
		defaults, err := readValues(file)
		if err != nil {
			return nil, err
		}
		compare(vals, defaults, component+".values", "", file, allow, &out)
	}
	return dedupe(out), nil
}

// compare walks the umbrella subtree got (at umbrella path base+rel) against the component defaults want.
func compare(got, want map[string]any, base, rel, file string, allow map[string]string, out *[]Finding) {
	for _, k := range slices.Sorted(maps.Keys(got)) {
		path := join(rel, k)
		full := join(base, path)
		if allowed(full, allow) {
			continue
		}
		w, exists := want[k]
		if !exists {
			*out = append(*out, Finding{Path: full, Message: fmt.Sprintf("not defined in %s (as %s); define it "+
				"there with a default or remove it from the umbrella", file, path)})
			continue
		}
		g := got[k]
		gm, gIsMap := g.(map[string]any)
		wm, wIsMap := w.(map[string]any)
		if gIsMap && wIsMap && len(gm) > 0 {
			compare(gm, wm, base, path, file, allow, out)
			continue
		}
		if gk, wk := kind(g), kind(w); gk != "null" && wk != "null" && gk != wk {
			*out = append(*out, Finding{Path: full, Message: fmt.Sprintf("is a %s here but a %s in %s (%s)",
				gk, wk, file, path)})
		}
	}
}

// allowed reports whether path is an allow-list entry or lies below one.
func allowed(path string, allow map[string]string) bool {
	for p := range allow {
		if path == p || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// kind names the JSON kind of a YAML-decoded value.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "map"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int64, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// readValues reads a values.yaml into a map (sigs.k8s.io/yaml, as Helm reads it).
func readValues(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return out, nil
}
