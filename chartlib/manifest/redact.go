package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// IsSecret reports whether obj is a core v1 Secret, the one kind whose `data` and `stringData` hold credentials.
func IsSecret(obj *unstructured.Unstructured) bool {
	return obj.GetKind() == "Secret" && obj.GroupVersionKind().Group == ""
}

// Redacted returns the placeholder that stands for a secret value v: `<redacted sha256:…>` with the first 12 hex
// digits of the SHA-256 of v's JSON, so two outputs can be compared (same digest, same value) without showing the
// value. It returns nil for nil.
func Redacted(v any) any {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return "<redacted sha256:" + hex.EncodeToString(sum[:])[:12] + ">"
}

// RedactSecret returns obj itself when it is not a Secret, and otherwise a deep copy whose `data` and
// `stringData` values are replaced by Redacted (keys kept), so a written manifest shows which keys a Secret has but
// never their values.
func RedactSecret(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if !IsSecret(obj) {
		return obj
	}
	out := obj.DeepCopy()
	for _, field := range []string{"data", "stringData"} {
		m, ok := out.Object[field].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			m[k] = Redacted(v)
		}
	}
	return out
}

// RedactedYAML is YAML with every Secret passed through RedactSecret: what may be written to a file or printed.
func (s *Set) RedactedYAML() ([]byte, error) {
	r := &Set{objects: make([]Object, len(s.objects))}
	for i, o := range s.objects {
		o.Unstructured = RedactSecret(o.Unstructured)
		r.objects[i] = o
	}
	return r.YAML()
}
