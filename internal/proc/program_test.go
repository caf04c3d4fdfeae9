package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildProgram links a program once per machine and change: a second build of the same source reuses the cached
// binary (same file), a changed source is linked again, a binary handed out before keeps running the old program,
// and a package path that is not relative to the module root is refused.
func TestBuildProgramLinksOncePerChange(t *testing.T) {
	t.Setenv(EnvTestCache, t.TempDir())
	root := t.TempDir()
	write := func(msg string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, "cmd", "hello"), 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"go.mod":            "module example.com/hello\n\ngo 1.22\n",
			"cmd/hello/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Print(\"" + msg + "\") }\n",
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(bin string) string {
		t.Helper()
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return string(out)
	}
	stat := func(p string) os.FileInfo {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	ctx := context.Background()
	write("one")
	first, err := BuildProgram(ctx, root, "./cmd/hello", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(first) != "hello" || run(first) != "one" {
		t.Fatalf("first build: %s prints %q, want hello printing one", first, run(first))
	}
	cached := filepath.Join(TestCacheDir(), "programs", "cmd_hello")
	second, err := BuildProgram(ctx, root, "./cmd/hello", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(stat(first), stat(second)) || !os.SameFile(stat(second), stat(cached)) {
		t.Fatalf("second build of the same source: %s is not the cached binary %s of the first build", second, cached)
	}
	write("two")
	third, err := BuildProgram(ctx, root, "./cmd/hello", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if run(third) != "two" || os.SameFile(stat(third), stat(first)) {
		t.Fatalf("build of a changed source: %s prints %q, want two from a new binary", third, run(third))
	}
	if run(first) != "one" {
		t.Fatalf("a binary handed out before the change prints %q, want one", run(first))
	}
	for _, bad := range []string{"cmd/hello", "../hello", "./", "example.com/hello/cmd/hello"} {
		if _, err := BuildProgram(ctx, root, bad, t.TempDir()); err == nil || !strings.Contains(err.Error(), "relative to the module root") {
			t.Errorf("BuildProgram(%q): %v, want an error asking for a path relative to the module root", bad, err)
		}
	}
}
