package release

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/release/image"
)

const (
	moduleRoot = ".."
	testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testRepo   = "oci://127.0.0.1:5000/kof/charts"
)

// testImages returns a Published for every binary of the repository, as a release to 127.0.0.1:5000/kof would.
func testImages(t *testing.T) map[string]Published {
	t.Helper()
	names, err := image.Commands(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Published{}
	for _, n := range names {
		out[n] = published("127.0.0.1:5000/kof", n, "1.2.3", testDigest)
	}
	return out
}

func readValues(t *testing.T, chart string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot, "charts", chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The mothership's kof-operator, kof-ui and kof-tenant-proxy blocks are pinned in place: four scalars each change,
// every other line stays.
func TestPinValuesMothership(t *testing.T) {
	before := readValues(t, "kof-mothership")
	after, pins, err := PinValues("kof-mothership", before, testImages(t), testRepo)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pin{{Path: "operator.image", Image: "kof-operator",
		Value: "127.0.0.1:5000/kof/kof-operator:1.2.3@" + testDigest}, {Path: "ui.image", Image: "kof-ui",
		Value: "127.0.0.1:5000/kof/kof-ui:1.2.3@" + testDigest}, {Path: "tenantProxy.image", Image: "kof-tenant-proxy",
		Value: "127.0.0.1:5000/kof/kof-tenant-proxy:1.2.3@" + testDigest}}
	if diff := cmp.Diff(want, pins); diff != "" {
		t.Errorf("pins (-want +got):\n%s", diff)
	}
	a, b := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	if len(a) != len(b) {
		t.Fatalf("pinning changed the line count from %d to %d", len(a), len(b))
	}
	var changed []string
	for i := range a {
		if a[i] != b[i] {
			changed = append(changed, strings.TrimSpace(b[i]))
		}
	}
	wantLines := []string{`registry: "127.0.0.1:5000"`, `repository: "kof/kof-operator"`, `tag: "1.2.3"`,
		`digest: "` + testDigest + `"`, `registry: "127.0.0.1:5000"`, `repository: "kof/kof-ui"`, `tag: "1.2.3"`,
		`digest: "` + testDigest + `"`, `registry: "127.0.0.1:5000"`, `repository: "kof/kof-tenant-proxy"`,
		`tag: "1.2.3"`, `digest: "` + testDigest + `"`}
	if diff := cmp.Diff(wantLines, changed); diff != "" {
		t.Errorf("changed lines (-want +got):\n%s", diff)
	}
}

// The pinned chart renders the kof-operator Deployment with the published reference, and global.registry replaces
// the registry of that reference (and of every other image) exactly once.
func TestPinnedMothershipRendersThePublishedImage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := PackageChart(filepath.Join(moduleRoot, "charts", "kof-mothership"), dir, "1.2.3", created(), testImages(t),
		testRepo)
	if err != nil {
		t.Fatal(err)
	}
	for registry, want := range map[string]string{
		"":                   "127.0.0.1:5000/kof/kof-operator:1.2.3@" + testDigest,
		"mirror.example.com": "mirror.example.com/kof/kof-operator:1.2.3@" + testDigest,
	} {
		chrt := loadArchive(t, c.Data)
		set, err := render.Chart(context.Background(), render.Options{Chart: chrt, ReleaseName: "kof-mothership",
			Namespace: "kof", Strict: true, Values: map[string]any{"global": map[string]any{"registry": registry}}})
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, r := range References(set.Objects()) {
			if ImageName(r.Ref) == "kof-operator" {
				found++
				if r.Ref != want {
					t.Errorf("global.registry=%q: %s %s = %q, want %q", registry, r.Object, r.Field, r.Ref, want)
				}
			} else if registry != "" && !strings.HasPrefix(r.Ref, registry+"/") {
				t.Errorf("global.registry=%q: %s %s = %q lacks the registry", registry, r.Object, r.Field, r.Ref)
			}
		}
		if found != 1 {
			t.Errorf("global.registry=%q: %d kof-operator references, want 1", registry, found)
		}
	}
}

func TestPinValuesUmbrellaRepository(t *testing.T) {
	after, pins, err := PinValues("kof", readValues(t, "kof"), testImages(t), testRepo)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Pin{{Path: UmbrellaRepoURLKey, Value: testRepo}}, pins); diff != "" {
		t.Errorf("pins (-want +got):\n%s", diff)
	}
	var v struct {
		Global struct {
			HelmRepo struct {
				KofManaged struct{ URL string } `yaml:"kofManaged"`
			} `yaml:"helmRepo"`
		}
	}
	if err := yaml.Unmarshal(after, &v); err != nil || v.Global.HelmRepo.KofManaged.URL != testRepo {
		t.Errorf("umbrella url %q (%v), want %q", v.Global.HelmRepo.KofManaged.URL, err, testRepo)
	}
}

// Every chart of the repository pins cleanly with the repository's binaries, and every binary is named by a chart:
// no chart names an image nothing builds, and no binary has no chart to run it.
func TestEveryChartNamesOnlyBuiltImages(t *testing.T) {
	dirs, err := ChartDirs(filepath.Join(moduleRoot, "charts"))
	if err != nil {
		t.Fatal(err)
	}
	imgs := testImages(t)
	named := map[string]bool{}
	for _, d := range dirs {
		name := filepath.Base(d)
		_, pins, err := PinValues(name, readValues(t, name), imgs, testRepo)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, p := range pins {
			named[p.Image] = true
		}
	}
	for n := range imgs {
		if !named[n] {
			t.Errorf("no chart names image %s (%s/%s): give the chart that runs it an image block %s: ghcr.io, "+
				"%s: k0rdent/kof/%s", n, Upstream, n, KeyRegistry, KeyRepository, n)
		}
	}
}

func TestPinValuesErrors(t *testing.T) {
	imgs := map[string]Published{"kof-operator": published("r.example.com", "kof-operator", "1.2.3", testDigest)}
	cases := map[string]struct{ values, want string }{
		"image nothing builds": {
			"a:\n  image:\n    registry: ghcr.io\n    repository: k0rdent/kof/kof-exporter\n    tag: \"\"\n    digest: \"\"\n",
			"x.values.a.image: image ghcr.io/k0rdent/kof/kof-exporter is not built by this repository"},
		"block without digest": {
			"a:\n  image:\n    registry: ghcr.io\n    repository: k0rdent/kof/kof-operator\n    tag: \"\"\n",
			"x.values.a.image.digest: missing"},
		"upstream outside a block": {
			"a:\n  image:\n    repository: ghcr.io/k0rdent/kof/kof-operator\n    tag: \"\"\n",
			"x.values.a.image.repository: \"ghcr.io/k0rdent/kof/kof-operator\" names KOF's upstream registry outside an image block"},
		"folded scalar": {
			"a:\n  image:\n    registry: ghcr.io\n    repository: >-\n      k0rdent/kof/kof-operator\n    tag: \"\"\n    digest: \"\"\n",
			"only single-line plain or quoted scalars can be pinned"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := PinValues("x", []byte(c.values), imgs, testRepo)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, _, err := PinValues("kof", []byte("global: {}\n"), imgs, testRepo); err == nil ||
		!strings.Contains(err.Error(), "kof.values.global.helmRepo.kofManaged.url: missing") {
		t.Errorf("umbrella without the repository URL: %v", err)
	}
}

// Quoted and commented scalars are replaced in place, comments kept.
func TestPinValuesScalarStyles(t *testing.T) {
	imgs := map[string]Published{"kof-operator": published("r.example.com/team", "kof-operator", "1.2.3", testDigest)}
	in := "img: # KOF\n  registry: 'ghcr.io'   # host\n  repository: \"k0rdent/kof/kof-operator\"\n  tag: ''\n" +
		"  digest: \"\" # set by the release\n  pullPolicy: Always\n"
	out, _, err := PinValues("x", []byte(in), imgs, testRepo)
	if err != nil {
		t.Fatal(err)
	}
	want := "img: # KOF\n  registry: \"r.example.com\"   # host\n  repository: \"team/kof-operator\"\n  tag: \"1.2.3\"\n" +
		"  digest: \"" + testDigest + "\" # set by the release\n  pullPolicy: Always\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("pinned text (-want +got):\n%s", diff)
	}
}

func TestSplitRegistry(t *testing.T) {
	for in, want := range map[string][2]string{
		"127.0.0.1:5000/kof":            {"127.0.0.1:5000", "kof"},
		"registry.example.com":          {"registry.example.com", ""},
		"registry.example.com/a/b/":     {"registry.example.com", "a/b"},
		"registry.example.com:443/team": {"registry.example.com:443", "team"},
	} {
		h, p, err := SplitRegistry(in)
		if err != nil || h != want[0] || p != want[1] {
			t.Errorf("SplitRegistry(%q) = %q, %q, %v; want %q, %q", in, h, p, err, want[0], want[1])
		}
	}
	for _, bad := range []string{"oci://r.example.com/kof", "r.example.com/kof:1.0", "r.example.com/Kof", ""} {
		if _, _, err := SplitRegistry(bad); err == nil {
			t.Errorf("SplitRegistry(%q) accepted", bad)
		}
	}
}

func TestParts(t *testing.T) {
	for in, want := range map[string][3]string{
		"127.0.0.1:5000/kof/kof-operator:1.2.3@sha256:ab": {"127.0.0.1:5000/kof/kof-operator", "1.2.3", "sha256:ab"},
		"127.0.0.1:5000/kof/kof-operator":                 {"127.0.0.1:5000/kof/kof-operator", "", ""},
		"quay.io/jacksontj/promxy:v0.0.93":                {"quay.io/jacksontj/promxy", "v0.0.93", ""},
	} {
		n, tag, d := Parts(in)
		if n != want[0] || tag != want[1] || d != want[2] {
			t.Errorf("Parts(%q) = %q %q %q, want %v", in, n, tag, d, want)
		}
	}
	if ImageName("r:5000/a/kof-operator:1@sha256:x") != "kof-operator" {
		t.Error("ImageName")
	}
}
