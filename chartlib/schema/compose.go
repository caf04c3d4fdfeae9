package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Handoffs maps a chart to the values paths whose content is the values of another chart of the same charts
// directory: chart → dotted values path → receiving chart. A `*` segment in a path stands for any key; a receiving
// chart `*` is the key that `*` matched (`"*.values": "*"` in the umbrella: `<component>.values` holds the values of
// charts/<component>). The one definition KOF uses is chartlib/values.DefaultHandoffs.
type Handoffs map[string]map[string]string

// GenerateComposed returns the schema of chart (a directory of chartsDir, see GenerateChart) in which every handed-off
// values subtree (see Handoffs) that the chart leaves open (`passthrough` or `additionalProperties: true`) is
// replaced by the receiving chart's schema (without `$schema`, keeping the subtree's description), itself composed
// the same way. Receiving charts without a directory in chartsDir (third-party charts) stay open. The receiving
// schemas are inlined, so the result is one self-contained draft-07 document that Helm validates at install time,
// and a checker walking `properties` (chartlib/values) finds the known keys at every path. With no handoffs for
// chart, the result is GenerateChart's.
func GenerateComposed(chartsDir, chart string, handoffs Handoffs) ([]byte, error) {
	root, err := chartSchema(chartsDir, chart)
	if err != nil {
		return nil, err
	}
	if err := compose(root, chartsDir, chart, handoffs, map[string]*ordered{}, 0); err != nil {
		return nil, err
	}
	return encode(root)
}

// chartSchema generates the schema tree of `<chartsDir>/<chart>/values.yaml`.
func chartSchema(chartsDir, chart string) (*ordered, error) {
	path := filepath.Join(chartsDir, chart, "values.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	s, err := generate(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// isChart reports whether chartsDir has a chart named name (a Chart.yaml and a values.yaml).
func isChart(chartsDir, name string) bool {
	for _, f := range []string{"Chart.yaml", "values.yaml"} {
		if _, err := os.Stat(filepath.Join(chartsDir, name, f)); err != nil {
			return false
		}
	}
	return true
}

// compose replaces the open handed-off subtrees of s (the schema of chart) by the receiving charts' composed
// schemas, cached in done by chart name.
func compose(s *ordered, chartsDir, chart string, handoffs Handoffs, done map[string]*ordered, depth int) error {
	if depth > 8 {
		return fmt.Errorf("values handoffs of chart %q nest deeper than 8 charts (a handoff cycle?)", chart)
	}
	patterns := make([]string, 0, len(handoffs[chart]))
	for p := range handoffs[chart] {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	for _, pattern := range patterns {
		target := handoffs[chart][pattern]
		for _, site := range findSites(s, strings.Split(pattern, ".")) {
			recv := target
			if target == "*" {
				recv = site.matched
			}
			if recv == "" || !isChart(chartsDir, recv) {
				continue // no local chart: a third-party component stays passthrough
			}
			if closed, ok := site.node.vals["additionalProperties"].(bool); ok && !closed {
				continue // typed and closed by the chart itself
			}
			sub, ok := done[recv]
			if !ok {
				var err error
				if sub, err = chartSchema(chartsDir, recv); err != nil {
					return err
				}
				sub.del("$schema")
				sub.del("$comment")
				if err := compose(sub, chartsDir, recv, handoffs, done, depth+1); err != nil {
					return err
				}
				done[recv] = sub
			}
			embedded := &ordered{}
			for _, k := range sub.keys {
				if k != "description" {
					embedded.set(k, sub.vals[k])
				}
			}
			if d, ok := site.node.vals["description"]; ok {
				embedded.set("description", d)
			}
			site.parent.set(site.key, embedded)
		}
	}
	return nil
}

// site is one schema node found at a handoff path.
type site struct {
	parent  *ordered // the `properties` object holding the node
	key     string   // the node's key in parent
	node    *ordered // the node's schema
	matched string   // the key the first `*` segment matched ("" without one)
}

// findSites returns the object schemas of s at the property path segs (`*` matching every property), in document
// order.
func findSites(s *ordered, segs []string) []site {
	var out []site
	var walk func(cur *ordered, segs []string, matched string)
	walk = func(cur *ordered, segs []string, matched string) {
		props, ok := cur.vals["properties"].(*ordered)
		if !ok {
			return
		}
		for _, k := range props.keys {
			if segs[0] != "*" && segs[0] != k {
				continue
			}
			child, ok := props.vals[k].(*ordered)
			if !ok || child.vals["type"] != "object" {
				continue
			}
			m := matched
			if segs[0] == "*" && m == "" {
				m = k
			}
			if len(segs) == 1 {
				out = append(out, site{parent: props, key: k, node: child, matched: m})
				continue
			}
			walk(child, segs[1:], m)
		}
	}
	if len(segs) > 0 {
		walk(s, segs, "")
	}
	return out
}
