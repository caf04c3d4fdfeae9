package remote

import (
	"os"
	"path/filepath"
	"testing"

	"kof.dev/kof/internal/golden"
)

// goldens collects every golden file of the package's tests; TestMain compares them with the store under
// testdata/golden once all tests ran (internal/golden: each distinct object stored once; `-update` rewrites it).
var goldens = golden.NewTree(filepath.Join("testdata", "golden"))

// TestMain runs the tests, then checks the golden store.
func TestMain(m *testing.M) { os.Exit(goldens.Run(m, nil)) }

// checkGolden records got as the golden file name (`<chart>/<case>.yaml`), compared with the store after the tests.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldens.Add(name, got)
}

// checkGoldenFiles records each of files as the golden file `<dir>/<name>`.
func checkGoldenFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, got := range files {
		goldens.Add(dir+"/"+name, got)
	}
}
