package coldstorage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
	"kof.dev/kof/exporters/window"
)

const testBucket = "kof-cold"

// TestExportOnRealServers exports the fixture from real VictoriaMetrics and VictoriaLogs servers into a real MinIO
// and reads every file back with Apache Arrow; then reruns (nothing rewritten), interrupts a run by killing MinIO
// (the window is not marked, the rerun completes it) and exports from a stopped VictoriaMetrics (clear error,
// nothing published, exit status 1).
func TestExportOnRealServers(t *testing.T) {
	s := startStack(t)
	s.ingest(t)
	ctx := context.Background()
	b := s.bucket(t, testBucket)
	if err := b.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	exp, err := coldstorage.New(s.config(testBucket, "telemetry"), coldstorage.Options{Owner: "test", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res := exp.RunWindows(ctx, hours)
	if len(res.Failed) > 0 || res.Exported != len(s.want) {
		t.Fatalf("first run: exported %d, failed %v; want %d folders exported", res.Exported, res.Failed, len(s.want))
	}
	t.Run("files", func(t *testing.T) { s.checkFiles(t, b, "telemetry") })

	t.Run("rerun rewrites nothing", func(t *testing.T) {
		before := objects(t, b, "telemetry/")
		res := exp.RunWindows(ctx, hours)
		if len(res.Failed) > 0 || res.Exported != 0 || res.Skipped != len(s.want) {
			t.Fatalf("rerun: exported %d, skipped %d, failed %v; want all %d skipped", res.Exported, res.Skipped, res.Failed, len(s.want))
		}
		after := objects(t, b, "telemetry/")
		if len(before) != len(after) {
			t.Fatalf("rerun changed the object count: %d -> %d", len(before), len(after))
		}
		for k, etag := range before {
			if after[k] != etag {
				t.Errorf("rerun rewrote %s (ETag %s -> %s)", k, etag, after[k])
			}
		}
	})

	t.Run("S3 stopped mid-run", func(t *testing.T) { s.checkInterrupted(t, b) })
	t.Run("VictoriaMetrics down", func(t *testing.T) { s.checkSourceDown(t, b) })
}

// checkFiles reads every expected folder back and checks rows, types, maps, exact selection and markers.
func (s *stack) checkFiles(t *testing.T, b *bucket.Bucket, prefix string) {
	ctx := context.Background()
	boundaryFiles := map[folderKey][]string{}
	for k, want := range s.want {
		key := keyOf(prefix, k)
		data, _, err := b.Get(ctx, key)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		tb := readParquet(t, data)
		if tb.rows() != want {
			t.Errorf("%s: %d rows, want %d (ingested)", key, tb.rows(), want)
		}
		h := window.Of(mustTime(strings.TrimSuffix(k.hour, "Z") + ":00:00Z"))
		for _, ts := range tb.times("timestamp") {
			if !h.Contains(ts) && k.source != coldstorage.Traces {
				t.Errorf("%s: row at %s outside the window %s", key, ts, h)
			}
			if ts.Equal(boundary) {
				id := folderKey{source: k.source, tenant: k.tenant, cluster: k.cluster}
				boundaryFiles[id] = append(boundaryFiles[id], key)
			}
		}
		s.checkColumns(t, key, k, tb)
		s.checkMarker(t, b, key, data, want)
	}
	for _, src := range []coldstorage.Source{coldstorage.Metrics, coldstorage.Logs, coldstorage.Traces} {
		for _, tn := range tenants {
			for _, c := range clusters {
				id := folderKey{source: src, tenant: tn, cluster: c}
				files := boundaryFiles[id]
				wantFiles := 1
				if src == coldstorage.Metrics {
					wantFiles = 2 // two series, one row each, in one file
				}
				if len(files) != wantFiles || !strings.Contains(files[0], "hour=16") {
					t.Errorf("%s %s/%s: boundary sample rows in %v; want %d row(s) in the hour=16 file only", src, tn, c, files, wantFiles)
				}
			}
		}
	}
	var parquetKeys, locks int
	for key := range objects(t, b, prefix+"/") {
		switch {
		case strings.HasSuffix(key, ".parquet"):
			parquetKeys++
		case strings.HasSuffix(key, coldstorage.LockName):
			locks++
		}
	}
	if parquetKeys != len(s.want) || locks != 0 {
		t.Errorf("bucket holds %d Parquet files and %d leases; want %d files (one per folder) and no lease", parquetKeys, locks, len(s.want))
	}
}

// checkColumns checks the column types and that rows belong to the folder's tenant and cluster exactly.
func (s *stack) checkColumns(t *testing.T, key string, k folderKey, tb *table) {
	t.Helper()
	ts := tb.typeOf("timestamp").(*arrow.TimestampType)
	tenant := k.tenant
	if tenant == "default" {
		tenant = ""
	}
	switch k.source {
	case coldstorage.Metrics:
		if ts.Unit != arrow.Millisecond || ts.TimeZone != "UTC" {
			t.Errorf("%s: timestamp is %s, want timestamp[ms, tz=UTC]", key, ts)
		}
		if dt := tb.typeOf("value"); dt.ID() != arrow.FLOAT64 {
			t.Errorf("%s: value is %s, want double", key, dt)
		}
		names := tb.strs("metric_name")
		for i, l := range tb.maps("labels") {
			if l["cluster"] != k.cluster || l["tenant"] != tenant || (l["job"] != "kubelet" && l["job"] != "node") || names[i] != "up" {
				t.Fatalf("%s row %d: metric %s labels %v; want up with cluster=%s tenant=%q and a job", key, i, names[i], l, k.cluster, tenant)
			}
		}
		_ = tb.floats("value")
	case coldstorage.Logs:
		if ts.Unit != arrow.Nanosecond || ts.TimeZone != "UTC" {
			t.Errorf("%s: timestamp is %s, want timestamp[ns, tz=UTC]", key, ts)
		}
		res, attrs, body := tb.maps("resource_attributes"), tb.maps("log_attributes"), tb.strs("body")
		sev, svc := tb.strs("severity_text"), tb.strs("service_name")
		for i := range res {
			if res[i]["k8s.cluster.name"] != k.cluster || attrs[i]["tenant"] != tenant || attrs[i]["http.status"] != "200" ||
				body[i] != "GET /healthz 200 from "+k.cluster || sev[i] != "INFO" || svc[i] != "api" {
				t.Fatalf("%s row %d: resource %v, attributes %v, body %q, severity %q, service %q", key, i, res[i], attrs[i], body[i], sev[i], svc[i])
			}
		}
	case coldstorage.Traces:
		res, attrs, names := tb.maps("resource_attributes"), tb.maps("span_attributes"), tb.strs("span_name")
		for i := range res {
			if res[i]["k8s.cluster.name"] != k.cluster || res[i]["tenant"] != tenant || attrs[i]["http.method"] != "GET" || names[i] != "GET /checkout" {
				t.Fatalf("%s row %d: resource %v, span attributes %v, name %q", key, i, res[i], attrs[i], names[i])
			}
		}
		if dt := tb.typeOf("duration_ns"); dt.ID() != arrow.INT64 {
			t.Errorf("%s: duration_ns is %s, want int64", key, dt)
		}
	}
}

// checkMarker checks that the folder's _SUCCESS describes the file exactly.
func (s *stack) checkMarker(t *testing.T, b *bucket.Bucket, key string, data []byte, rows int) {
	t.Helper()
	raw, _, err := b.Get(context.Background(), strings.TrimSuffix(key, filepath.Base(key))+coldstorage.SuccessName)
	if err != nil {
		t.Errorf("%s: marker: %v", key, err)
		return
	}
	var m coldstorage.Marker
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: marker: %v", key, err)
	}
	sum := sha256.Sum256(data)
	if m.Rows != int64(rows) || m.Bytes != int64(len(data)) || m.SHA256 != hex.EncodeToString(sum[:]) || m.Key != key || m.MinTime.IsZero() || m.MaxTime.Before(m.MinTime) {
		t.Errorf("%s: marker %+v does not describe the file (%d rows, %d bytes)", key, m, rows, len(data))
	}
}

// killingHandler kills MinIO when the exporter logs the n-th "streaming parquet to S3", and records that key.
type killingHandler struct {
	slog.Handler
	mu     sync.Mutex
	n      int
	kill   func()
	killed string
}

func (h *killingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "streaming parquet to S3" {
		h.mu.Lock()
		h.n--
		if h.n == 0 {
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "key" {
					h.killed = a.Value.String()
				}
				return true
			})
			h.kill()
		}
		h.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *killingHandler) WithAttrs(a []slog.Attr) slog.Handler { return h }
func (h *killingHandler) WithGroup(string) slog.Handler        { return h }

// checkInterrupted kills MinIO during the fifth folder of a run, restarts it and reruns.
func (s *stack) checkInterrupted(t *testing.T, b *bucket.Bucket) {
	ctx := context.Background()
	const prefix = "interrupted"
	var logs bytes.Buffer
	kh := &killingHandler{Handler: slog.NewJSONHandler(&logs, nil), n: 5, kill: s.minio.Kill}
	cfg := s.config(testBucket, prefix)
	cfg.Lease = time.Second // the lease the killed run leaves behind expires soon
	exp, err := coldstorage.New(cfg, coldstorage.Options{Log: slog.New(kh), Owner: "killed", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res := exp.RunWindows(ctx, hours)
	if len(res.Failed) == 0 || kh.killed == "" {
		t.Fatalf("run with MinIO killed: no failure reported (killed at %q)", kh.killed)
	}
	if !strings.Contains(logs.String(), s.minio.Addr) {
		t.Errorf("logs do not name the S3 endpoint %s:\n%s", s.minio.Addr, logs.String())
	}
	if err := s.minio.Restart(); err != nil {
		t.Fatal(err)
	}
	marker := strings.TrimSuffix(kh.killed, filepath.Base(kh.killed)) + coldstorage.SuccessName
	if _, ok, err := b.Stat(ctx, marker); err != nil || ok {
		t.Fatalf("interrupted folder %s: marker present %v (err %v); want none", kh.killed, ok, err)
	}
	time.Sleep(1100 * time.Millisecond)
	again, err := coldstorage.New(s.config(testBucket, prefix), coldstorage.Options{Owner: "rerun", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res = again.RunWindows(ctx, hours)
	if len(res.Failed) > 0 || res.Exported+res.Skipped != len(s.want) || res.Exported == 0 {
		t.Fatalf("rerun after restart: exported %d, skipped %d, failed %v; want %d folders complete", res.Exported, res.Skipped, res.Failed, len(s.want))
	}
	s.checkFiles(t, b, prefix)
}

// checkSourceDown runs the binary against a stopped VictoriaMetrics: exit status 1, one log line naming the URL,
// nothing published.
func (s *stack) checkSourceDown(t *testing.T, b *bucket.Bucket) {
	bin := filepath.Join(t.TempDir(), "cold-storage-exporter")
	build := exec.Command("go", "build", "-o", bin, "kof.dev/kof/cmd/cold-storage-exporter")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	vmURL := s.vm.URL
	if err := s.vm.Stop(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"SOURCES=metrics", "METRICS_URL="+vmURL, "S3_BUCKET="+testBucket, "S3_ENDPOINT="+s.minio.URL,
		"S3_USE_PATH_STYLE=true", "S3_ACCESS_KEY=kof-test-access", "S3_SECRET_KEY=kof-test-secret-key",
		"S3_PREFIX=down", "CATCH_UP_HOURS=3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exporter with VictoriaMetrics down: %v; want exit status 1\n%s", err, stderr.String())
	}
	var down int
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, `"msg":"source unreachable"`) {
			down++
			if !strings.Contains(line, vmURL) || !strings.Contains(line, "connection refused") {
				t.Errorf("source error does not name the URL %s and the cause: %s", vmURL, line)
			}
		}
	}
	if down != 1 || !strings.Contains(stderr.String(), `"msg":"failed windows","count":3`) {
		t.Errorf("want one source error line and the 3 failed windows listed at the end:\n%s", stderr.String())
	}
	if got := objects(t, b, "down/"); len(got) != 0 {
		t.Errorf("published with the source down: %v", got)
	}
}
