package coldstorage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

const testBucket = "kof-cold"

// TestExportOnRealServers exports the fixture from real VictoriaMetrics and VictoriaLogs servers into a real MinIO
// and reads every file back with Apache Arrow; then reruns (nothing rewritten), exports hours without data (nothing
// written), runs two exporters at once, breaks each source mid-stream (the immediate rerun completes every window),
// interrupts a run by killing MinIO (the immediate rerun after its restart completes it), stops the exporter binary
// mid-upload with SIGTERM and SIGKILL (the immediate rerun completes it) and exports from a stopped VictoriaMetrics
// (clear error, nothing published, exit status 1). It takes about 40 s (the binary's build, a 1M-sample hour and
// ten runs), on one set of servers for every check.
func TestExportOnRealServers(t *testing.T) {
	s := startStack(t)
	s.ingest(t)
	ctx := context.Background()
	b := s.bucket(t, testBucket)
	if err := b.Create(ctx, false); err != nil {
		t.Fatal(err)
	}
	// The first run holds upload parts in memory (no scratch folder); every other run of the test spills them to
	// the stack's scratch folder, as the chart runs the exporter.
	cfg := s.config(testBucket, "telemetry")
	cfg.ScratchDir = ""
	exp, err := coldstorage.New(cfg, coldstorage.Options{Owner: "test", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res := exp.RunWindows(ctx, hours)
	if len(res.Failed) > 0 || res.Exported != len(s.want) {
		t.Fatalf("first run: exported %d, failed %v; want %d folders exported", res.Exported, res.Failed, len(s.want))
	}
	t.Run("files", func(t *testing.T) { s.checkFiles(t, b, "telemetry") })
	t.Run("documented DuckDB queries", func(t *testing.T) { s.checkDuckDB(t, b, "telemetry") })

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

	t.Run("hours without data write nothing", func(t *testing.T) {
		// VictoriaMetrics lists label values by day, so the metrics partitions of the day are tried in these hours
		// too and turn out empty.
		none := []window.Hour{hours[0].Prev(), hours[2].Next()}
		res := exp.RunWindows(ctx, none)
		if len(res.Failed) > 0 || res.Exported != 0 || res.Empty == 0 {
			t.Fatalf("empty hours: exported %d, empty %d, failed %v; want every folder empty", res.Exported, res.Empty, res.Failed)
		}
		for key := range objects(t, b, "telemetry/") {
			for _, h := range none {
				if strings.Contains(key, "/dt="+h.Date()+"/hour="+h.HourOfDay()+"/") {
					t.Errorf("empty hour %s: %s written", h, key)
				}
			}
		}
	})

	t.Run("two runs at once", func(t *testing.T) {
		const prefix = "concurrent"
		var wg sync.WaitGroup
		results := make([]coldstorage.Result, 2)
		for i := range results {
			e, err := coldstorage.New(s.config(testBucket, prefix), coldstorage.Options{Owner: fmt.Sprint("run-", i), Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() { defer wg.Done(); results[i] = e.RunWindows(ctx, hours) }()
		}
		wg.Wait()
		published := 0
		for i, r := range results {
			if len(r.Failed) > 0 {
				t.Errorf("run %d: failed %v", i, r.Failed)
			}
			published += r.Exported
		}
		if published != len(s.want) {
			t.Errorf("the two runs published %d folders together, want each of the %d once", published, len(s.want))
		}
		s.checkFiles(t, b, prefix)
		s.checkScratch(t) // the two runs shared one scratch folder
	})

	t.Run("source breaks mid-stream", func(t *testing.T) { s.checkSourceBreaks(t, b) })
	t.Run("S3 stopped mid-run", func(t *testing.T) { s.checkInterrupted(t, b) })
	t.Run("exporter stopped mid-upload", func(t *testing.T) { s.checkStoppedMidUpload(t, b) })
	t.Run("VictoriaMetrics down", func(t *testing.T) { s.checkSourceDown(t, b) })
}

// checkFiles reads every expected folder back and checks rows, types, maps, exact selection, the series join and
// markers, and that the bucket holds nothing but the data files and markers.
func (s *stack) checkFiles(t *testing.T, b *bucket.Bucket, prefix string) {
	t.Helper()
	ctx := context.Background()
	boundaryRows := map[folderKey]map[string]int{}
	wantKeys := map[string]bool{}
	for k, want := range s.want {
		folder := folderOf(prefix, k)
		_, names := coldstorage.Layout(k.source)
		files := map[string][]byte{}
		for _, n := range names {
			data, _, err := b.Get(ctx, folder+n)
			if err != nil {
				t.Errorf("%s: %v", folder+n, err)
				continue
			}
			files[n] = data
			wantKeys[folder+n] = true
		}
		wantKeys[folder+coldstorage.SuccessName] = true
		if len(files) != len(names) {
			continue
		}
		tb := readParquet(t, files[names[0]])
		if tb.rows() != want {
			t.Errorf("%s: %d rows, want %d (ingested)", folder+names[0], tb.rows(), want)
		}
		h := window.Of(mustTime(strings.TrimSuffix(k.hour, "Z") + ":00:00Z"))
		for _, ts := range tb.times("timestamp") {
			if !h.Contains(ts) && k.source != coldstorage.Traces {
				t.Errorf("%s: row at %s outside the window %s", folder, ts, h)
			}
			if ts.Equal(boundary) {
				id := folderKey{source: k.source, tenant: k.tenant, cluster: k.cluster}
				if boundaryRows[id] == nil {
					boundaryRows[id] = map[string]int{}
				}
				boundaryRows[id][k.hour]++
			}
		}
		var series *table
		if k.source == coldstorage.Metrics {
			series = readParquet(t, files[coldstorage.SeriesName])
		}
		s.checkColumns(t, folder, k, tb, series)
		s.checkMarker(t, b, folder, k.source, files, want)
	}
	for _, src := range []coldstorage.Source{coldstorage.Metrics, coldstorage.Logs, coldstorage.Traces} {
		for _, tn := range tenants {
			for _, c := range clusters {
				got := boundaryRows[folderKey{source: src, tenant: tn, cluster: c}]
				want := 1
				if src == coldstorage.Metrics {
					want = 2 // two series, one row each, in one file
				}
				if len(got) != 1 || got["2026-06-29T16Z"] != want {
					t.Errorf("%s %s/%s: boundary sample rows per hour %v; want %d row(s) in hour 16 only", src, tn, c, got, want)
				}
			}
		}
	}
	for key := range objects(t, b, prefix+"/") {
		if !wantKeys[key] {
			t.Errorf("bucket holds %s, which is neither a data file nor a marker of an exported folder", key)
		}
		delete(wantKeys, key)
	}
}

// checkColumns checks the column types and that rows belong to the folder's tenant and cluster exactly; for metrics
// it joins every sample to its series row on series_id.
func (s *stack) checkColumns(t *testing.T, key string, k folderKey, tb, series *table) {
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
		type row struct {
			name   string
			labels map[string]string
		}
		byID := map[int64]row{}
		names, labels := series.strs("metric_name"), series.maps("labels")
		for i, id := range series.ints("series_id") {
			if _, dup := byID[id]; dup {
				t.Errorf("%s: series_id %d twice in the series file", key, id)
			}
			byID[id] = row{names[i], labels[i]}
		}
		var sum float64
		values := tb.floats("value")
		for i, id := range tb.ints("series_id") {
			r, ok := byID[id]
			if !ok {
				t.Fatalf("%s sample %d: series_id %d is not in the series file", key, i, id)
			}
			l := r.labels
			if l["cluster"] != k.cluster || l["tenant"] != tenant || (l["job"] != "kubelet" && l["job"] != "node") || r.name != "up" {
				t.Fatalf("%s sample %d: metric %s labels %v; want up with cluster=%s tenant=%q and a job", key, i, r.name, l, k.cluster, tenant)
			}
			sum += values[i]
		}
		if sum != s.sums[k] {
			t.Errorf("%s: sum(value) = %v, want %v (ingested)", key, sum, s.sums[k])
		}
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

// checkMarker checks that the folder's _SUCCESS describes its files exactly.
func (s *stack) checkMarker(t *testing.T, b *bucket.Bucket, folder string, src coldstorage.Source, files map[string][]byte, rows int) {
	t.Helper()
	raw, _, err := b.Get(context.Background(), folder+coldstorage.SuccessName)
	if err != nil {
		t.Errorf("%s: marker: %v", folder, err)
		return
	}
	var m coldstorage.Marker
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: marker: %v", folder, err)
	}
	layout, names := coldstorage.Layout(src)
	if m.Layout != layout || m.Rows != int64(rows) || len(m.Files) != len(names) || m.MinTime.IsZero() || m.MaxTime.Before(m.MinTime) {
		t.Errorf("%s: marker layout %d rows %d files %d (%s to %s); want layout %d, %d rows, %d files", folder, m.Layout, m.Rows,
			len(m.Files), m.MinTime, m.MaxTime, layout, rows, len(names))
		return
	}
	if src == coldstorage.Metrics && m.Series != 2 {
		t.Errorf("%s: marker series %d, want 2 (kubelet and node)", folder, m.Series)
	}
	for i, f := range m.Files {
		data := files[names[i]]
		sum := sha256.Sum256(data)
		if f.Name != names[i] || f.Key != folder+names[i] || f.Bytes != int64(len(data)) || f.SHA256 != hex.EncodeToString(sum[:]) || f.ETag == "" {
			t.Errorf("%s: marker file %d %+v does not describe %s (%d bytes)", folder, i, f, names[i], len(data))
		}
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

// checkInterrupted kills MinIO during the fifth folder of a run, restarts it and reruns at once: the rerun
// completes every folder.
func (s *stack) checkInterrupted(t *testing.T, b *bucket.Bucket) {
	ctx := context.Background()
	const prefix = "interrupted"
	var logs bytes.Buffer
	kh := &killingHandler{Handler: slog.NewJSONHandler(&logs, nil), n: 5, kill: s.minio.Kill}
	exp, err := coldstorage.New(s.config(testBucket, prefix), coldstorage.Options{Log: slog.New(kh), Owner: "killed", Version: "test"})
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
	again, err := coldstorage.New(s.config(testBucket, prefix), coldstorage.Options{Owner: "rerun", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s.checkScratch(t) // the uploads S3's failure cut are released too
	res = again.RunWindows(ctx, hours)
	if len(res.Failed) > 0 || res.Exported+res.Skipped != len(s.want) || res.Exported == 0 {
		t.Fatalf("rerun after restart: exported %d, skipped %d, failed %v; want %d folders complete", res.Exported, res.Skipped, res.Failed, len(s.want))
	}
	s.checkFiles(t, b, prefix)
	s.checkScratch(t)
}

// checkSourceDown runs the binary against a stopped VictoriaMetrics: exit status 1, one log line naming the URL,
// nothing published.
func (s *stack) checkSourceDown(t *testing.T, b *bucket.Bucket) {
	bin := s.binary(t)
	vmURL := s.vm.URL
	if err := s.vm.Stop(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"SOURCES=metrics", "METRICS_URL="+vmURL, "S3_BUCKET="+testBucket, "S3_ENDPOINT="+s.minio.URL,
		"S3_USE_PATH_STYLE=true", "S3_ACCESS_KEY="+s.access, "S3_SECRET_KEY="+s.secret,
		"S3_PREFIX=down", "CATCH_UP_HOURS=3", "SCRATCH_DIR="+s.scratch, "GOMAXPROCS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exporter with VictoriaMetrics down: %v; want exit status 1\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"gomaxprocs":1}`) { // without GOMAXPROCS the exporter runs on one core
		t.Errorf("want the start line to say gomaxprocs 1:\n%s", stderr.String())
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

// binary returns the exporter binary, built once per stack into a temporary folder of t.
func (s *stack) binary(t testing.TB) string {
	t.Helper()
	if s.bin != "" {
		return s.bin
	}
	bin := testproc.Program(t, "./cmd/cold-storage-exporter", s.dir)
	s.bin = bin
	return bin
}

// breakingProxy forwards every request to a real server and cuts the first `breaks` responses of the streaming
// read APIs (VictoriaMetrics' /api/v1/export, LogsQL's /select/logsql/query) after half their bytes, closing the
// connection mid-body as a crashed or restarted server does.
type breakingProxy struct {
	srv    *httptest.Server
	mu     sync.Mutex
	breaks int
	cut    []string // the request URLs whose responses were cut
}

func newBreakingProxy(t *testing.T, target string, breaks int) *breakingProxy {
	t.Helper()
	p := &breakingProxy{breaks: breaks}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		p.mu.Lock()
		cut := p.breaks > 0 && resp.StatusCode == http.StatusOK &&
			(r.URL.Path == "/api/v1/export" || r.URL.Path == "/select/logsql/query")
		if cut {
			p.breaks--
			p.cut = append(p.cut, r.URL.RequestURI())
		}
		p.mu.Unlock()
		for k, v := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		if !cut {
			_, _ = io.Copy(w, resp.Body)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // close the connection without ending the chunked body
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// checkSourceBreaks cuts the first metrics export and the first logs query of a run mid-stream: those folders fail
// with nothing written, the others are exported; a run started at once with the sources whole completes every
// window.
func (s *stack) checkSourceBreaks(t *testing.T, b *bucket.Bucket) {
	ctx := context.Background()
	const prefix = "broken"
	vm, vl := newBreakingProxy(t, s.vm.URL, 1), newBreakingProxy(t, s.vl.URL, 1)
	cfg := s.config(testBucket, prefix)
	cfg.MetricsURL, cfg.LogsURL = vm.srv.URL, vl.srv.URL
	exp, err := coldstorage.New(cfg, coldstorage.Options{Owner: "broken", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res := exp.RunWindows(ctx, hours)
	if len(vm.cut) != 1 || len(vl.cut) != 1 {
		t.Fatalf("cut %v and %v; want one export and one query cut", vm.cut, vl.cut)
	}
	if len(res.Failed) != 2 || res.Exported != len(s.want)-2 {
		t.Fatalf("run with the sources cut: exported %d, failed %v; want the 2 cut folders failed, the other %d exported", res.Exported, res.Failed, len(s.want)-2)
	}
	for _, f := range res.Failed {
		if !strings.Contains(f.Err.Error(), "unexpected EOF") {
			t.Errorf("%s: want the cut stream (unexpected EOF) named", f)
		}
		folder := coldstorage.Folder(prefix, f.Tenant, f.Cluster, f.Window, f.Source)
		if got := objects(t, b, folder); len(got) != 0 {
			t.Errorf("cut folder %s holds %v; want nothing", folder, got)
		}
	}
	again, err := coldstorage.New(s.config(testBucket, prefix), coldstorage.Options{Owner: "rerun", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	res = again.RunWindows(ctx, hours)
	if len(res.Failed) > 0 || res.Exported != 2 || res.Skipped != len(s.want)-2 {
		t.Fatalf("immediate rerun: exported %d, skipped %d, failed %v; want the 2 cut folders exported", res.Exported, res.Skipped, res.Failed)
	}
	s.checkFiles(t, b, prefix)
	s.checkScratch(t)
}
