package testproc

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServers starts each server, checks it answers, stops it and checks that it no longer does; MinIO is also
// restarted on the same address and data folder.
func TestServers(t *testing.T) {
	for _, spec := range []Spec{VictoriaMetricsSpec(), VictoriaLogsSpec(), MinIOSpec()} {
		t.Run(spec.Tool, func(t *testing.T) {
			s := startServerT(t, spec)
			if rss, err := s.RSS(); err != nil || rss <= 0 {
				t.Errorf("RSS = %d, %v; want a positive size", rss, err)
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			if resp, err := http.Get(s.URL + spec.Health); err == nil {
				_ = resp.Body.Close()
				t.Fatalf("%s still answers after Stop", spec.Tool)
			}
			if err := s.Restart(); err != nil {
				t.Fatalf("Restart: %v", err)
			}
			resp, err := http.Get(s.URL + spec.Health)
			if err != nil {
				t.Fatalf("after Restart: %v", err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("after Restart: HTTP %d", resp.StatusCode)
			}
		})
	}
}

// A Spec's Setup runs before the start with the address and data folder the server gets, and an error of it ends the start before any process runs,
// naming the tool.
func TestServerSetup(t *testing.T) {
	spec := VictoriaMetricsSpec()
	var seenAddr, seenDir string
	spec.Setup = func(addr, dir string) error {
		seenAddr, seenDir = addr, dir
		return os.WriteFile(filepath.Join(dir, "setup-ran"), []byte(addr), 0o600)
	}
	s := startServerT(t, spec)
	if seenAddr != s.Addr || seenDir != s.Dir {
		t.Errorf("Setup saw %s %s, the server runs at %s with data in %s", seenAddr, seenDir, s.Addr, s.Dir)
	}
	if b, err := os.ReadFile(filepath.Join(s.Dir, "setup-ran")); err != nil || string(b) != s.Addr {
		t.Errorf("file written by Setup: %q, %v; want %q", b, err, s.Addr)
	}

	spec.Setup = func(string, string) error { return errors.New("no config") }
	if _, err := StartServer(spec, t.TempDir()); err == nil || !strings.Contains(err.Error(), "set up victoria-metrics: no config") {
		t.Errorf("StartServer with a failing Setup: %v, want the Setup error naming the tool", err)
	}
}
