// Package golden keeps the golden files of a test package with each distinct rendered document stored once, and
// offers semantic assertions on rendered objects, so that a regenerated golden file cannot hide a regression
// unnoticed.
//
// Golden files: Assert compares bytes with one file (`-update` rewrites it). For rendered charts and fleets, a
// package's tests Add what they render to a Tree (`kof-storage/00-defaults.yaml`, a scenario's
// `01-regional-child/regional-1/kof-storage/manifest.yaml`); its TestMain returns Tree.Run, which compares the
// collected files with the store folder after the tests and prints each differing stored file once, as a go-cmp
// line diff (-stored +rendered). The store (store.go) holds one index per case and one file per document identity
// (an object's chart, kind, namespace and name): the most used variant in full, the others as line changes to it, so
// a template change shared by every copy of an object is one change in review. Run the tests with `-update`
// (`go test ./pkg -update`) to rewrite the store, then review the diff in version control. The `-update` flag is
// registered by this package in every test binary that imports it.
//
// Semantic assertions: Field reads a value from an object by a field path such as
// `spec.template.spec.containers[0].env[1].value` or `metadata.labels["app.kubernetes.io/name"]`; ExpectField,
// ExpectKinds and ExpectAbsent fail the test with the object and path named.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/manifest"
)

// update is the `-update` test flag. A flag must be a package-level variable to be registered before
// testing.Init parses the command line; nothing writes it but the flag package.
var update = flag.Bool("update", false, "rewrite the golden store from the current output")

// Assert compares got with the golden file at path. With -update it writes got to path (creating directories)
// instead. A missing golden file fails the test with a hint to run with -update. Line endings are compared as is.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden: create directory for %s: %v", path, err)
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: write %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: read %s: %v (run `go test -update` to create it)", path, err)
		return
	}
	if bytes.Equal(want, got) {
		return
	}
	diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n"))
	t.Errorf("golden: %s differs (-golden +got); if the change is intended run `go test -update` and review:\n%s",
		path, diff)
}

// ExpectKinds fails the test unless set holds exactly the kind counts want (manifest.Set.Kinds).
func ExpectKinds(t testing.TB, set *manifest.Set, want map[string]int) {
	t.Helper()
	if diff := cmp.Diff(want, set.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

// ExpectAbsent fails the test if set holds an object of kind (`Kind` or `Kind.group`) with namespace and name.
func ExpectAbsent(t testing.TB, set *manifest.Set, kind, namespace, name string) {
	t.Helper()
	if set.Get(kind, namespace, name) != nil {
		t.Errorf("%s %s/%s is rendered; want it absent", kind, namespace, name)
	}
}

// ExpectField fails the test unless the object kind/namespace/name exists in set and its value at path (see Field)
// equals want (go-cmp; numbers from YAML are int64 or float64, so write want as such).
func ExpectField(t testing.TB, set *manifest.Set, kind, namespace, name, path string, want any) {
	t.Helper()
	obj := set.Get(kind, namespace, name)
	if obj == nil {
		t.Errorf("%s %s/%s not rendered (kinds: %v)", kind, namespace, name, set.KindSummary())
		return
	}
	got, err := Field(obj.Object, path)
	if err != nil {
		t.Errorf("%s %s/%s: %v", kind, namespace, name, err)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s %s/%s %s (-want +got):\n%s", kind, namespace, name, path, diff)
	}
}
