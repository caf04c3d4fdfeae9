package testproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/internal/proc"
)

// serverReadyWait bounds the wait for a server to answer its health check.
const serverReadyWait = 60 * time.Second

// Spec says how to run one server.
type Spec struct {
	// Tool is the binary name under bin/ (victoria-metrics, victoria-logs, minio).
	Tool string
	// Args returns the command line for a listen address and data folder.
	Args func(addr, dir string) []string
	// Env is added to the environment.
	Env []string
	// Health is the path answering 200 once the server is ready.
	Health string
	// Setup, when set, runs before each start with the listen address and data folder, e.g. to write a
	// configuration file that names the address (a server without a listen-address flag); its error ends the start.
	Setup func(addr, dir string) error
}

// Server is one running server.
type Server struct {
	// URL is `http://127.0.0.1:<port>`.
	URL string
	// Addr is `127.0.0.1:<port>`.
	Addr string
	// Dir is the data folder (kept across Restart).
	Dir string

	spec Spec
	bin  string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// BinDir returns the folder holding the tools: $KOF_BIN, else bin/ beside the go.mod found upwards from the
// working directory.
func BinDir() (string, error) {
	if d := os.Getenv("KOF_BIN"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin"), nil
}

// RepoRoot returns the repository root: the folder holding the go.mod found upwards from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("get working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// StartServer starts spec with data in dir (created when missing) on a free loopback port and waits until it is ready.
// Errors name the binary and the fix (`make tools`), or quote the end of the server's log.
func StartServer(spec Spec, dir string) (*Server, error) {
	bins, err := BinDir()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(bins, spec.Tool)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w; build it with `make tools` (ci/tools/%s.sh)", bin, err, spec.Tool)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dir, err)
	}
	addr, err := proc.LoopbackAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + addr, Addr: addr, Dir: dir, spec: spec, bin: bin, log: filepath.Join(dir, spec.Tool+".log")}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	if s.spec.Setup != nil {
		if err := s.spec.Setup(s.Addr, s.Dir); err != nil {
			return fmt.Errorf("set up %s: %w", s.spec.Tool, err)
		}
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("server log %s: %w", s.log, err)
	}
	cmd := exec.Command(s.bin, s.spec.Args(s.Addr, s.Dir)...)
	cmd.Env = append(os.Environ(), s.spec.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); _ = logf.Close(); close(s.done) }()
	deadline := time.Now().Add(serverReadyWait)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("%s exited before it was ready: %s", s.spec.Tool, s.tail())
		default:
		}
		resp, err := http.Get(s.URL + s.spec.Health) //nolint:noctx // loopback health probe
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return fmt.Errorf("%s not ready at %s after %s: %s", s.spec.Tool, s.URL, serverReadyWait, s.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail returns the last lines of the server's log.
func (s *Server) tail() string {
	data, _ := os.ReadFile(s.log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, " | ")
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. Stopping a stopped server is
// no error.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.done:
		s.cmd = nil
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
	return nil
}

// Kill stops the server at once (SIGKILL), as a crash or a network cut would.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the stopped server again on the same address and data folder.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return fmt.Errorf("%s at %s is still running", s.spec.Tool, s.URL)
	}
	return s.start()
}

// PID returns the process ID of the running server, 0 when it is stopped (for benchmarks reading /proc).
func (s *Server) PID() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// RSS returns the resident memory of the server process in bytes (from /proc), for benchmarks.
func (s *Server) RSS() (int64, error) {
	if s.cmd == nil {
		return 0, fmt.Errorf("%s is not running", s.spec.Tool)
	}
	return ProcessRSS(s.cmd.Process.Pid)
}

// ProcessRSS returns the resident memory of process pid in bytes, read from /proc/<pid>/status (VmRSS).
func ProcessRSS(pid int) (int64, error) {
	return procStatusKB(pid, "VmRSS:")
}

// ProcessPeakRSS returns the peak resident memory of process pid in bytes (VmHWM of /proc/<pid>/status).
func ProcessPeakRSS(pid int) (int64, error) {
	return procStatusKB(pid, "VmHWM:")
}

func procStatusKB(pid int, key string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, fmt.Errorf("read process status: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, key) {
			f := strings.Fields(line)
			if len(f) < 2 {
				break
			}
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s %q: %w", key, line, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}

// startServerT starts spec in a temporary folder of t and stops it when t ends; it fails t on error.
func startServerT(t testing.TB, spec Spec) *Server {
	t.Helper()
	s, err := StartServer(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// ShippedProgram builds the in-cluster program name (`./cmd/<name>`) exactly as its image holds it
// (proc.BuildShipped, as release/image builds, for this machine's platform: static, cgo off, stripped) into dir, or a temporary folder of t when dir is "", and
// returns the binary's path: for benchmarks, whose start-up, memory and CPU must be those of the program users run
// (a cgo build loads the C library and starts with about 2 MiB more memory). It fails t when the module root is not
// found or the build fails.
func ShippedProgram(t testing.TB, name, dir string) string {
	t.Helper()
	root, dir := programDirs(t, dir)
	bin := filepath.Join(dir, name)
	if err := proc.BuildShipped(context.Background(), root, "./cmd/"+name, runtime.GOOS, runtime.GOARCH, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// programDirs returns the module root and the folder a program is built into: dir, or a temporary folder of t when
// dir is "". It fails t when the module root is not found.
func programDirs(t testing.TB, dir string) (string, string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	return root, dir
}

// Program builds the main package pkg of KOF's module (a path relative to the module root, such as
// "./cmd/cold-storage-exporter") into dir, or a temporary folder of t when dir is "", with proc.BuildProgram
// (linked once per machine and change) and returns the binary's path. It fails t when the module root is not found
// or the build fails.
func Program(t testing.TB, pkg, dir string) string {
	t.Helper()
	root, dir := programDirs(t, dir)
	bin, err := proc.BuildProgram(context.Background(), root, pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
