// Package testproc runs the programs of bin/ (built by `make tools`) as processes of a test: started on loopback,
// logged into the test's folder, waited for over HTTP, and stopped when the test ends (Start, Process). It also
// starts the real servers the exporter and storage tests write to, each with a temporary data folder (StartServer,
// Server): VictoriaMetrics single-node, VictoriaLogs single-node and MinIO, stopped by Stop (registered with
// t.Cleanup by the T helpers), a MinIO user holding exactly the IAM policy that a user guide gives an exporter,
// read from the guide itself (ExporterUser, through MinIO's admin API), a kube-apiserver that writes an audit log
// (AuditLog) and Ed25519 signing keys (SigningKey), and polls a condition until its deadline (Eventually). Every
// program started dies with the test process (proc.DieWithParent). It is test support only.
package testproc

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/internal/proc"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// binDir is the repository's bin/ seen from a package two levels below the module root (tests/<name>).
var binDir = filepath.Join("..", "..", "bin")

// readyWait bounds WaitHTTP.
const readyWait = 30 * time.Second

// Tool returns the absolute path of program name in bin/, failing the test with the fix (`make tools`) when it is
// missing.
func Tool(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(binDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make tools` (ci/tools/%s.sh builds it)", p, name)
	}
	return p
}

// FreeAddr returns a loopback address `127.0.0.1:<port>` reserved for this test process (proc.LoopbackAddr: outside
// the ephemeral range, exclusive between the processes of the machine), failing the test when none is found.
func FreeAddr(t *testing.T) string {
	t.Helper()
	addr, err := proc.LoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Process is a program started by a test; it is stopped by Stop or at the end of the test.
type Process struct {
	// Name names the process in messages; Log is the file holding its output.
	Name, Log string
	cmd       *exec.Cmd
	done      chan struct{}
}

// Start runs binary with args and env (nil: none but PATH) in its own process group, dying with the test binary
// (proc.DieWithParent), its output in
// `<name>.log` of the test's folder, and stops it when the test ends, logging the end of its output when the test
// failed. A start failure fails the test.
func Start(t *testing.T, name, binary string, env []string, args ...string) *Process {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &Process{Name: name, Log: log, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", name, p.Tail(40))
		}
	})
	return p
}

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop ends the process (SIGTERM, then SIGKILL of its group after 10 s) and waits for it; stopping an ended
// process does nothing.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Tail returns the last n lines of the process's output.
func (p *Process) Tail(n int) string {
	data, _ := os.ReadFile(p.Log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WaitHTTP polls url until it answers 200, failing the test with the end of p's output after 30 s or when p exits.
func (p *Process) WaitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(readyWait)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited at start:\n%s", p.Name, p.Tail(20))
		default:
		}
		if resp, err := http.Get(url); err == nil { //nolint:noctx // loopback readiness probe
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %s in %s:\n%s", p.Name, url, readyWait, p.Tail(20))
}

// AssetsDir returns the folder of etcd and kube-apiserver for a test: KUBEBUILDER_ASSETS, else BinDir (found from
// the working directory, the test's package folder: a test binary built with -trimpath holds no source path). An
// error of BinDir fails t.
func AssetsDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Envtest makes env start binDir's etcd and kube-apiserver so that they die with the test binary (proc.Envtest),
// with the wrappers in the test's folder; an error fails the test.
func Envtest(t *testing.T, env *envtest.Environment, binDir string) {
	t.Helper()
	if err := proc.Envtest(env, binDir, filepath.Join(t.TempDir(), "control-plane-bin")); err != nil {
		t.Fatal(err)
	}
}
