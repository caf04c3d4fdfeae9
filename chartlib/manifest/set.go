package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Len returns the number of objects in s.
func (s *Set) Len() int { return len(s.objects) }

// Entries returns the objects of s with their sources, in the Set's order. The slice is a copy; the objects are
// shared.
func (s *Set) Entries() []Object { return append([]Object(nil), s.objects...) }

// Objects returns the objects of s in the Set's order. The slice is a copy; the objects are shared.
func (s *Set) Objects() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(s.objects))
	for i, o := range s.objects {
		out[i] = o.Unstructured
	}
	return out
}

// matchKind reports whether obj is of kind, given as `Kind` (any group) or `Kind.group` (e.g.
// `HelmRelease.helm.toolkit.fluxcd.io`; `Kind.` selects the core group).
func matchKind(obj *unstructured.Unstructured, kind string) bool {
	name, group, qualified := strings.Cut(kind, ".")
	if obj.GetKind() != name {
		return false
	}
	return !qualified || obj.GroupVersionKind().Group == group
}

// Get returns the first object of kind (`Kind` or `Kind.group`, see OfKind) with the given namespace and name, or
// nil when there is none.
func (s *Set) Get(kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range s.objects {
		if matchKind(o.Unstructured, kind) && o.GetNamespace() == namespace && o.GetName() == name {
			return o.Unstructured
		}
	}
	return nil
}

// MustGet is Get returning an error naming the missing object instead of nil.
func (s *Set) MustGet(kind, namespace, name string) (*unstructured.Unstructured, error) {
	if obj := s.Get(kind, namespace, name); obj != nil {
		return obj, nil
	}
	return nil, fmt.Errorf("no %s %q in namespace %q among %d rendered objects", kind, name, namespace, s.Len())
}

// OfKind returns the objects of kind in the Set's order. kind is `Kind` (any API group) or `Kind.group`.
func (s *Set) OfKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range s.objects {
		if matchKind(o.Unstructured, kind) {
			out = append(out, o.Unstructured)
		}
	}
	return out
}

// Kinds returns how many objects of each kind s holds, keyed by kind name.
func (s *Set) Kinds() map[string]int {
	out := map[string]int{}
	for _, o := range s.objects {
		out[o.GetKind()]++
	}
	return out
}

// KindSummary returns Kinds as sorted `Kind=count` strings, e.g. [ConfigMap=2 Deployment=1].
func (s *Set) KindSummary() []string {
	var out []string
	for k, n := range s.Kinds() {
		out = append(out, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(out)
	return out
}

// Duplicates returns every Key held by more than one object, each once, in the Set's order.
func (s *Set) Duplicates() []Key {
	seen := map[Key]int{}
	var out []Key
	for _, o := range s.objects {
		k := KeyOf(o.Unstructured)
		seen[k]++
		if seen[k] == 2 {
			out = append(out, k)
		}
	}
	return out
}

// YAML returns the Set as one YAML stream: each object preceded by `---` and a `# Source: <template>` line, keys
// sorted (sigs.k8s.io/yaml), in the Set's order. It returns an error only if an object cannot be marshalled.
func (s *Set) YAML() ([]byte, error) {
	var buf bytes.Buffer
	for _, o := range s.objects {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("marshal %s from %s: %w", KeyOf(o.Unstructured), o.Source, err)
		}
		buf.WriteString("---\n")
		if o.Source != "" {
			buf.WriteString("# Source: " + o.Source + "\n")
		}
		buf.Write(data)
	}
	return buf.Bytes(), nil
}
