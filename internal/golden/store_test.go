package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// object returns a rendered object document of chart with one ConfigMap data key per line of data.
func object(chart, name string, data ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Source: %s/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: kof\ndata:\n", chart, name)
	for i, d := range data {
		fmt.Fprintf(&b, "  k%d: %s\n", i, d)
	}
	return b.String()
}

// stream returns a YAML stream of docs as manifest.Set.YAML writes it.
func stream(docs ...string) []byte { return []byte("---\n" + strings.Join(docs, "---\n")) }

// sample is a package's worth of golden files: a shared object with variants, an empty file, plain texts.
func sample() map[string][]byte {
	long := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	variant := append(append([]string(nil), long[:4]...), append([]string{"X"}, long[5:]...)...)
	return map[string][]byte{
		"01-one/mgmt/c/manifest.yaml":   stream(object("c", "shared", long...), object("c", "own", "1")),
		"02-two/mgmt/c/manifest.yaml":   stream(object("c", "shared", long...)),
		"03-three/mgmt/c/manifest.yaml": stream(object("c", "shared", variant...), object("d", "own", "2")),
		"03-three/mgmt/d/manifest.yaml": {},
		"01-one/mgmt/c/values.yaml":     []byte("a: 1\n"),
		"02-two/mgmt/c/values.yaml":     []byte("a: 1\n"),
		"03-three/summary.txt":          []byte("no final newline"),
		"layer2/child.yaml":             []byte("# service x\n---\nnot a stream\n"),
	}
}

func TestStoreRoundTrip(t *testing.T) {
	files := sample()
	store, err := encodeStore(files)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeStore(store)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stringsOf(files), stringsOf(back)); diff != "" {
		t.Errorf("decode(encode) (-files +decoded):\n%s", diff)
	}
	shared := string(store["objects/c.ConfigMap.kof.shared.yaml"])
	if strings.Count(shared, "k0: a") != 1 || !strings.Contains(shared, variantHeader+"\n  03-three/mgmt/c/manifest.yaml\n@@ -12,1 +1\n-  k4: e\n+  k4: X\n") {
		t.Errorf("shared object not stored once with its variant as a change:\n%s", shared)
	}
	if got := string(store["03-three.index"]); !strings.Contains(got, "  c.ConfigMap.kof.shared.yaml\n") ||
		!strings.Contains(got, "mgmt/d/manifest.yaml (empty)\n") {
		t.Errorf("index of 03-three:\n%s", got)
	}
	if got := string(store["objects/c.values.yaml"]); got != "=== base (2 lines)\na: 1\n\n" {
		t.Errorf("equal values files are not stored once: %q", got)
	}
}

// TestSharedChangeIsOneStoredFile plants one change in an object that three cases hold (in two variants) and
// checks that exactly one stored file changes.
func TestSharedChangeIsOneStoredFile(t *testing.T) {
	before, err := encodeStore(sample())
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string][]byte{}
	for p, c := range sample() {
		changed[p] = []byte(strings.ReplaceAll(string(c), "  k1: b\n", "  k1: B\n"))
	}
	after, err := encodeStore(changed)
	if err != nil {
		t.Fatal(err)
	}
	var differ []string
	for _, name := range unionKeys(before, after) {
		if string(before[name]) != string(after[name]) {
			differ = append(differ, name)
		}
	}
	if diff := cmp.Diff([]string{"objects/c.ConfigMap.kof.shared.yaml"}, differ); diff != "" {
		t.Errorf("stored files changed by one shared change (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := encodeStore(sample())
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range map[string]struct {
		file, text, want string
	}{
		"unknown file":   {"stray.txt", "x\n", "neither an index"},
		"missing object": {"02-two.index", "mgmt/c/manifest.yaml ---\n  c.ConfigMap.kof.gone.yaml\n", "no stored file"},
		"bad count":      {"objects/c.values.yaml", "=== base (9 lines)\na\n", "followed by N lines"},
		"no users":       {"objects/c.values.yaml", "=== base (1 lines)\na\n" + variantHeader + "\n@@ -1,1 +0\n-a\n", "without the logical files"},
		"wrong removal":  {"objects/c.values.yaml", "=== base (1 lines)\na\n" + variantHeader + "\n  02-two/mgmt/c/values.yaml\n@@ -1,1 +0\n-b\n", "removed line"},
		"two texts":      {"02-two.index", "mgmt/c/values.yaml\n  c.values.yaml\n  c.values.yaml\n", "none belongs"},
	} {
		store := map[string][]byte{}
		for k, v := range good {
			store[k] = v
		}
		store[tt.file] = []byte(tt.text)
		if _, err := decodeStore(store); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", name, err, tt.want)
		}
	}
	if _, err := encodeStore(map[string][]byte{"top.yaml": nil}); err == nil || !strings.Contains(err.Error(), "<case>/<file>") {
		t.Errorf("path without a case: error %v", err)
	}
}

func TestTreeCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "golden")
	if err := os.MkdirAll(filepath.Join(dir, "old-layout", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old-layout", "x", "manifest.yaml"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := NewTree(dir)
	for p, c := range sample() {
		tr.Add(p, c)
	}
	if _, err := tr.check(true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "old-layout")); !os.IsNotExist(err) {
		t.Errorf("update kept the files it no longer needs (stat: %v)", err)
	}
	if problems, err := tr.check(true, false); err != nil || len(problems) != 0 {
		t.Fatalf("after update: problems %q, error %v", problems, err)
	}
	tr.Add("02-two/mgmt/c/manifest.yaml", stream(object("c", "shared", "a", "b", "c", "d", "e", "f", "g", "Z")))
	problems, err := tr.check(true, false)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "c.ConfigMap.kof.shared.yaml differs (-stored +rendered)") {
		t.Errorf("one changed object: problems %q, error %v; want its stored file alone", problems, err)
	}
	partial := NewTree(dir)
	partial.Add("01-one/mgmt/c/values.yaml", []byte("a: 1\n"))
	if problems, err := partial.check(false, false); err != nil || len(problems) != 0 {
		t.Errorf("partial run of an unchanged file: problems %q, error %v", problems, err)
	}
	if problems, err := partial.check(true, false); err != nil || len(problems) == 0 {
		t.Errorf("complete run missing most files: no problems (error %v)", err)
	}
}
