package testproc

import (
	"net"
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

// TestServerOnListensOnTheGivenAddress starts a server on another address than 127.0.0.1 (a real node's IP in
// tests/node; here 127.0.0.2 of loopback) and checks that it answers there and not on 127.0.0.1.
func TestServerOnListensOnTheGivenAddress(t *testing.T) {
	s := ServerOn(t, VictoriaLogsSpec(), "127.0.0.2")
	host, port, err := net.SplitHostPort(s.Addr)
	if err != nil || host != "127.0.0.2" || s.URL != "http://"+s.Addr {
		t.Fatalf("Addr %q URL %q, want 127.0.0.2:<port> (%v)", s.Addr, s.URL, err)
	}
	resp, err := http.Get(s.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp, err := http.Get("http://127.0.0.1:" + port + "/health"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("the server on 127.0.0.2 also answers on 127.0.0.1:%s", port)
	}
}
