package values

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"kof.dev/kof/chartlib/render"
)

// Warnings returns what is not wrong in the values files for chart but is likely not what the user meant, one
// Finding per item, sorted by path: a key given twice in one mapping of one file (Helm keeps the later one and drops
// the earlier without a word) and values handed to a component that has no chart under c.ChartsDir (a third-party
// chart such as victoria-metrics-operator), which no schema checks. Its error is a file that cannot be read or
// parsed as YAML.
func (c *Checker) Warnings(chart string, files []string) ([]Finding, error) {
	var out []Finding
	for _, file := range files {
		dups, err := DuplicateKeys(file)
		if err != nil {
			return nil, err
		}
		out = append(out, dups...)
	}
	vals, err := render.UserValues(render.Options{ValuesFiles: files})
	if err != nil {
		return nil, err
	}
	for pattern, target := range c.Handoffs[chart] {
		for path, sub := range expand(vals, pattern) {
			recv := target
			if target == "*" {
				recv = strings.SplitN(path, ".", 2)[0]
			}
			if len(sub) == 0 {
				continue
			}
			if _, err := os.Stat(filepath.Join(c.ChartsDir, recv, "values.schema.json")); err == nil {
				continue
			}
			out = append(out, Finding{Path: path, Message: fmt.Sprintf("not checked: %s is a third-party chart "+
				"KOF does not hold, so no schema checks these values; compare them with that chart's own values", recv)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// DuplicateKeys returns a Finding for every key given twice in one mapping of the YAML file (its path in the
// values, the file and both lines): Helm, like most YAML readers, keeps the later value and ignores the earlier one.
// Its error is a file that cannot be read or is not YAML.
func DuplicateKeys(file string) ([]Finding, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read values file %q: %w", file, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse values file %q: %w", file, err)
	}
	var out []Finding
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				p := path
				if n.Kind == yaml.SequenceNode {
					p = join(path, fmt.Sprint(i))
				}
				walk(c, p)
			}
		case yaml.MappingNode:
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if first, ok := seen[k.Value]; ok {
					out = append(out, Finding{Path: join(path, k.Value), Message: fmt.Sprintf("given twice in %s "+
						"(lines %d and %d): the later one wins and the earlier is ignored; keep one", file, first,
						k.Line)})
				} else {
					seen[k.Value] = k.Line
				}
				walk(n.Content[i+1], join(path, k.Value))
			}
		}
	}
	walk(&doc, "")
	return out, nil
}
