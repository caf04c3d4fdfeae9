package testproc

import (
	"net/http"
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
