package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kof.dev/kof/internal/testproc"
	"kof.dev/kof/release"
)

// registryConfig is the configuration of the CNCF distribution registry the release and upgrade tests push to:
// filesystem storage in the registry's data folder, plain HTTP on one loopback port, no access log.
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

// registrySpec runs bin/registry (ci/tools/registry.sh) with registryConfig written into its data folder; it
// exports traces through OpenTelemetry's environment, and nothing listens for them here.
func registrySpec() testproc.Spec {
	return testproc.Spec{Tool: "registry", Health: "/v2/",
		Env: []string{"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none"},
		Setup: func(addr, dir string) error {
			return os.WriteFile(filepath.Join(dir, "config.yml"),
				fmt.Appendf(nil, registryConfig, filepath.Join(dir, "storage"), addr), 0o644)
		},
		Args: func(_, dir string) []string { return []string{"serve", filepath.Join(dir, "config.yml")} },
	}
}

// releases holds what the release and upgrade tests share: one registry and release N (this tree, published
// there once by `make release`), made by the first test that needs them and kept until TestMain stops the
// registry. Sharing spares the upgrade test a second `make release` of this tree.
var releases struct {
	registryOnce sync.Once
	registry     *testproc.Server
	registryErr  error

	currentOnce sync.Once
	current     *release.Manifest
	currentOut  string
	currentErr  error
}

// stopReleases stops the shared registry, if a test started it.
func stopReleases() error {
	if releases.registry == nil {
		return nil
	}
	return releases.registry.Stop()
}

// releaseRegistry returns the shared registry's repository prefix `host:port/kof`, starting the registry on a
// free loopback port at the first call; a start failure fails t.
func releaseRegistry(t *testing.T) string {
	t.Helper()
	releases.registryOnce.Do(func() {
		releases.registry, releases.registryErr = testproc.StartServer(registrySpec(),
			filepath.Join(shared.session.WorkDir, "registry"))
	})
	if releases.registryErr != nil {
		t.Fatalf("registry: %v", releases.registryErr)
	}
	return releases.registry.Addr + "/kof"
}

// currentRelease returns release N: this tree published by `make release` (every platform) as e2eVersion to the
// shared registry at the first call, and the folder `make release` wrote (manifest, SBOMs). A failure of that one
// `make release` fails every test that asks for it.
func currentRelease(t *testing.T) (*release.Manifest, string) {
	t.Helper()
	registry := releaseRegistry(t)
	releases.currentOnce.Do(func() {
		out := filepath.Join(shared.session.WorkDir, "release-"+e2eVersion)
		start := time.Now()
		if err := makeRelease(shared.session.Root, registry, e2eVersion, out, ""); err != nil {
			releases.currentErr = err
			return
		}
		t.Logf("make release %s (shared with the other release tests): %.1fs", e2eVersion, time.Since(start).Seconds())
		releases.current, releases.currentErr = release.ReadManifest(filepath.Join(out, release.ManifestFile))
		releases.currentOut = out
	})
	if releases.currentErr != nil {
		t.Fatal(releases.currentErr)
	}
	return releases.current, releases.currentOut
}

// makeRelease runs `make release` in root (this tree or a worktree of an earlier commit) to registry with
// version, writing to out, for platforms ("" = the Makefile's default, every platform), with env (`NAME=value`)
// added to this process's environment. The error quotes make's output.
func makeRelease(root, registry, version, out, platforms string, env ...string) error {
	args := []string{"--no-print-directory", "release", "REGISTRY=" + registry, "VERSION=" + version,
		"PLAIN_HTTP=true", "OUT=" + out}
	if platforms != "" {
		args = append(args, "PLATFORMS="+platforms)
	}
	cmd := exec.Command("make", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make %s in %s: %w\n%s", strings.Join(args[1:], " "), root, err, b)
	}
	return nil
}
