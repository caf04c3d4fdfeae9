package datapath

import (
	"bytes"
	"context"
	"fmt"
	"kof.dev/kof/internal/testproc"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// storage is the regional storage of one test: VictoriaMetrics, VictoriaLogs for logs and for audit logs.
type storage struct {
	metrics, logs, audit string // loopback addresses
}

// startStorage starts single-node VictoriaMetrics and two VictoriaLogs on loopback, with data in the test's folder.
func startStorage(t *testing.T) storage {
	t.Helper()
	s := storage{metrics: testproc.FreeAddr(t), logs: testproc.FreeAddr(t), audit: testproc.FreeAddr(t)}
	vm := testproc.Start(t, "victoria-metrics", testproc.Tool(t, "victoria-metrics"), nil, "-httpListenAddr="+s.metrics,
		"-storageDataPath="+filepath.Join(t.TempDir(), "vm"), "-retentionPeriod=1d", "-search.latencyOffset=0s")
	vl := testproc.Start(t, "victoria-logs", testproc.Tool(t, "victoria-logs"), nil, "-httpListenAddr="+s.logs,
		"-storageDataPath="+filepath.Join(t.TempDir(), "vl"))
	vla := testproc.Start(t, "victoria-logs-audit", testproc.Tool(t, "victoria-logs"), nil, "-httpListenAddr="+s.audit,
		"-storageDataPath="+filepath.Join(t.TempDir(), "vla"))
	vm.WaitHTTP(t, "http://"+s.metrics+"/health")
	vl.WaitHTTP(t, "http://"+s.logs+"/health")
	vla.WaitHTTP(t, "http://"+s.audit+"/health")
	return s
}

// vmauthServer is a running vmauth that can be stopped and started again on the same address.
type vmauthServer struct {
	t      *testing.T
	addr   string
	config string
	proxy  string
	p      *testproc.Process
}

// startVMAuth writes config and runs vmauth on a free loopback address, reaching its backends through proxy.
func startVMAuth(t *testing.T, config []byte, proxy string) *vmauthServer {
	t.Helper()
	file := filepath.Join(t.TempDir(), "auth.yaml")
	if err := os.WriteFile(file, config, 0o600); err != nil {
		t.Fatal(err)
	}
	v := &vmauthServer{t: t, addr: testproc.FreeAddr(t), config: file, proxy: proxy}
	v.Start()
	return v
}

// Start runs vmauth (again) and waits until it is healthy.
func (v *vmauthServer) Start() {
	v.t.Helper()
	v.p = testproc.Start(v.t, "vmauth", testproc.Tool(v.t, "vmauth"), []string{"HTTP_PROXY=" + v.proxy},
		"-httpListenAddr="+v.addr, "-auth.config="+v.config)
	v.p.WaitHTTP(v.t, "http://"+v.addr+"/health")
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
