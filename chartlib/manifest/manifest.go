// Package manifest models the objects a chart renders: a Set of unstructured Kubernetes objects in a stable order,
// each remembering the template file it came from.
//
// Parse turns Helm's rendered files (template path → YAML text, as the Helm engine returns them) into a Set. Parsing
// is strict: a duplicate map key, a document that is not a map, or a document without apiVersion or kind is an
// error naming the template file and the document index. Empty documents (only comments or whitespace) are skipped,
// as Helm itself does.
//
// Order: objects are sorted by Helm's install order of kinds (helm.sh/helm/v3/pkg/releaseutil.InstallOrder; kinds
// it does not list come after, alphabetically), then by namespace, name and source. The order therefore depends
// only on the objects, never on map iteration or template file order.
//
// A Set is read-only after construction (New copies the slice, not the objects); callers that
// change an object in place change it for every Set holding it.
package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Object is one rendered Kubernetes object and the template file that produced it.
type Object struct {
	// Unstructured is the parsed object.
	*unstructured.Unstructured
	// Source is the chart-relative template path, e.g. `mychart/templates/vmcluster.yaml`.
	Source string
}

// Key identifies an object within a render: its kind, namespace ("" for cluster-scoped or unset) and name.
type Key struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// String returns `Kind namespace/name` (or `Kind name` when the namespace is empty), with `Kind.group` for
// objects outside the core group.
func (k Key) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace == "" {
		return kind + " " + k.Name
	}
	return kind + " " + k.Namespace + "/" + k.Name
}

// KeyOf returns the Key of obj (group from its apiVersion).
func KeyOf(obj *unstructured.Unstructured) Key {
	return Key{
		Group:     obj.GroupVersionKind().Group,
		Kind:      obj.GetKind(),
		Namespace: obj.GetNamespace(),
		Name:      obj.GetName(),
	}
}

// Set is an ordered collection of rendered objects.
type Set struct {
	objects []Object
}

// New returns a Set holding objs in the package's stable order.
func New(objs ...Object) *Set {
	s := &Set{objects: append([]Object(nil), objs...)}
	s.sort()
	return s
}

// Parse parses rendered template files (path → YAML text, possibly several `---` separated documents) into a Set.
// Files whose base name starts with `_` and NOTES.txt files are ignored, as Helm does. It returns an error naming
// the file and document index for invalid YAML, duplicate map keys, non-map documents, or a missing apiVersion or
// kind.
func Parse(files map[string]string) (*Set, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var objs []Object
	for _, name := range names {
		if ignoredFile(name) {
			continue
		}
		parsed, err := ParseDocuments(name, []byte(files[name]))
		if err != nil {
			return nil, err
		}
		objs = append(objs, parsed...)
	}
	return New(objs...), nil
}

// ignoredFile reports whether Helm would drop a rendered file instead of installing it.
func ignoredFile(name string) bool {
	base := name[strings.LastIndex(name, "/")+1:]
	return strings.HasPrefix(base, "_") || strings.HasSuffix(name, "NOTES.txt")
}

// ParseDocuments parses one YAML stream (documents separated by `---` lines) from source into Objects, strictly:
// duplicate keys, non-map documents, documents without apiVersion or kind and objects without metadata.name (nor
// generateName) are errors naming source and the 1-based document index. A document that is a List (kind ending in "List" with an items array) is not expanded.
func ParseDocuments(source string, data []byte) ([]Object, error) {
	var objs []Object
	for i, doc := range splitDocuments(data) {
		if isBlank(doc) {
			continue
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("parse %s (document %d): %w", source, i+1, err)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("parse %s (document %d): %w", source, i+1, err)
		}
		if name, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "name"); found && name != nil {
			if _, ok := name.(bool); ok {
				return nil, fmt.Errorf("parse %s (document %d): %s %s: metadata.name is the boolean %v, not a "+
					"string: YAML reads an unquoted y, yes, on, true, n, no, off or false as a boolean; quote the name "+
					"as you wrote it (name: \"y\")", source, i+1, u.GetAPIVersion(), u.GetKind(), name)
			}
			if _, ok := name.(string); !ok {
				return nil, fmt.Errorf("parse %s (document %d): %s %s: metadata.name %v is not a string; quote it "+
					"(name: \"%v\")", source, i+1, u.GetAPIVersion(), u.GetKind(), name, name)
			}
		}
		if u.GetName() == "" && u.GetGenerateName() == "" && !strings.HasSuffix(u.GetKind(), "List") {
			return nil, fmt.Errorf("parse %s (document %d): %s %s has no metadata.name; give every object a name",
				source, i+1, u.GetAPIVersion(), u.GetKind())
		}
		objs = append(objs, Object{Unstructured: u, Source: source})
	}
	return objs, nil
}

// splitDocuments cuts a YAML stream at lines that are exactly `---` (optionally followed by spaces or a comment).
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(trimmed, []byte("---")) || bytes.HasPrefix(trimmed, []byte("--- #")) {
			docs = append(docs, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}

// isBlank reports whether doc holds only whitespace and comments.
func isBlank(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// kindRank returns the install-order rank of kind: its index in Helm's InstallOrder, or len(InstallOrder).
func kindRank(kind string) int {
	for i, k := range releaseutil.InstallOrder {
		if k == kind {
			return i
		}
	}
	return len(releaseutil.InstallOrder)
}

// sort orders the objects by install rank, kind, group, namespace, name and source.
func (s *Set) sort() {
	sort.SliceStable(s.objects, func(i, j int) bool {
		a, b := s.objects[i], s.objects[j]
		ka, kb := KeyOf(a.Unstructured), KeyOf(b.Unstructured)
		if ra, rb := kindRank(ka.Kind), kindRank(kb.Kind); ra != rb {
			return ra < rb
		}
		for _, p := range [][2]string{{ka.Kind, kb.Kind}, {ka.Group, kb.Group}, {ka.Namespace, kb.Namespace},
			{ka.Name, kb.Name}, {a.Source, b.Source}} {
			if p[0] != p[1] {
				return p[0] < p[1]
			}
		}
		return false
	})
}
