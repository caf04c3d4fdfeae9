package golden

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Tree collects the golden files of one test package while its tests run and compares them, stored with each
// distinct document once (see the store layout in store.go), with the store folder Dir. Tests call Add from any
// goroutine; the package's TestMain returns Run's exit code.
type Tree struct {
	// Dir is the store folder, e.g. testdata/golden.
	Dir   string
	mu    sync.Mutex
	files map[string][]byte
}

// NewTree returns an empty Tree stored in dir.
func NewTree(dir string) *Tree { return &Tree{Dir: dir, files: map[string][]byte{}} }

// Add records got as the golden file at path (slash-separated, `<case>/<file>`, such as
// `kof-storage/00-defaults.yaml`); a second Add of the same path replaces the first.
func (tr *Tree) Add(path string, got []byte) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.files[path] = bytes.Clone(got)
}

// Run runs the tests of m, then checks the collected files against the store and returns the exit code for
// os.Exit: m's, or 1 when the store differs. With `-update` it rewrites the store instead (removing files it no
// longer needs). A run limited by -run or -skip checks and updates only the files it rendered: the others are kept
// as stored. Differences are printed once per stored file, as a line diff (-stored +rendered), to w (os.Stdout when
// nil).
func (tr *Tree) Run(m *testing.M, w io.Writer) int {
	code := m.Run()
	if w == nil {
		w = os.Stdout
	}
	complete := flagValue("test.run") == "" && flagValue("test.skip") == ""
	problems, err := tr.check(complete, *update)
	if err != nil {
		fmt.Fprintf(w, "golden: %v\n", err)
		return 1
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "golden: %d stored files of %s differ; if the change is intended run `go test -update` "+
			"and review the diff\nFAIL\n", len(problems), tr.Dir)
		return 1
	}
	return code
}

// flagValue returns the value of the registered flag name, or "".
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// check encodes the collected files (merged over the stored ones unless complete), verifies that the encoding
// decodes to exactly them, and then writes it (write) or compares it with the store, returning one problem per
// differing stored file.
func (tr *Tree) check(complete, write bool) ([]string, error) {
	tr.mu.Lock()
	files := maps.Clone(tr.files)
	tr.mu.Unlock()
	onDisk, err := readDir(tr.Dir)
	if err != nil {
		return nil, err
	}
	if !complete {
		stored, err := decodeStore(onDisk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (run the whole package with -update to rewrite it)", tr.Dir, err)
		}
		for p, c := range stored {
			if _, ok := files[p]; !ok {
				files[p] = c
			}
		}
	}
	want, err := encodeStore(files)
	if err != nil {
		return nil, err
	}
	back, err := decodeStore(want)
	if err != nil {
		return nil, fmt.Errorf("store of %s does not decode: %w", tr.Dir, err)
	}
	if diff := cmp.Diff(stringsOf(files), stringsOf(back)); diff != "" {
		return nil, fmt.Errorf("store of %s loses content (-rendered +decoded):\n%s", tr.Dir, diff)
	}
	if write {
		return nil, writeDir(tr.Dir, want, onDisk)
	}
	var problems []string
	for _, name := range unionKeys(want, onDisk) {
		w, inWant := want[name]
		g, inDisk := onDisk[name]
		switch {
		case !inDisk:
			problems = append(problems, fmt.Sprintf("golden: %s: rendered but not stored", filepath.Join(tr.Dir, name)))
		case !inWant:
			problems = append(problems, fmt.Sprintf("golden: %s: stored but no longer rendered", filepath.Join(tr.Dir, name)))
		case !bytes.Equal(w, g):
			problems = append(problems, fmt.Sprintf("golden: %s differs (-stored +rendered):\n%s", filepath.Join(tr.Dir, name),
				cmp.Diff(strings.Split(string(g), "\n"), strings.Split(string(w), "\n"))))
		}
	}
	return problems, nil
}

// stringsOf returns m with string values, for readable diffs.
func stringsOf(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// unionKeys returns the sorted union of the keys of a and b.
func unionKeys(a, b map[string][]byte) []string {
	set := make(map[string][]byte, len(a)+len(b))
	maps.Copy(set, a)
	maps.Copy(set, b)
	return slices.Sorted(maps.Keys(set))
}

// readDir returns every regular file under dir by slash-separated relative name (nothing when dir is missing).
func readDir(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", dir, err)
	}
	return out, nil
}

// writeDir writes want under dir, removes the files of old that want lacks and then every folder left empty.
func writeDir(dir string, want, old map[string][]byte) error {
	for name, data := range want {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if bytes.Equal(old[name], data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	for name := range old {
		if _, ok := want[name]; !ok {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				return fmt.Errorf("remove %s: %w", name, err)
			}
		}
	}
	var dirs []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return err
	}); err != nil {
		return fmt.Errorf("walk %s: %w", dir, err)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
			if err := os.Remove(d); err != nil {
				return fmt.Errorf("remove empty folder %s: %w", d, err)
			}
		}
	}
	return nil
}
