package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// A control plane that does not start says why: Envtest keeps kube-apiserver's output in its folder and
// EnvtestLogs returns it (regression: envtest dropped the output, so a failed start on a busy machine named no cause).
func TestEnvtestKeepsTheOutputOfAFailedStart(t *testing.T) {
	etcd, err := filepath.Abs(filepath.Join("..", "..", "bin", "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(etcd); err != nil {
		t.Fatalf("%v: run `make tools` (ci/tools/etcd.sh builds it)", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(etcd, filepath.Join(bin, "etcd")); err != nil {
		t.Fatal(err)
	}
	// envtest runs `kube-apiserver -h` first to read its flags; the start itself then fails.
	fake := "#!/bin/sh\ncase \"$1\" in -h|--help) exit 0;; esac\necho 'kube-apiserver: planted start failure' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "kube-apiserver"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := &envtest.Environment{}
	if err := Envtest(env, bin, dir); err != nil {
		t.Fatal(err)
	}
	// Environment.Start overwrites each program's StartTimeout with this one (regression: a 2-minute timeout set
	// on the programs was replaced by envtest's 20 s, and busy machines failed to start kube-apiserver).
	if env.ControlPlaneStartTimeout != StartTimeout {
		t.Errorf("ControlPlaneStartTimeout = %s, want %s", env.ControlPlaneStartTimeout, StartTimeout)
	}
	_, err = env.Start()
	if err == nil {
		_ = env.Stop()
		t.Fatal("the control plane started with a kube-apiserver that exits at once")
	}
	_ = env.Stop()
	logs := EnvtestLogs(dir, 5)
	if !strings.Contains(logs, "last lines of kube-apiserver") || !strings.Contains(logs, "planted start failure") {
		t.Errorf("EnvtestLogs = %q, want the kube-apiserver's own message", logs)
	}
}

// A failed run keeps its scratch folder, a passed one removes it (regression: the fidelity test printed "kept <dir>"
// for the logs of a failure while the scratch cleanup removed that folder on exit).
func TestUseScratchKeepsTheFolderOfAFailedRun(t *testing.T) {
	parent := t.TempDir()
	t.Setenv("TMPDIR", parent)
	failed, end, err := UseScratch("failed")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("TMPDIR") != failed {
		t.Fatalf("TMPDIR = %q during the run, want the scratch folder %q", os.Getenv("TMPDIR"), failed)
	}
	log := filepath.Join(failed, "controller.log")
	if err := os.WriteFile(log, []byte("why it failed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	end(1)
	if got := os.Getenv("TMPDIR"); got != parent {
		t.Errorf("TMPDIR = %q after the run, want %q restored", got, parent)
	}
	if _, err := os.Stat(log); err != nil {
		t.Errorf("the failed run's log is gone: %v", err)
	}
	passed, end, err := UseScratch("passed")
	if err != nil {
		t.Fatal(err)
	}
	end(0)
	if _, err := os.Stat(passed); !os.IsNotExist(err) {
		t.Errorf("the passed run's scratch folder %s is still there (%v)", passed, err)
	}
}

// CPUTime reads utime and stime of a stat line whose command name holds spaces and a parenthesis, counts this
// process's own CPU (a busy loop of at least 300 ms of CPU raises it by at least 250 ms), and names a missing
// process or a short line in its error.
func TestCPUTime(t *testing.T) {
	line := "4242 (kube apiserver) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 8 0 100 0 0\n"
	if d, err := statCPU(line); err != nil || d != 12900*time.Millisecond {
		t.Errorf("statCPU(%q) = %v, %v; want 12.9s (1234 + 56 ticks of 10 ms)", line, d, err)
	}
	if _, err := statCPU("4242 (short) S 1 2 3"); err == nil || !strings.Contains(err.Error(), "want at least 13") {
		t.Errorf("statCPU of a short line: error %v, want one naming the field count", err)
	}
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 1.0
	for start := time.Now(); time.Since(start) < 30*time.Second; {
		for i := 0; i < 1e5; i++ {
			x = x*1.0000001 + 1e-9
		}
		if d, _ := CPUTime(os.Getpid()); d-before >= 300*time.Millisecond {
			break
		}
	}
	after, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := after - before; got < 250*time.Millisecond {
		t.Errorf("CPU time rose by %v over a busy loop of at least 300 ms of CPU (x=%v); want at least 250 ms", got, x)
	}
	if _, err := CPUTime(1 << 30); err == nil {
		t.Error("CPUTime of a process that does not exist: no error")
	}
}
