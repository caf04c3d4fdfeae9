package golden

import (
	"fmt"
	"hash/fnv"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"
)

// A store keeps the golden files of one test package with each distinct document once. A golden file (a "logical
// file", such as a scenario's `child-1/kof-storage/manifest.yaml`) is a YAML stream of rendered objects (it starts
// with `---`), a plain text, or empty. The store holds:
//
//   - `<case>.index` for each first path segment (a chart, a scenario): every logical file under it and, indented
//     below it, the names of the stored documents it is made of, in order;
//   - `objects/<name>` for each document identity (a rendered object's chart, kind, namespace and name; for plain
//     texts the last two path segments below the case): the base, its most used variant, in full, then every other
//     variant as the logical files that hold it and the line changes that turn the base into it.
//
// A change to a template that every variant shares therefore changes one stored file, however many logical files
// hold the object, and a new variant changes only its object's file. encodeStore and decodeStore are exact
// inverses (checked on every use).
const (
	// indexSuffix ends the name of an index file.
	indexSuffix = ".index"
	// objectsDir is the folder of the stored documents.
	objectsDir = "objects"
	// streamStart opens a logical file that is a YAML stream, and each of its documents.
	streamStart = "---\n"
	// streamSep separates two documents of a stream.
	streamSep = "\n---\n"
	// markStream and markEmpty follow a logical path in an index: a YAML stream, an empty file.
	markStream = " ---"
	markEmpty  = " (empty)"
	// refIndent starts each document line of an index.
	refIndent = "  "
	// maxName is the longest stored file name before it is shortened with a hash.
	maxName = 160
)

// logical is one logical file as an index lists it: its path, shape and the stored names of its documents.
type logical struct {
	path   string
	stream bool
	empty  bool
	refs   []string
}

// identity collects the distinct contents of one stored name in order of first use, with their users.
type identity struct {
	contents []string
	users    map[string][]string
}

// userKey names the k-th (0-based) document of logical file p that has a given stored name: p, or p#k+1 after the
// first.
func userKey(p string, k int) string {
	if k == 0 {
		return p
	}
	return p + "#" + strconv.Itoa(k+1)
}

// encodeStore returns the store files (slash-separated names relative to the store folder) that hold files. It
// returns an error for a logical path that cannot be listed in an index: one without a folder, with a newline,
// leading or trailing spaces, or ending in an index mark.
func encodeStore(files map[string][]byte) (map[string][]byte, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		if err := checkPath(p); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ids := map[string]*identity{}
	var out []logical
	for _, p := range paths {
		content := string(files[p])
		l := logical{path: p, empty: content == "", stream: strings.HasPrefix(content, streamStart)}
		seen := map[string]int{}
		for _, d := range documents(content) {
			name := objectName(d)
			if !l.stream || name == "" {
				name = textName(p)
			}
			id := ids[name]
			if id == nil {
				id = &identity{users: map[string][]string{}}
				ids[name] = id
			}
			if _, ok := id.users[d]; !ok {
				id.contents = append(id.contents, d)
			}
			id.users[d] = append(id.users[d], userKey(p, seen[name]))
			seen[name]++
			l.refs = append(l.refs, name)
		}
		out = append(out, l)
	}
	store := map[string][]byte{}
	for name, id := range ids {
		store[path.Join(objectsDir, name)] = []byte(id.encode())
	}
	indexes := map[string]*strings.Builder{}
	for _, l := range out {
		seg, rest, _ := strings.Cut(l.path, "/")
		b := indexes[seg]
		if b == nil {
			b = &strings.Builder{}
			indexes[seg] = b
		}
		writeLogical(b, rest, l)
	}
	for seg, b := range indexes {
		store[seg+indexSuffix] = []byte(b.String())
	}
	return store, nil
}

// checkPath returns an error unless p can be a line of an index.
func checkPath(p string) error {
	seg, rest, ok := strings.Cut(p, "/")
	switch {
	case !ok || seg == "" || rest == "":
		return fmt.Errorf("golden: path %q: want <case>/<file>, such as kof-storage/00-defaults.yaml", p)
	case strings.ContainsAny(p, "\n#") || strings.TrimSpace(p) != p:
		return fmt.Errorf("golden: path %q: no newline, '#' or leading or trailing space allowed", p)
	case strings.HasSuffix(p, markStream) || strings.HasSuffix(p, markEmpty):
		return fmt.Errorf("golden: path %q ends like an index mark", p)
	}
	return nil
}

// base returns the most used content (ties: the first used).
func (id *identity) base() string {
	base := id.contents[0]
	for _, c := range id.contents[1:] {
		if len(id.users[c]) > len(id.users[base]) {
			base = c
		}
	}
	return base
}

// documents splits a logical file: nothing for an empty one, the documents of a stream (each without its `---`
// line, with its final newline), else the whole text.
func documents(content string) []string {
	switch {
	case content == "":
		return nil
	case strings.HasPrefix(content, streamStart):
		docs := strings.Split(content[len(streamStart):], streamSep)
		for i := range docs[:len(docs)-1] {
			docs[i] += "\n"
		}
		return docs
	default:
		return []string{content}
	}
}

// joinDocuments is the inverse of documents for a logical file of the given shape.
func joinDocuments(stream bool, docs []string) string {
	if stream {
		return streamStart + strings.Join(docs, streamStart)
	}
	return strings.Join(docs, "")
}

// objectName returns the stored name of a rendered object, `<chart>.<Kind>[.<namespace>].<name>.yaml` with the
// chart from its `# Source:` line, or "" when doc is not an object with a kind and a name.
func objectName(doc string) string {
	var obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj.Kind == "" || obj.Metadata.Name == "" {
		return ""
	}
	parts := []string{"nosource"}
	if line, _, _ := strings.Cut(doc, "\n"); strings.HasPrefix(line, "# Source: ") {
		chart, _, _ := strings.Cut(strings.TrimPrefix(line, "# Source: "), "/")
		parts[0] = chart
	}
	parts = append(parts, obj.Kind)
	if obj.Metadata.Namespace != "" {
		parts = append(parts, obj.Metadata.Namespace)
	}
	return fileName(append(parts, obj.Metadata.Name)...)
}

// textName returns the stored name of a plain-text logical file: its last two path segments below the case
// (`kof-storage/values.yaml` of `01-regional-child/regional-1/kof-storage/values.yaml`), joined by dots.
func textName(p string) string {
	_, rest, _ := strings.Cut(p, "/")
	segs := strings.Split(rest, "/")
	if len(segs) > 2 {
		segs = segs[len(segs)-2:]
	}
	name := fileName(segs...)
	if strings.HasSuffix(name, ".txt") || strings.HasSuffix(name, ".yaml") {
		return name
	}
	return name + ".txt"
}

// fileName joins parts with dots into a portable file name (letters, digits, `.`, `_`, `-`; others become `_`)
// ending in .yaml unless the last part has an extension of its own; names over maxName bytes are cut and given a
// hash of the whole.
func fileName(parts ...string) string {
	name := strings.Join(parts, ".")
	if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".txt") {
		name += ".yaml"
	}
	name = strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
	if len(name) > maxName {
		h := fnv.New32a()
		h.Write([]byte(name))
		name = fmt.Sprintf("%s-%08x.yaml", name[:maxName-20], h.Sum32())
	}
	return name
}

// writeLogical appends l to an index: its path below the case and mark, then one line per document.
func writeLogical(b *strings.Builder, rest string, l logical) {
	b.WriteString(rest)
	switch {
	case l.empty:
		b.WriteString(markEmpty)
	case l.stream:
		b.WriteString(markStream)
	}
	b.WriteByte('\n')
	for _, r := range l.refs {
		b.WriteString(refIndent + r + "\n")
	}
}

// Lines of a stored file (see encode).
const (
	baseHeader    = "=== base (%d lines)"
	variantHeader = "=== variant, as changes to the base, of:"
	hunkHeader    = "@@ -%d,%d +%d"
)

// encode writes the base in full (`=== base (N lines)` and its N lines), then each other variant in order of first
// use: `=== variant, as changes to the base, of:`, the logical files holding it (indented, see userKey), and the hunks
// that turn the base into it (`@@ -start,removed +added`, start 1-based in the base, then the removed lines
// prefixed `-` and the added ones `+`).
func (id *identity) encode() string {
	var b strings.Builder
	baseText := id.base()
	base := strings.Split(baseText, "\n")
	fmt.Fprintf(&b, baseHeader+"\n", len(base))
	for _, l := range base {
		b.WriteString(l + "\n")
	}
	for _, v := range id.contents {
		if v == baseText {
			continue
		}
		b.WriteString(variantHeader + "\n")
		for _, u := range id.users[v] {
			b.WriteString(refIndent + u + "\n")
		}
		lines := strings.Split(v, "\n")
		m := difflib.NewMatcherWithJunk(base, lines, false, nil)
		for _, op := range m.GetOpCodes() {
			if op.Tag == 'e' {
				continue
			}
			fmt.Fprintf(&b, hunkHeader+"\n", op.I1+1, op.I2-op.I1, op.J2-op.J1)
			for _, l := range base[op.I1:op.I2] {
				b.WriteString("-" + l + "\n")
			}
			for _, l := range lines[op.J1:op.J2] {
				b.WriteString("+" + l + "\n")
			}
		}
	}
	return b.String()
}
