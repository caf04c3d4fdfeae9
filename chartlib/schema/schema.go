// Package schema generates a chart's draft-07 values JSON schema from its values.yaml and the helm-docs comments
// in it, so that the defaults, the README (helm-docs) and the schema have one source.
//
// # Rules
//
//   - A map becomes `{"type": "object", "properties": {...}, "additionalProperties": false}`: every map KOF owns is
//     closed, so a misspelled key fails at `helm install` and in `kof check values`.
//   - A string, boolean, integer or float becomes that JSON type; null (`~` or empty) allows any type.
//   - A list becomes `{"type": "array"}` (write `items` with a marker to constrain the elements).
//   - The helm-docs description, the comment lines directly above a key starting at `# --` (continuation lines
//     joined with spaces; a leading `(type)` hint removed), becomes "description".
//   - Properties keep the order of values.yaml; the output is indented JSON ending with a newline, so it is stable
//     under regeneration.
//
// # Markers
//
// A comment line `# @schema <keywords>` in the comment block of a key adjusts its schema. <keywords> is the content
// of a YAML flow mapping (written without braces), e.g.
//
//	# @schema additionalProperties: true
//	# @schema type: [string, "null"], pattern: "^[a-z]+$"
//	# @schema items: {type: string, enum: [a, b]}, uniqueItems: true
//	# @schema passthrough
//
// A marker that does not close on its line continues on the next `# @schema` line:
//
//	# @schema additionalProperties: {type: object, required: [chart],
//	# @schema   properties: {chart: {type: string, minLength: 1}}}
//
// Every keyword is copied into the key's schema as given, replacing a generated keyword of the same name (several
// marker lines merge, later ones win). Two keywords are special:
//   - `passthrough` (no value): a third-party shape (a VMCluster spec, another chart's values): this map and every
//     map below it accept any key (`additionalProperties: true`); the defaults below still get their types;
//   - `additionalProperties: <schema object>`: the keys below are instances of that schema (a map of named entries),
//     so they are not turned into properties either. `additionalProperties: true` keeps the generated properties and
//     accepts other keys in this map only: the maps below stay closed unless marked. On a list,
//     `additionalProperties` is ignored.
//
// # Handoffs
//
// GenerateComposed (used by Sync) inlines the schema of another chart where a chart hands its values on
// (Handoffs, e.g. `<component>.values` of the umbrella): a misspelled key inside a component's values then fails at
// `helm install` of the umbrella, not later in Flux or Sveltos.
//
// Write marker lines above the `# --` line of the block: helm-docs takes every comment line after `# --` into the
// README description, so a marker written below it would show up there. Lint (run by `kof schema verify`) reports
// such markers.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// maxDepth bounds the nesting of values (and of aliases expanding into themselves).
const maxDepth = 100

// Draft07 is the `$schema` URI of every generated schema.
const Draft07 = "http://json-schema.org/draft-07/schema#"

// Generate returns the JSON schema of a values.yaml document. It returns an error if values is not a YAML map or a
// marker is not a valid YAML flow mapping (naming the key path and line).
func Generate(values []byte) ([]byte, error) {
	root, err := generate(values)
	if err != nil {
		return nil, err
	}
	return encode(root)
}

// generate returns the schema of a values.yaml document as an ordered tree (see Generate).
func generate(values []byte) (*ordered, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return nil, fmt.Errorf("parse values: %w", err)
	}
	root := &ordered{}
	root.set("$schema", Draft07)
	if len(doc.Content) == 0 {
		root.set("type", "object")
		return root, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values: the document is a %s, want a map", kindName(top))
	}
	body, err := nodeSchema(top, "", "", false)
	if err != nil {
		return nil, err
	}
	for _, k := range body.keys {
		root.set(k, body.vals[k])
	}
	return root, nil
}

// GenerateChart reads `<chartDir>/values.yaml` and returns its schema (see Generate).
func GenerateChart(chartDir string) ([]byte, error) {
	path := filepath.Join(chartDir, "values.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out, err := Generate(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// encode marshals a schema as two-space indented JSON with a final newline, without HTML escaping.
func encode(s *ordered) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return buf.Bytes(), nil
}

// nodeSchema returns the schema of one value node at path, given the comment block of its key; open is true below
// a map marked `passthrough`.
func nodeSchema(n *yaml.Node, path, comment string, open bool) (*ordered, error) {
	markers, err := parseMarkers(comment, path)
	if err != nil {
		return nil, err
	}
	if depth := strings.Count(path, ".") + 1; depth > maxDepth {
		return nil, fmt.Errorf("%s: values nest deeper than %d levels (a recursive alias?)", path[:64], maxDepth)
	}
	s := &ordered{}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	_, passthrough := markers.vals["passthrough"]
	switch n.Kind {
	case yaml.MappingNode:
		s.set("type", "object")
		_, entrySchema := markers.vals["additionalProperties"].(*ordered)
		open = open || passthrough
		if !entrySchema && len(n.Content) > 0 {
			props, err := properties(n, path, open)
			if err != nil {
				return nil, err
			}
			s.set("properties", props)
		}
		s.set("additionalProperties", open)
	case yaml.SequenceNode:
		s.set("type", "array")
		markers.del("additionalProperties")
	case yaml.ScalarNode:
		if t := scalarType(n); t != "" {
			s.set("type", t)
		}
	}
	for _, k := range markers.keys {
		if k != "passthrough" {
			s.set(k, markers.vals[k])
		}
	}
	if d := description(comment); d != "" {
		s.set("description", d)
	}
	return s, nil
}

// properties returns the schemas of the keys of a mapping node, in document order.
func properties(n *yaml.Node, path string, open bool) (*ordered, error) {
	props := &ordered{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" {
			return nil, fmt.Errorf("%s (line %d): merge keys are not supported in values.yaml", orRoot(path), k.Line)
		}
		child, err := nodeSchema(v, joinPath(path, k.Value), k.HeadComment, open)
		if err != nil {
			return nil, err
		}
		props.set(k.Value, child)
	}
	return props, nil
}

// scalarType maps a YAML scalar's resolved tag to a JSON schema type ("" for null).
func scalarType(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!bool":
		return "boolean"
	case "!!int":
		return "integer"
	case "!!float":
		return "number"
	case "!!null":
		return ""
	}
	return "string"
}

// kindName names a YAML node kind for error messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "map"
}

// joinPath appends key to a dotted values path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// orRoot returns path, or "(root)" when it is empty.
func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

// commentBlock returns the lines of the last paragraph of a head comment (the lines directly above the key), each
// without its `#` and one following space.
func commentBlock(comment string) []string {
	paras := strings.Split(strings.TrimRight(comment, "\n"), "\n\n")
	last := paras[len(paras)-1]
	var out []string
	for _, line := range strings.Split(last, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimPrefix(line, "#")
		out = append(out, strings.TrimPrefix(line, " "))
	}
	return out
}

// description returns the helm-docs description in comment: the text from the `-- ` line up to the first `@`
// directive, lines joined with spaces, a leading `(type)` hint removed.
func description(comment string) string {
	var parts []string
	started := false
	for _, line := range commentBlock(comment) {
		switch {
		case !started && strings.HasPrefix(line, "--"):
			started = true
			parts = append(parts, strings.TrimSpace(strings.TrimPrefix(line, "--")))
		case started && strings.HasPrefix(strings.TrimSpace(line), "@"):
			started = false
		case started:
			parts = append(parts, strings.TrimSpace(line))
		}
	}
	d := strings.TrimSpace(strings.Join(parts, " "))
	if strings.HasPrefix(d, "(") {
		if end := strings.Index(d, ")"); end > 0 {
			d = strings.TrimSpace(d[end+1:])
		}
	}
	return d
}

// parseMarkers collects the `@schema` lines of comment into one ordered map (later lines win). A line that is not
// a complete flow mapping continues on the next `@schema` line (joined with a space), so long schemas can wrap.
func parseMarkers(comment, path string) (*ordered, error) {
	out := &ordered{}
	pending, firstLine := "", ""
	var lastErr error
	for _, line := range commentBlock(comment) {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "@schema")
		if !ok || (text != "" && text[0] != ' ') {
			continue
		}
		if pending == "" {
			firstLine = line
		}
		pending = strings.TrimSpace(pending + " " + strings.TrimSpace(text))
		var m yaml.Node
		if err := yaml.Unmarshal([]byte("{"+pending+"}"), &m); err != nil {
			lastErr = err
			continue
		}
		pairs := m.Content[0].Content
		for i := 0; i+1 < len(pairs); i += 2 {
			v, err := nodeValue(pairs[i+1])
			if err != nil {
				return nil, fmt.Errorf("%s: marker %q: %w", orRoot(path), firstLine, err)
			}
			out.set(pairs[i].Value, v)
		}
		pending = ""
	}
	if pending != "" {
		return nil, fmt.Errorf("%s: marker %q is not a YAML flow mapping: %w", orRoot(path), firstLine, lastErr)
	}
	return out, nil
}

// nodeValue decodes a marker value, keeping the written key order of its maps.
func nodeValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		m := &ordered{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := nodeValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m.set(n.Content[i].Value, v)
		}
		return m, nil
	case yaml.SequenceNode:
		list := []any{}
		for _, item := range n.Content {
			v, err := nodeValue(item)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
