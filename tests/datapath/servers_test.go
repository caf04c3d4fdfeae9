package datapath

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binDir is the repository's bin/ (tools built by `make tools`).
var binDir = filepath.Join("..", "..", "bin")

// tool returns the path of a program in bin/, failing the test with the fix when it is missing.
func tool(t *testing.T, name string) string {
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

// freeAddr returns a free loopback address `127.0.0.1:<port>`.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// process is a program started by a test; it is stopped by Stop or at the end of the test.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs binary with args and env (nil: none but PATH), logging into the test's folder, and stops it at the end
// of the test.
func start(t *testing.T, name, binary string, env []string, args ...string) *process {
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
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", name, p.tail(40))
		}
	})
	return p
}

// Stop ends the process (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (p *process) Stop() {
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

// tail returns the last n lines of the process log.
func (p *process) tail(n int) string {
	data, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitHealthy polls http://addr/health until it answers 200, failing the test after 30 s or when p exits.
func waitHealthy(t *testing.T, p *process, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited at start:\n%s", p.name, p.tail(20))
		default:
		}
		if resp, err := http.Get("http://" + addr + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not become healthy at %s in 30 s:\n%s", p.name, addr, p.tail(20))
}

// storage is the regional storage of one test: VictoriaMetrics, VictoriaLogs for logs and for audit logs.
type storage struct {
	metrics, logs, audit string // loopback addresses
}

// startStorage starts single-node VictoriaMetrics and two VictoriaLogs on loopback, with data in the test's folder.
func startStorage(t *testing.T) storage {
	t.Helper()
	s := storage{metrics: freeAddr(t), logs: freeAddr(t), audit: freeAddr(t)}
	vm := start(t, "victoria-metrics", tool(t, "victoria-metrics"), nil, "-httpListenAddr="+s.metrics,
		"-storageDataPath="+filepath.Join(t.TempDir(), "vm"), "-retentionPeriod=1d", "-search.latencyOffset=0s")
	vl := start(t, "victoria-logs", tool(t, "victoria-logs"), nil, "-httpListenAddr="+s.logs,
		"-storageDataPath="+filepath.Join(t.TempDir(), "vl"))
	vla := start(t, "victoria-logs-audit", tool(t, "victoria-logs"), nil, "-httpListenAddr="+s.audit,
		"-storageDataPath="+filepath.Join(t.TempDir(), "vla"))
	waitHealthy(t, vm, s.metrics)
	waitHealthy(t, vl, s.logs)
	waitHealthy(t, vla, s.audit)
	return s
}

// vmauthServer is a running vmauth that can be stopped and started again on the same address.
type vmauthServer struct {
	t      *testing.T
	addr   string
	config string
	proxy  string
	p      *process
}

// startVMAuth writes config and runs vmauth on a free loopback address, reaching its backends through proxy.
func startVMAuth(t *testing.T, config []byte, proxy string) *vmauthServer {
	t.Helper()
	file := filepath.Join(t.TempDir(), "auth.yaml")
	if err := os.WriteFile(file, config, 0o600); err != nil {
		t.Fatal(err)
	}
	v := &vmauthServer{t: t, addr: freeAddr(t), config: file, proxy: proxy}
	v.Start()
	return v
}

// Start runs vmauth (again) and waits until it is healthy.
func (v *vmauthServer) Start() {
	v.t.Helper()
	v.p = start(v.t, "vmauth", tool(v.t, "vmauth"), []string{"HTTP_PROXY=" + v.proxy},
		"-httpListenAddr="+v.addr, "-auth.config="+v.config)
	waitHealthy(v.t, v.p, v.addr)
}

// Stop ends vmauth.
func (v *vmauthServer) Stop() { v.p.Stop() }

// get fetches url and returns the body, failing on a transport error.
func get(ctx context.Context, url string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("read %s: %w", url, err)
	}
	return b.Bytes(), resp.StatusCode, nil
}
