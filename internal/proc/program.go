package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// EnvTestCache names the variable that moves the test cache of the machine (ci/test.sh keeps its test binaries
// there too); the default is `kof-tests` in the user's cache folder.
const EnvTestCache = "KOF_TEST_CACHE"

// TestCacheDir returns the test cache folder of the machine: $KOF_TEST_CACHE, else `kof-tests` of MachineDir (which
// does not follow TMPDIR, which the test processes point into scratch folders of their own).
func TestCacheDir() string {
	if dir := os.Getenv(EnvTestCache); dir != "" {
		return dir
	}
	return filepath.Join(MachineDir(), "kof-tests")
}

// ProgramFlags are the `go build` flags of BuildProgram: -trimpath, as ci/test.sh builds the test binaries, so the
// programs share their compiled packages and no build ID holds the checkout's path; -ldflags=-w, no DWARF (panics and
// profiles use the symbol table, which stays; the link of tools/kof takes about 40% less CPU).
var ProgramFlags = []string{"-trimpath", "-ldflags=-w"}

// ShippedFlags are the `go build` flags of every binary KOF ships (release/image builds its images with them):
// -trimpath, no VCS stamping, stripped symbols and an empty build ID, so the same source and toolchain give the
// same bytes.
var ShippedFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}

// ShippedEnv returns the environment of a shipped binary's build for goos and goarch: the process environment with
// cgo off (a static binary), the baseline microarchitecture of each architecture, and no GOFLAGS, workspace or
// toolchain switch from the environment.
func ShippedEnv(goos, goarch string) []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=", "GOWORK=off",
		"GOAMD64=v1", "GOARM64=v8.0", "GOTOOLCHAIN=local")
}

// BuildShipped builds the main package pkg of the Go module at root (relative to root, such as
// "./cmd/cold-storage-exporter") into the file out as KOF ships it for goos and goarch (ShippedFlags, ShippedEnv).
// The error carries go build's output.
func BuildShipped(ctx context.Context, root, pkg, goos, goarch, out string) error {
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, ShippedFlags...), "-o", out, pkg)...)
	cmd.Dir = root
	cmd.Env = ShippedEnv(goos, goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %w\n%s", pkg, goos, goarch, err, b)
	}
	return nil
}

// BuildProgram builds the main package pkg of the Go module at root (a path relative to root, such as "./tools/kof")
// into dir and returns the binary's path there (dir/<last element of pkg>). The binary is built with `go build
// ProgramFlags` into `programs/` of TestCacheDir, one file per package, and hard-linked into dir (copied when dir is
// on another file system): `go build -o` relinks a binary only when its build ID no longer matches the package's
// inputs, so a program is linked once per machine and change instead of once per test process (linking tools/kof
// took about 14 s of CPU each time). An flock(2) lock per package serialises the build and the link into dir, so
// no process sees a binary half-written, and a later build, which replaces the cached file, cannot change the one
// in dir. Errors: a pkg that is not relative to root, a failed build (with go build's output), or file errors.
func BuildProgram(ctx context.Context, root, pkg, dir string) (string, error) {
	rel, ok := strings.CutPrefix(pkg, "./")
	if !ok || rel == "" || path.Clean(rel) != rel || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("build program %q: want a package path relative to the module root, such as ./tools/kof", pkg)
	}
	cache := filepath.Join(TestCacheDir(), "programs")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("create the program cache: %w", err)
	}
	name := strings.ReplaceAll(rel, "/", "_")
	lock, err := os.OpenFile(filepath.Join(cache, name+".lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return "", fmt.Errorf("open the program cache lock: %w", err)
	}
	defer lock.Close()
	if err := flock(lock, syscall.LOCK_EX); err != nil {
		return "", err
	}
	cached := filepath.Join(cache, name)
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, ProgramFlags...), "-o", cached, pkg)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	bin := filepath.Join(dir, path.Base(rel))
	if err := os.Remove(bin); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("replace %s: %w", bin, err)
	}
	if err := os.Link(cached, bin); err == nil {
		return bin, nil
	}
	if err := copyFile(cached, bin, 0o755); err != nil {
		return "", fmt.Errorf("copy %s to %s: %w", cached, bin, err)
	}
	return bin, nil
}

// copyFile copies src to dst, a new file with permission bits perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}
