package charts

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"

	"kof.dev/kof/chartlib/render"
)

// TestEmbeddedEqualsDirectories checks that every chart folder is embedded and that loading it from FS gives the
// same chart files, byte for byte, as Helm's directory loader reading the folder.
func TestEmbeddedEqualsDirectories(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("*", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 8 {
		t.Fatalf("found %d charts (%v); want every KOF chart", len(dirs), dirs)
	}
	for _, cy := range dirs {
		dir := filepath.Dir(cy)
		t.Run(dir, func(t *testing.T) {
			want, err := render.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := render.LoadFS(FS(), dir)
			if err != nil {
				t.Fatalf("embedded %s: %v (is the folder matched by the go:embed line of charts.go?)", dir, err)
			}
			if diff := cmp.Diff(files(want), files(got)); diff != "" {
				t.Errorf("embedded %s differs from the folder (-folder +embedded):\n%s", dir, diff)
			}
		})
	}
}

// files returns every raw file of c by name.
func files(c *chart.Chart) map[string]string {
	out := map[string]string{}
	for _, f := range c.Raw {
		out[f.Name] = string(f.Data)
	}
	return out
}
