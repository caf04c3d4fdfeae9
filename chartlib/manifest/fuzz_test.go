package manifest

import (
	"testing"
)

// FuzzParseDocuments checks that any input either fails with an error or yields objects whose YAML parses back to
// the same number of objects.
func FuzzParseDocuments(f *testing.F) {
	f.Add([]byte(stream))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n"))
	f.Add([]byte("---\n---\n# only comments\n"))
	f.Add([]byte("- a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := ParseDocuments("fuzz.yaml", data)
		if err != nil {
			return
		}
		out, err := New(objs...).YAML()
		if err != nil {
			t.Fatalf("YAML of parsed objects: %v", err)
		}
		again, err := ParseDocuments("again.yaml", out)
		if err != nil {
			t.Fatalf("re-parse own output: %v\n%s", err, out)
		}
		if len(again) != len(objs) {
			t.Fatalf("re-parse gave %d objects, want %d", len(again), len(objs))
		}
	})
}
