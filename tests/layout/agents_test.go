package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// root is the repository root, seen from this package.
const root = "../.."

// TestAgentsHasEveryFolder fails for every folder with files (tracked, or new and not ignored by git) that no row
// of docs/AGENTS.md covers, for every row that covers no folder, and for a path two rows name.
func TestAgentsHasEveryFolder(t *testing.T) {
	md, err := os.ReadFile(filepath.Join(root, AgentsFile))
	if err != nil {
		t.Fatalf("read %s: %v", AgentsFile, err)
	}
	patterns, err := parseRows(string(md))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in the repository root (this check needs git and a checkout): %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	dirs := folders(files)
	if len(dirs) < 10 {
		t.Fatalf("git lists only %d folders (%v); want the whole repository", len(dirs), dirs)
	}
	for _, p := range append(problems(dirs, patterns), duplicates(patterns)...) {
		t.Error(p)
	}
}

// A path two rows name is reported once, naming it.
func TestDuplicateRows(t *testing.T) {
	got := duplicates([]pattern{newPattern("a"), newPattern("tests/e2e"), newPattern("tests/e2e"), newPattern("a/"),
		newPattern("tests/e2e")})
	if len(got) != 1 || !strings.Contains(got[0], "`tests/e2e` more than once") {
		t.Errorf("duplicates = %q, want one naming tests/e2e", got)
	}
}

func TestParseRows(t *testing.T) {
	md := "# Map\n\n| Folder | Holds |\n|---|---|\n| `a/` | x |\n| `b`, `c/*` | y |\n\ntext\n\n| H | I |\n| --- | --- |\n| `d` | z |\n"
	got, err := parseRows(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []pattern{{raw: "a/", dir: "a", mode: tree}, {raw: "b", dir: "b", mode: exact},
		{raw: "c/*", dir: "c", mode: below}, {raw: "d", dir: "d", mode: exact}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(pattern{})); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if _, err := parseRows("| F | H |\n|---|---|\n| plain | x |\n"); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("row without a path: error %v, want one naming line 3", err)
	}
}

func TestCovers(t *testing.T) {
	for _, tt := range []struct {
		pattern, dir string
		want         bool
	}{
		{"charts/kof/", "charts/kof", true},
		{"charts/kof/", "charts/kof/templates", true},
		{"charts/kof/", "charts/kof-child", false},
		{"operator/internal/controller/*", "operator/internal/controller/regional", true},
		{"operator/internal/controller/*", "operator/internal/controller", false},
		{"chartlib/render", "chartlib/render", true},
		{"chartlib/render", "chartlib/render/live", false},
	} {
		if got := newPattern(tt.pattern).covers(tt.dir); got != tt.want {
			t.Errorf("%s covers %s = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
}

func TestFoldersAndProblems(t *testing.T) {
	dirs := folders([]string{"README.md", "a/x.go", "a/testdata/g/y.yaml", "b/c/z.go", "testdata/q", "b/c/w.go"})
	if diff := cmp.Diff([]string{"a", "b/c"}, dirs); diff != "" {
		t.Errorf("folders (-want +got):\n%s", diff)
	}
	got := problems(dirs, []pattern{newPattern("a"), newPattern("gone/")})
	if len(got) != 2 || !strings.Contains(got[0], "folder b/c has no row in docs/AGENTS.md: add the row \"| `b/c` |") ||
		!strings.Contains(got[1], "row `gone/` matches no folder") {
		t.Errorf("problems = %q", got)
	}
	if got := problems(dirs, []pattern{newPattern("a"), newPattern("b/")}); len(got) != 0 {
		t.Errorf("complete map: problems %q", got)
	}
}
