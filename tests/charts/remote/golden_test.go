package remote

import (
	"path/filepath"
	"testing"

	"kof.dev/kof/chartlib/golden"
)

// checkGolden compares got with testdata/golden/<name> through chartlib/golden (`-update` rewrites the file).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, filepath.Join("testdata", "golden", name), got)
}
