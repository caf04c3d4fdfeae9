package coldstorage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// The fixture: 2 tenants x 3 clusters (with `child` and `child-adopted`, which a phrase filter would confuse) x 3
// hours, plus data without a tenant (tenant partition `default`).
var (
	tenants  = []string{"acme", "globex"}
	clusters = []string{"child", "child-adopted", "regional-a"}
	hours    = []window.Hour{
		window.Of(mustTime("2026-06-29T15:00:00Z")),
		window.Of(mustTime("2026-06-29T16:00:00Z")),
		window.Of(mustTime("2026-06-29T17:00:00Z")),
	}
	// boundary is a sample time exactly on an hour boundary: it belongs to hour 16 only.
	boundary = mustTime("2026-06-29T16:00:00Z")
)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// folderKey identifies one expected folder.
type folderKey struct {
	source          coldstorage.Source
	tenant, cluster string
	hour            string
}

// stack is the real servers of one test: VictoriaMetrics, VictoriaLogs for logs, a second VictoriaLogs holding
// span-shaped records (VictoriaTraces is not served by the Go module proxy; it shares VictoriaLogs' LogsQL API)
// and MinIO.
type stack struct {
	vm, vl, vt, minio *testproc.Server
	// want counts the rows ingested per folder; sums adds the metric sample values per folder.
	want map[folderKey]int
	sums map[folderKey]float64
	// access and secret are the keys the exporter runs with: a MinIO user holding exactly the user guide's policy
	// on testBucket.
	access, secret string
	// dir is a temporary folder of the stack; bin the exporter binary built there (binary).
	dir, bin string
	// scratch is the scratch folder (SCRATCH_DIR) of every exporter of the stack, shared as two runs at once may
	// share one; checkScratch asserts that the runs leave it empty.
	scratch string
}

func startStack(t testing.TB) *stack {
	t.Helper()
	s := &stack{
		vm: testproc.VictoriaMetrics(t), vl: testproc.VictoriaLogs(t), vt: testproc.VictoriaLogs(t),
		minio: testproc.MinIO(t), want: map[folderKey]int{}, sums: map[folderKey]float64{}, dir: t.TempDir(),
	}
	s.scratch = filepath.Join(s.dir, "scratch")
	if err := os.Mkdir(s.scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	// The exporter runs as a user holding exactly the user guide's policy; the tests read and check as root.
	user := testproc.ExporterUser(t, s.minio, testproc.ColdStorageGuide, testBucket)
	s.access, s.secret = user.AccessKey, user.SecretKey
	return s
}

// config returns the exporter configuration of the stack, exporting the fixture's three hours into bucket/prefix
// with upload parts spilled to the stack's scratch folder (as the chart runs it).
func (s *stack) config(bucketName, prefix string) coldstorage.Config {
	cfg, err := coldstorage.FromEnv(func(k string) string {
		return map[string]string{
			coldstorage.EnvMetricsURL: s.vm.URL, coldstorage.EnvLogsURL: s.vl.URL, coldstorage.EnvTracesURL: s.vt.URL,
			coldstorage.EnvS3Bucket: bucketName, coldstorage.EnvS3Endpoint: s.minio.URL, coldstorage.EnvS3UsePathStyle: "true",
			coldstorage.EnvS3AccessKey: s.access, coldstorage.EnvS3SecretKey: s.secret,
			coldstorage.EnvS3Prefix: prefix, coldstorage.EnvScratchDir: s.scratch,
		}[k]
	})
	if err != nil {
		panic(err)
	}
	return cfg
}

// checkScratch fails t when the scratch folder holds anything: every upload's part file must be gone when the
// upload is committed or aborted, and a killed run's with the process.
func (s *stack) checkScratch(t testing.TB) {
	t.Helper()
	left, err := os.ReadDir(s.scratch)
	if err != nil || len(left) != 0 {
		t.Errorf("scratch folder holds %v (%v); want nothing", left, err)
	}
}

// bucket returns the bucket name with MinIO's root keys (the tests' own reads and checks).
func (s *stack) bucket(t testing.TB, name string) *bucket.Bucket {
	t.Helper()
	b, err := bucket.Open(bucket.Config{
		Endpoint: s.minio.URL, Bucket: name, UsePathStyle: true,
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body to url and fails t unless the server accepts it.
func post(t testing.TB, u, contentType string, body io.Reader) {
	t.Helper()
	resp, err := http.Post(u, contentType, body) //nolint:noctx // loopback test server
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: HTTP %d: %s", u, resp.StatusCode, msg)
	}
}

// flush makes ingested data searchable at once.
func flush(t testing.TB, srv *testproc.Server) {
	t.Helper()
	resp, err := http.Get(srv.URL + "/internal/force_flush") //nolint:noctx // loopback test server
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// sampleTimes returns the sample times of one series in hour h: every 10 minutes from the hour's start (the first
// lies exactly on the boundary), plus the last millisecond of the hour.
func sampleTimes(h window.Hour) []time.Time {
	var out []time.Time
	for m := 0; m < 60; m += 10 {
		out = append(out, h.Start.Add(time.Duration(m)*time.Minute))
	}
	return append(out, h.End.Add(-time.Millisecond))
}

// ingest writes the fixture into the three stores and records the expected row counts.
func (s *stack) ingest(t testing.TB) {
	t.Helper()
	var metrics, logs, spans bytes.Buffer
	type owner struct{ tenant, cluster string }
	owners := []owner{{"", "mothership"}} // data without a tenant
	for _, tn := range tenants {
		for _, c := range clusters {
			owners = append(owners, owner{tn, c})
		}
	}
	for _, o := range owners {
		tenant := o.tenant
		if tenant == "" {
			tenant = coldstorage.DefaultTenant
		}
		for _, h := range hours {
			for _, ts := range sampleTimes(h) {
				for _, job := range []string{"kubelet", "node"} {
					labels := fmt.Sprintf(`cluster=%q,job=%q`, o.cluster, job)
					if o.tenant != "" {
						labels += fmt.Sprintf(`,tenant=%q`, o.tenant)
					}
					fmt.Fprintf(&metrics, "up{%s} %d %d\n", labels, ts.Unix()%7, ts.UnixMilli())
					k := folderKey{coldstorage.Metrics, tenant, o.cluster, window.Of(ts).String()}
					s.want[k]++
					s.sums[k] += float64(ts.Unix() % 7)
				}
				rec := map[string]string{
					"_time": ts.Format(time.RFC3339Nano), "_msg": "GET /healthz 200 from " + o.cluster,
					"k8s.cluster.name": o.cluster, "service.name": "api", "severity": "INFO", "http.status": "200",
				}
				if o.tenant != "" {
					rec["tenant"] = o.tenant
				}
				line, _ := json.Marshal(rec)
				logs.Write(append(line, '\n'))
				s.want[folderKey{coldstorage.Logs, tenant, o.cluster, window.Of(ts).String()}]++
				span := map[string]string{
					"_time": ts.Format(time.RFC3339Nano), "_msg": "-", "name": "GET /checkout", "kind": "2",
					"trace_id": fmt.Sprintf("%032x", ts.UnixNano()), "span_id": fmt.Sprintf("%016x", ts.UnixNano()),
					"start_time_unix_nano": strconv.FormatInt(ts.UnixNano(), 10),
					"end_time_unix_nano":   strconv.FormatInt(ts.Add(2*time.Millisecond).UnixNano(), 10),
					"status_code":          "1", "resource_attr:service.name": "checkout",
					"resource_attr:k8s.cluster.name": o.cluster, "span_attr:http.method": "GET",
				}
				if o.tenant != "" {
					span["resource_attr:tenant"] = o.tenant
				}
				line, _ = json.Marshal(span)
				spans.Write(append(line, '\n'))
				s.want[folderKey{coldstorage.Traces, tenant, o.cluster, window.Of(ts).String()}]++
			}
		}
	}
	post(t, s.vm.URL+"/api/v1/import/prometheus", "text/plain", &metrics)
	post(t, s.vl.URL+"/insert/jsonline?"+url.Values{"_stream_fields": {"k8s.cluster.name,service.name"}}.Encode(), "application/stream+json", &logs)
	post(t, s.vt.URL+"/insert/jsonline?"+url.Values{"_stream_fields": {"resource_attr:service.name,name"}}.Encode(), "application/stream+json", &spans)
	for _, srv := range []*testproc.Server{s.vm, s.vl, s.vt} {
		flush(t, srv)
	}
}

// folderOf returns the folder of k.
func folderOf(prefix string, k folderKey) string {
	h := window.Of(mustTime(strings.TrimSuffix(k.hour, "Z") + ":00:00Z"))
	return coldstorage.Folder(prefix, k.tenant, k.cluster, h, k.source)
}

// objects returns key → ETag of every object under prefix.
func objects(t testing.TB, b *bucket.Bucket, prefix string) map[string]string {
	t.Helper()
	list, err := b.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range list {
		out[o.Key] = o.ETag
	}
	return out
}
