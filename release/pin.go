package release

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Upstream is where KOF's own images and charts are published by KOF itself: the chart defaults name
// `<Upstream>/<binary>` (values `registry: ghcr.io`, `repository: k0rdent/kof/<binary>`) and the umbrella's chart
// repository `oci://<Upstream>/charts`. A release to another registry rewrites exactly these values.
const Upstream = "ghcr.io/k0rdent/kof"

// ChartsPath is the path under a release registry that holds the charts (`<registry>/charts/<chart>`).
const ChartsPath = "charts"

// Keys of a KOF image block in chart values (docs/release.md, "Images in chart values"): the rendered reference is
// `<registry>/<repository>:<tag>@<digest>`, `global.registry` replaces `registry`, an empty tag means the chart's
// appVersion and an empty digest leaves `@<digest>` out.
const (
	KeyRegistry   = "registry"
	KeyRepository = "repository"
	KeyTag        = "tag"
	KeyDigest     = "digest"
)

// UmbrellaChart is the chart whose values name KOF's chart repository, at UmbrellaRepoURLKey.
const UmbrellaChart = "kof"

// UmbrellaRepoURLKey is the values path of the URL of the umbrella's HelmRepository of KOF's charts
// (charts/kof/values.yaml).
const UmbrellaRepoURLKey = "global.helmRepo.kofManaged.url"

// Published is where one KOF image of a release lives.
type Published struct {
	// Registry is the registry host (`host[:port]`), Repository the path below it (`path/<name>`).
	Registry, Repository string
	// Tag is the release version; Digest the image index digest (`sha256:...`).
	Tag, Digest string
}

// Pin is one value a release rewrote in a chart's values.
type Pin struct {
	// Path is the dotted values path of the block or key, e.g. `operator.image`.
	Path string `json:"path"`
	// Image is the KOF image name the block names ("" for the chart repository URL).
	Image string `json:"image,omitempty"`
	// Value is the new value: the pinned image reference or the chart repository URL.
	Value string `json:"value"`
}

// PinValues rewrites the values.yaml text data of chart for a release: every KOF image block (a mapping whose
// `registry` and `repository` join to `<Upstream>/<name>`) gets the registry, repository, tag and digest of
// images[name]; in the umbrella chart the chart repository URL becomes repoURL. Only those scalars change; every
// other byte of the file, comments included, stays. It returns the new text and what it rewrote. Errors, all at
// once, name the chart, the values path and the fix: a block naming an image the release does not build, a block
// without `tag` or `digest`, or any other value still naming Upstream.
func PinValues(chart string, data []byte, images map[string]Published, repoURL string) ([]byte, []Pin, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("chart %s: parse values.yaml: %w", chart, err)
	}
	p := &pinner{chart: chart, images: images}
	if chart == UmbrellaChart {
		p.pinRepoURL(&doc, repoURL)
	}
	if len(doc.Content) == 1 {
		p.walk(doc.Content[0], nil)
	}
	if err := errors.Join(p.errs...); err != nil {
		return nil, nil, err
	}
	out, err := replaceScalars(data, p.edits)
	if err != nil {
		return nil, nil, fmt.Errorf("chart %s: %w", chart, err)
	}
	if err := checkOnlyEdited(data, out, p.edits); err != nil {
		return nil, nil, fmt.Errorf("chart %s: %w", chart, err)
	}
	return out, p.pins, nil
}

type edit struct {
	node  *yaml.Node
	path  string
	value string
}

type pinner struct {
	chart  string
	images map[string]Published
	edits  []edit
	pins   []Pin
	errs   []error
}

func (p *pinner) walk(n *yaml.Node, path []string) {
	switch n.Kind {
	case yaml.MappingNode:
		if p.imageBlock(n, path) {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			p.walk(n.Content[i+1], append(append([]string{}, path...), n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p.walk(c, append(append([]string{}, path...), strconv.Itoa(i)))
		}
	case yaml.ScalarNode:
		if strings.Contains(n.Value, Upstream+"/") && !p.edited(n) {
			p.errs = append(p.errs, fmt.Errorf("%s.values.%s: %q names KOF's upstream registry outside an image "+
				"block; KOF images are blocks {%s, %s, %s, %s} with %s: ghcr.io and %s: k0rdent/kof/<binary> "+
				"(docs/release.md)", p.chart, dotted(path), n.Value, KeyRegistry, KeyRepository, KeyTag, KeyDigest,
				KeyRegistry, KeyRepository))
		}
	}
}

// imageBlock pins n when it is a KOF image block and reports whether it was one (its children are then done).
func (p *pinner) imageBlock(n *yaml.Node, path []string) bool {
	reg, repo := child(n, KeyRegistry), child(n, KeyRepository)
	if reg == nil || repo == nil || reg.Kind != yaml.ScalarNode || repo.Kind != yaml.ScalarNode {
		return false
	}
	full := strings.Trim(reg.Value, "/") + "/" + repo.Value
	name, ok := strings.CutPrefix(full, Upstream+"/")
	if !ok {
		return false
	}
	where := p.chart + ".values." + dotted(path)
	pub, built := p.images[name]
	if !built {
		names := make([]string, 0, len(p.images))
		for k := range p.images {
			names = append(names, k)
		}
		sort.Strings(names)
		p.errs = append(p.errs, fmt.Errorf("%s: image %s is not built by this repository (images: %s); add "+
			"cmd/%s or name one of them", where, full, strings.Join(names, ", "), name))
		return true
	}
	tag, digest := child(n, KeyTag), child(n, KeyDigest)
	for key, v := range map[string]*yaml.Node{KeyTag: tag, KeyDigest: digest} {
		if v == nil || v.Kind != yaml.ScalarNode {
			p.errs = append(p.errs, fmt.Errorf("%s.%s: missing; every KOF image block has %s and %s (\"\" in the "+
				"chart, set by the release)", where, key, KeyTag, KeyDigest))
		}
	}
	if tag == nil || digest == nil || tag.Kind != yaml.ScalarNode || digest.Kind != yaml.ScalarNode {
		return true
	}
	base := dotted(path)
	p.edits = append(p.edits, edit{reg, base + "." + KeyRegistry, pub.Registry},
		edit{repo, base + "." + KeyRepository, pub.Repository}, edit{tag, base + "." + KeyTag, pub.Tag},
		edit{digest, base + "." + KeyDigest, pub.Digest})
	p.pins = append(p.pins, Pin{Path: base, Image: name,
		Value: pub.Registry + "/" + pub.Repository + ":" + pub.Tag + "@" + pub.Digest})
	return true
}

func (p *pinner) pinRepoURL(doc *yaml.Node, url string) {
	n := doc
	if len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, k := range strings.Split(UmbrellaRepoURLKey, ".") {
		if n = child(n, k); n == nil || (k == "url" && n.Kind != yaml.ScalarNode) {
			p.errs = append(p.errs, fmt.Errorf("%s.values.%s: missing; the release sets it to %s", p.chart,
				UmbrellaRepoURLKey, url))
			return
		}
	}
	p.edits = append(p.edits, edit{n, UmbrellaRepoURLKey, url})
	p.pins = append(p.pins, Pin{Path: UmbrellaRepoURLKey, Value: url})
}

func (p *pinner) edited(n *yaml.Node) bool {
	for _, e := range p.edits {
		if e.node == n {
			return true
		}
	}
	return false
}

// child returns the value node of key in the mapping n, nil when n is no mapping or lacks key.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func dotted(path []string) string { return strings.Join(path, ".") }

// replaceScalars replaces the text of each edited scalar in data with its new value, double-quoted, from the last
// to the first so earlier offsets stay valid. Only plain and quoted single-line scalars can be replaced.
func replaceScalars(data []byte, edits []edit) ([]byte, error) {
	type span struct {
		start, end int
		text       string
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	offsets := make([]int, len(lines)+1)
	for i, l := range lines {
		offsets[i+1] = offsets[i] + len(l)
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		n := e.node
		if n.Line < 1 || n.Line > len(lines) {
			return nil, fmt.Errorf("values.%s: no position in the file", e.path)
		}
		line := lines[n.Line-1]
		col := runeOffset(line, n.Column-1)
		end, err := scalarEnd(line, col, n)
		if err != nil {
			return nil, fmt.Errorf("values.%s: %w", e.path, err)
		}
		spans = append(spans, span{offsets[n.Line-1] + col, offsets[n.Line-1] + end, strconv.Quote(e.value)})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start > spans[j].start })
	out := append([]byte{}, data...)
	for _, s := range spans {
		out = append(out[:s.start], append([]byte(s.text), out[s.end:]...)...)
	}
	return out, nil
}

// runeOffset returns the byte offset of the col-th rune of line (yaml.v3 columns count runes).
func runeOffset(line []byte, col int) int {
	off := 0
	for i := 0; i < col && off < len(line); i++ {
		_, size := utf8.DecodeRune(line[off:])
		off += size
	}
	return off
}

// scalarEnd returns the byte offset in line just past the scalar n that starts at start.
func scalarEnd(line []byte, start int, n *yaml.Node) (int, error) {
	rest := line[start:]
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return start + i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return start + i + 1, nil
			}
		}
	case n.Style == 0 || n.Style == yaml.TaggedStyle:
		if bytes.HasPrefix(rest, []byte(n.Value)) {
			return start + len(n.Value), nil
		}
	}
	return 0, errors.New("only single-line plain or quoted scalars can be pinned; write the value on one line")
}

// checkOnlyEdited decodes before and after and fails unless they differ in exactly the edited paths, each now
// holding its new value: a proof that the text replacement changed nothing else.
func checkOnlyEdited(before, after []byte, edits []edit) error {
	var a, b any
	if err := yaml.Unmarshal(before, &a); err != nil {
		return fmt.Errorf("reparse values: %w", err)
	}
	if err := yaml.Unmarshal(after, &b); err != nil {
		return fmt.Errorf("pinned values.yaml does not parse: %w", err)
	}
	for _, e := range edits {
		if err := setPath(a, strings.Split(e.path, "."), e.value); err != nil {
			return err
		}
	}
	if !reflect.DeepEqual(a, b) {
		return errors.New("pinning changed more of values.yaml than the pinned keys")
	}
	return nil
}

func setPath(v any, path []string, value string) error {
	for i, k := range path {
		switch m := v.(type) {
		case map[string]any:
			if i == len(path)-1 {
				m[k] = value
				return nil
			}
			v = m[k]
		case []any:
			idx, err := strconv.Atoi(k)
			if err != nil || idx >= len(m) {
				return fmt.Errorf("values.%s: no such element", strings.Join(path, "."))
			}
			if i == len(path)-1 {
				m[idx] = value
				return nil
			}
			v = m[idx]
		default:
			return fmt.Errorf("values.%s: not a mapping", strings.Join(path[:i], "."))
		}
	}
	return nil
}
