package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"kof.dev/kof/internal/proc"
)

// registryConfig is the configuration of the CNCF distribution registry the release test pushes to: filesystem
// storage in a test folder, plain HTTP on one loopback port, no access log.
const registryConfig = `version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
`

// startRegistry starts bin/registry (ci/tools/registry.sh) on a free loopback port and returns its `host:port`;
// the registry is stopped when the test ends.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(shared.session.Root, "bin", "registry")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("registry: %v; build it with `make tools`", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, registryConfig, filepath.Join(dir, "storage"), addr), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	// The registry exports traces through OpenTelemetry's environment; nothing listens for them here.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none")
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start registry: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v2/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("registry on %s did not answer /v2/ within 30s: %v\n%s", addr, err, b)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
