package layout

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/modfile"
)

// TestKubernetesStagingReplaces fails when go.mod's replace lines for the Kubernetes staging modules differ from
// what k8s.io/kubernetes needs: its own go.mod replaces every staging module (k8s.io/api, k8s.io/apiserver...) with
// a local path (./staging/src/...), which a module that requires it cannot use, so KOF's go.mod must point each of
// them at the published v0.<minor>.<patch> of the k8s.io/kubernetes version it requires (the kube-apiserver,
// kubectl and node programs of ci/tools are built from KOF's module). A staging module missing, an extra one, or one
// at another version is a difference.
func TestKubernetesStagingReplaces(t *testing.T) {
	mf := readGoMod(t)
	var kube string
	for _, r := range mf.Require {
		if r.Mod.Path == "k8s.io/kubernetes" {
			kube = r.Mod.Version
		}
	}
	if kube == "" {
		t.Fatal("go.mod does not require k8s.io/kubernetes (the Kubernetes commands of ci/tools are built from it)")
	}
	staging := "v0." + strings.TrimPrefix(kube, "v1.")

	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+kube)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download k8s.io/kubernetes@%s: %v", kube, err)
	}
	var dl struct{ GoMod string }
	if err := json.Unmarshal(out, &dl); err != nil || dl.GoMod == "" {
		t.Fatalf("go mod download -json k8s.io/kubernetes@%s gave no go.mod path (%v): %s", kube, err, out)
	}
	data, err := os.ReadFile(dl.GoMod)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := modfile.Parse(dl.GoMod, data, nil)
	if err != nil {
		t.Fatalf("parse k8s.io/kubernetes@%s go.mod: %v", kube, err)
	}
	want := map[string]string{}
	for _, r := range upstream.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			want[r.Old.Path] = r.Old.Path + " " + staging
		}
	}
	if len(want) == 0 {
		t.Fatalf("k8s.io/kubernetes@%s go.mod replaces no staging module with a local path; this check needs updating", kube)
	}
	got := map[string]string{}
	for _, r := range mf.Replace {
		if strings.HasPrefix(r.Old.Path, "k8s.io/") {
			got[r.Old.Path] = r.New.Path + " " + r.New.Version
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("go.mod replace lines for k8s.io modules (-what k8s.io/kubernetes %s needs +go.mod):\n%s", kube, d)
	}
}

// TestKOFModuleToolsAreToolLines fails when a tool of ci/tools/ built from KOF's own module (GROUP=kof-module) names
// a command package PKG that go.mod lacks as a tool line (the build would fail on a fresh machine with "not a
// main package in the module graph"), and when a tool line of go.mod no ci/tools/ script builds.
func TestKOFModuleToolsAreToolLines(t *testing.T) {
	mf := readGoMod(t)
	var tools []string
	for _, tl := range mf.Tool {
		tools = append(tools, tl.Path)
	}
	sort.Strings(tools)

	scripts, err := filepath.Glob(filepath.Join(root, "ci", "tools", "*.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pkgLine := regexp.MustCompile(`(?m)^PKG=(\S+)$`)
	var built []string
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^GROUP=kof-module$`).Match(b) {
			continue
		}
		m := pkgLine.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: GROUP=kof-module without a PKG= line", filepath.Base(s))
			continue
		}
		built = append(built, string(m[1]))
	}
	sort.Strings(built)
	if d := cmp.Diff(tools, built); d != "" {
		t.Errorf("go.mod tool lines (-) and command packages ci/tools/ builds from KOF's module (+) differ:\n%s", d)
	}
}

// readGoMod parses the repository's go.mod.
func readGoMod(t *testing.T) *modfile.File {
	t.Helper()
	p := filepath.Join(root, "go.mod")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse(p, data, nil)
	if err != nil {
		t.Fatalf("parse go.mod: %v", err)
	}
	return mf
}
