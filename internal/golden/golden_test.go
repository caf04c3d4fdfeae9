package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/manifest"
)

var obj = map[string]any{
	"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "kof"}},
	"spec": map[string]any{"containers": []any{
		map[string]any{"name": "a", "args": []any{"--x", "--y"}},
	}},
}

func TestField(t *testing.T) {
	for path, want := range map[string]any{
		`metadata.labels["app.kubernetes.io/name"]`: "kof",
		`spec.containers[0].args[1]`:                "--y",
		`spec.containers[0].name`:                   "a",
	} {
		got, err := Field(obj, path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	for path, want := range map[string]string{
		`spec.containers[3]`:      "spec.containers: index 3 out of range (length 1)",
		`spec.volumes`:            `spec: no key "volumes"`,
		`spec.containers.name`:    `spec.containers: is a list, not a map`,
		`metadata.labels[oops]`:   "neither an index nor a quoted key",
		`spec.containers[0].x[0]`: `spec.containers[0]: no key "x"`,
	} {
		_, err := Field(obj, path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
}

// recorder captures test failures without failing the real test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.errors = append(r.errors, f) }

func TestAssert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Assert(r, path, []byte("a\nb\n"))
	if len(r.errors) != 0 {
		t.Errorf("equal content failed: %v", r.errors)
	}
	Assert(r, path, []byte("a\nc\n"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "differs") {
		t.Errorf("different content: %v", r.errors)
	}
	Assert(r, path+".missing", []byte("x"))
	if len(r.errors) != 2 || !strings.Contains(r.errors[1], "-update") {
		t.Errorf("missing golden: %v", r.errors)
	}
}

func TestExpectations(t *testing.T) {
	objs, err := manifest.ParseDocuments("t.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\ndata:\n  k: v\n"))
	if err != nil {
		t.Fatal(err)
	}
	set := manifest.New(objs...)
	r := &recorder{TB: t}
	ExpectField(r, set, "ConfigMap", "ns", "c", "data.k", "v")
	ExpectKinds(r, set, map[string]int{"ConfigMap": 1})
	ExpectAbsent(r, set, "ConfigMap", "ns", "other")
	if len(r.errors) != 0 {
		t.Fatalf("passing expectations failed: %v", r.errors)
	}
	ExpectField(r, set, "ConfigMap", "ns", "c", "data.k", "w")
	ExpectField(r, set, "ConfigMap", "ns", "missing", "data.k", "v")
	ExpectKinds(r, set, map[string]int{"Secret": 1})
	ExpectAbsent(r, set, "ConfigMap", "ns", "c")
	if len(r.errors) != 4 {
		t.Errorf("failing expectations recorded %d errors, want 4: %v", len(r.errors), r.errors)
	}
}

func TestUpdateRewrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "new.golden")
	*update = true
	t.Cleanup(func() { *update = false })
	Assert(t, path, []byte("fresh\n"))
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "fresh\n" {
		t.Fatalf("-update wrote %q, %v", got, err)
	}
	*update = false
	r := &recorder{TB: t}
	Assert(r, path, []byte("fresh\n"))
	if len(r.errors) != 0 {
		t.Errorf("after -update the golden does not match: %v", r.errors)
	}
}
