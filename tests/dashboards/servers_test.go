package dashboards

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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

// process is a program started by the test, stopped at its end.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// start runs binary with args, logging into the test's folder; the process is ended (SIGTERM, then SIGKILL of its
// group after 10 s) when the test ends.
func start(t *testing.T, name, binary string, args ...string) *process {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			data, _ := os.ReadFile(log)
			if len(data) > 3000 {
				data = data[len(data)-3000:]
			}
			t.Logf("%s log (end):\n%s", name, data)
		}
	})
	return p
}

// waitHTTP polls url until it answers 200, failing the test after 30 s or when p exits.
func waitHTTP(t *testing.T, p *process, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%s exited at start", p.name)
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer %s in 30 s", p.name, url)
}

// request sends method to url with body and returns the status code and body.
func request(ctx context.Context, method, url, contentType string, body []byte, user, password string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// result is one series of an instant query result.
type result struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

// query runs an instant query through the Prometheus API of VictoriaMetrics at addr. Errors: transport, a non-200
// answer or status "error" (with VictoriaMetrics' message).
func query(ctx context.Context, addr, q string) ([]result, error) {
	code, body, err := request(ctx, http.MethodGet, "http://"+addr+"/api/v1/query?"+url.Values{"query": {q}}.Encode(), "", nil, "", "")
	if err != nil {
		return nil, err
	}
	var resp struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || code != http.StatusOK || resp.Status != "success" {
		return nil, fmt.Errorf("code %d, status %q, error %q %v", code, resp.Status, resp.Error, err)
	}
	if resp.Data.ResultType == "scalar" {
		return []result{{}}, nil
	}
	var out []result
	if err := json.Unmarshal(resp.Data.Result, &out); err != nil {
		return nil, fmt.Errorf("decode %s result: %w", resp.Data.ResultType, err)
	}
	return out, nil
}

// eventually calls cond every 500 ms until it holds, failing the test with its last message after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	last := ""
	for {
		ok, msg := cond(ctx)
		if ok {
			return
		}
		last = msg
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s: %s", what, timeout, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// hostPort splits a loopback address.
func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// join is strings.Join for lines.
func join(lines []string) string { return strings.Join(lines, "\n") }
