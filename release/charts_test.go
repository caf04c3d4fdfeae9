package release

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

func created() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func loadArchive(t *testing.T, data []byte) *chart.Chart {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Packaging the same chart twice, a second apart, gives the same archive; the archive is a chart Helm loads with
// the release version and the pinned values, without the files .helmignore leaves out.
func TestPackageChartIsReproducible(t *testing.T) {
	dir := filepath.Join(moduleRoot, "charts", "kof-mothership")
	a, err := PackageChart(dir, t.TempDir(), "1.2.3", created(), testImages(t), testRepo)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	b, err := PackageChart(dir, t.TempDir(), "1.2.3", created(), testImages(t), testRepo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Data, b.Data) || a.SHA256 != b.SHA256 {
		t.Errorf("two packagings differ: %s and %s", a.SHA256, b.SHA256)
	}
	if filepath.Base(a.Archive) != "kof-mothership-1.2.3.tgz" {
		t.Errorf("archive %s", a.Archive)
	}
	onDisk, err := os.ReadFile(a.Archive)
	if err != nil || !bytes.Equal(onDisk, a.Data) {
		t.Fatalf("archive on disk differs from Data (%v)", err)
	}
	c := loadArchive(t, a.Data)
	if c.Metadata.Version != "1.2.3" || c.Metadata.AppVersion != "1.2.3" {
		t.Errorf("version %s appVersion %s", c.Metadata.Version, c.Metadata.AppVersion)
	}
	img := c.Values["operator"].(map[string]any)["image"].(map[string]any)
	if img["digest"] != testDigest || img["tag"] != "1.2.3" || img["registry"] != "127.0.0.1:5000" {
		t.Errorf("packaged operator.image %v", img)
	}
	for _, f := range c.Files {
		if f.Name == "generate.sh" || f.Name == "README.md.gotmpl" {
			t.Errorf("packaged %s, which .helmignore leaves out", f.Name)
		}
	}
}

func TestPackageChartRejectsBadPins(t *testing.T) {
	_, err := PackageChart(filepath.Join(moduleRoot, "charts", "kof-mothership"), t.TempDir(), "1.2.3", created(),
		map[string]Published{"kof-operator": published("r.example.com", "kof-operator", "1.2.3", "sha256:short")}, testRepo)
	if err == nil {
		t.Fatal("a digest the schema forbids was packaged")
	}
}
