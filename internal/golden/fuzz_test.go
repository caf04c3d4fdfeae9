package golden

import (
	"fmt"
	"testing"
)

// FuzzField checks that Field never panics and that a path it accepts resolves consistently.
func FuzzField(f *testing.F) {
	for _, p := range []string{`spec.containers[0].args[1]`, `metadata.labels["app.kubernetes.io/name"]`, `[`, `a..b`, `[-1]`} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		v1, err1 := Field(obj, path)
		v2, err2 := Field(obj, path)
		if (err1 == nil) != (err2 == nil) || (err1 == nil && !equal(v1, v2)) {
			t.Fatalf("Field(%q) is not deterministic", path)
		}
	})
}

// equal compares values returned by Field (maps and lists by identity of their printed form).
func equal(a, b any) bool {
	return sprint(a) == sprint(b)
}

func sprint(v any) string { return fmt.Sprint(v) }
