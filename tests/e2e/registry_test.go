package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"kof.dev/kof/internal/testproc"
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

// startRegistry starts bin/registry (ci/tools/registry.sh) on a free loopback port (testproc.Start) and returns
// its `host:port` once it answers `/v2/`; the registry is stopped when the test ends.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(shared.session.Root, "bin", "registry")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("registry: %v; build it with `make tools`", err)
	}
	addr := testproc.FreeAddr(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, registryConfig, filepath.Join(dir, "storage"), addr), 0o644); err != nil {
		t.Fatal(err)
	}
	// The registry exports traces through OpenTelemetry's environment; nothing listens for them here.
	p := testproc.Start(t, "registry", bin, []string{"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none"},
		"serve", cfg)
	p.WaitHTTP(t, "http://"+addr+"/v2/")
	return addr
}
