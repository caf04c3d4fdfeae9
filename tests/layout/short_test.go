package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shortCall is a call of testing.Short.
var shortCall = regexp.MustCompile(`\btesting\.Short\(\)`)

// shortProblems returns the problem of a Go file (its path and contents) that calls testing.Short() outside a
// bench_test.go file: `make test` (ci/test.sh) runs the packages that have benchmarks with -short, tests and
// benchmarks in one binary, so that the benchmarks run once at their smallest size; a test that checked -short
// would skip its work in every run of `make test`.
func shortProblems(path, src string) []string {
	if filepath.Base(path) == "bench_test.go" || !shortCall.MatchString(src) {
		return nil
	}
	return []string{path + ": calls testing.Short(), which `make test` sets for the benchmarks' small sizes; " +
		"call it only in a bench_test.go file (a test that checks it would skip its work in CI)"}
}

// testing.Short() selects the benchmarks' small sizes only: every call is in a bench_test.go file.
func TestShortOnlyInBenchmarkFiles(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", "*.go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	checked := 0
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || f == "tests/layout/short_test.go" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, p := range shortProblems(f, string(data)) {
			t.Error(p)
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files; want the whole repository", checked)
	}
}

// The check finds a planted call in a test file and accepts one in a bench_test.go file.
func TestShortProblemsFindsPlantedViolation(t *testing.T) {
	src := "func TestX(t *testing.T) {\n\tif testing.Short() {\n\t\tt.Skip()\n\t}\n}\n"
	if got := shortProblems("chartlib/x/x_test.go", src); len(got) != 1 {
		t.Errorf("planted call in x_test.go: got %q, want one problem", got)
	}
	if got := shortProblems("chartlib/x/bench_test.go", src); len(got) != 0 {
		t.Errorf("call in bench_test.go: got %q, want none", got)
	}
	if got := shortProblems("chartlib/x/x_test.go", "func TestX(t *testing.T) {}\n"); len(got) != 0 {
		t.Errorf("file without the call: got %q, want none", got)
	}
}
