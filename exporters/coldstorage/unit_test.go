package coldstorage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
)

func TestFolder(t *testing.T) {
	h := window.Of(time.Date(2026, 6, 29, 17, 30, 0, 0, time.UTC))
	got := Folder("telemetry", "default", "mothership", h, Metrics) + SamplesName
	want := "telemetry/tenant=default/cluster=mothership/dt=2026-06-29/hour=17/metrics/samples.parquet"
	if got != want {
		t.Errorf("key = %s, want %s (the user guide's example)", got, want)
	}
	if got := Folder("", "a/b c=d", "x", h, Logs); !strings.HasPrefix(got, "tenant=a%2Fb%20c%3Dd/cluster=x/") {
		t.Errorf("Folder = %s; a value must never add a folder level", got)
	}
}

func TestGroupMapsMissingValues(t *testing.T) {
	got := group(map[string][]string{"": {"c1", ""}, "default": {"c1"}, "acme": {"child", "child-adopted"}})
	want := []Partition{
		{Tenant: "acme", Cluster: "child", TenantValues: []string{"acme"}, ClusterValues: []string{"child"}},
		{Tenant: "acme", Cluster: "child-adopted", TenantValues: []string{"acme"}, ClusterValues: []string{"child-adopted"}},
		{Tenant: "default", Cluster: "c1", TenantValues: []string{"", "default"}, ClusterValues: []string{"c1"}},
		{Tenant: "default", Cluster: "unknown", TenantValues: []string{""}, ClusterValues: []string{""}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("group (-want +got):\n%s", d)
	}
}

func TestSelectorsAreExact(t *testing.T) {
	if got := (labelMatch{"cluster", []string{"child"}}).String(); got != `cluster="child"` {
		t.Errorf("matcher = %s", got)
	}
	if got := (labelMatch{"tenant", []string{"", "a.b"}}).String(); got != `tenant=~"(?:|a\\.b)"` {
		t.Errorf("matcher of two values = %s", got)
	}
	// A selector holds `__name__!=""` only when no other matcher needs the label to be set (PromQL's rule).
	for _, c := range []struct {
		in   []labelMatch
		want string
	}{
		{[]labelMatch{{"tenant", []string{"acme"}}, {"cluster", []string{"", "c1"}}}, `{tenant="acme",cluster=~"(?:|c1)"}`},
		{[]labelMatch{{"tenant", []string{""}}, {"cluster", []string{"c1", "c2"}}}, `{tenant="",cluster=~"(?:c1|c2)"}`},
		{[]labelMatch{{"tenant", []string{""}}, {"cluster", []string{""}}}, `{__name__!="",tenant="",cluster=""}`},
		{[]labelMatch{{"tenant", []string{"", "acme"}}}, `{__name__!="",tenant=~"(?:|acme)"}`},
	} {
		if got := selector(c.in...); got != c.want {
			t.Errorf("selector(%v) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := filter("k8s.cluster.name", []string{"child"}); got != `"k8s.cluster.name":="child"` {
		t.Errorf("filter = %s; a phrase filter would also match child-adopted", got)
	}
	if got := filter("tenant", []string{"", "default"}); got != `("tenant":="" or "tenant":="default")` {
		t.Errorf("filter of two values = %s", got)
	}
	h := window.Of(time.Date(2026, 6, 29, 17, 0, 0, 0, time.UTC))
	if got := victoria.TimeFilter(h); got != "_time:[2026-06-29T17:00:00Z, 2026-06-29T18:00:00Z)" {
		t.Errorf("TimeFilter = %s; want half-open", got)
	}
}

func TestStreamFields(t *testing.T) {
	got := StreamFields(`{k8s.cluster.name="a,b",service.name="x\"}y"}`)
	if d := cmp.Diff(map[string]bool{"k8s.cluster.name": true, "service.name": true}, got); d != "" {
		t.Errorf("StreamFields (-want +got):\n%s", d)
	}
	if got := StreamFields("garbage"); len(got) != 0 {
		t.Errorf("StreamFields(garbage) = %v, want none", got)
	}
}

func FuzzStreamFields(f *testing.F) {
	for _, s := range []string{`{a="b"}`, `{a="b\"",c="d"}`, `{`, `{=}`, `{a=}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _ = StreamFields(s) })
}

func TestFromEnvErrors(t *testing.T) {
	env := map[string]string{
		EnvSources: "metrics,metric", EnvMetricsURL: "vmselect:8481", EnvWindowDelay: "soon", EnvCatchUpHours: "0",
		EnvS3UsePathStyle: "yes please",
	}
	_, err := FromEnv(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{`SOURCES: unknown source "metric"`, `METRICS_URL "vmselect:8481"`, `WINDOW_DELAY "soon"`,
		`CATCH_UP_HOURS "0"`, `S3_USE_PATH_STYLE "yes please"`, "s3.bucket: required"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}

func TestLogAndSpanRows(t *testing.T) {
	rec := &victoria.Record{Fields: []victoria.Label{
		{Name: "_time", Value: "2026-06-29T17:00:00.123456789Z"}, {Name: "_msg", Value: "hello"},
		{Name: "_stream", Value: `{k8s.cluster.name="c",service.name="api"}`}, {Name: "k8s.cluster.name", Value: "c"},
		{Name: "service.name", Value: "api"}, {Name: "severity", Value: "WARN"}, {Name: "tenant", Value: "t"},
	}}
	row, err := LogOf(rec)
	if err != nil || row.Timestamp.Nanosecond() != 123456789 || row.Body != "hello" || row.SeverityText != "WARN" ||
		row.ServiceName != "api" || row.ResourceAttributes["k8s.cluster.name"] != "c" || row.LogAttributes["tenant"] != "t" ||
		len(row.ResourceAttributes) != 2 || len(row.LogAttributes) != 1 {
		t.Errorf("LogOf = %+v, %v", row, err)
	}
	if _, err := LogOf(&victoria.Record{Fields: []victoria.Label{{Name: "_time", Value: "yesterday"}}}); err == nil || !strings.Contains(err.Error(), "_time") {
		t.Errorf("bad _time: %v; want an error naming the field", err)
	}
	span, err := SpanOf(&victoria.Record{Fields: []victoria.Label{
		{Name: "start_time_unix_nano", Value: "1000"}, {Name: "end_time_unix_nano", Value: "4000"},
		{Name: "resource_attr:service.name", Value: "svc"}, {Name: "span_attr:k", Value: "v"}, {Name: "event:0:name", Value: "e"},
		{Name: "name", Value: "op"},
	}})
	if err != nil || span.DurationNanos != 3000 || span.ServiceName != "svc" || span.SpanAttributes["k"] != "v" ||
		span.ExtraFields["event:0:name"] != "e" || span.SpanName != "op" {
		t.Errorf("SpanOf = %+v, %v", span, err)
	}
}

// TestNewScratchDir checks that New removes the part files a crashed run left in SCRATCH_DIR and logs how many,
// and that a missing scratch folder is a configuration error naming the variable, the folder and the fix.
func TestNewScratchDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kof-part-1234"), []byte("part of a killed run"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvSources: "metrics", EnvMetricsURL: "http://vmselect:8481/select/0/prometheus",
		EnvS3Bucket: "kof-cold", EnvScratchDir: dir}
	cfg, err := FromEnv(func(k string) string { return env[k] })
	if err != nil || cfg.ScratchDir != dir {
		t.Fatalf("FromEnv: scratch folder %q, %v; want %q", cfg.ScratchDir, err, dir)
	}
	var logs strings.Builder
	if _, err := New(cfg, Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("scratch folder holds %v after New; want the leftover removed", left)
	}
	if !strings.Contains(logs.String(), `"msg":"`+msgLeftovers+`","folder":"`+dir+`","files":1`) {
		t.Errorf("log lacks the removed leftover:\n%s", logs.String())
	}
	cfg.ScratchDir = filepath.Join(dir, "missing")
	_, err = New(cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "SCRATCH_DIR: scratch folder "+cfg.ScratchDir) ||
		!strings.Contains(err.Error(), "mount a writable volume there") {
		t.Errorf("missing scratch folder: error %v; want one naming SCRATCH_DIR, the folder and the fix", err)
	}
}

// The clusters of many tenants are looked up lookups at a time (each lookup of one tenant is a search of its series),
// with the same partitions as one after the other, and a failed lookup fails the listing naming its URL.
func TestPartitionsLookUpTenantsAtOnce(t *testing.T) {
	var inFlight, most atomic.Int64
	tenants := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		match := r.URL.Query().Get("match[]")
		var vals []string
		switch {
		case r.URL.Path == "/api/v1/label/tenant/values":
			vals = tenants
		case r.URL.Path == "/api/v1/label/cluster/values":
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(30 * time.Millisecond)
			t := strings.TrimSuffix(strings.TrimPrefix(match, `{tenant="`), `"}`)
			if t == "t5" && failT5.Load() {
				http.Error(w, "storage is unavailable", http.StatusServiceUnavailable)
				return
			}
			vals = []string{t + "-a", t + "-b"}
		case strings.Contains(match, `tenant="t3",cluster=""`): // t3 has series without a cluster
			vals = []string{"up"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": vals})
	}))
	defer srv.Close()
	m := metricsReader{api: victoria.Metrics{Endpoint: victoria.Endpoint{Base: srv.URL, HTTP: srv.Client()}},
		sel: Selection{Tenant: "tenant", Cluster: "cluster"}}
	h := window.Of(time.Date(2026, 6, 29, 17, 30, 0, 0, time.UTC))
	got, err := m.partitions(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	var want []Partition
	for _, tn := range tenants {
		if tn == "t3" {
			want = append(want, Partition{Tenant: tn, Cluster: UnknownCluster, TenantValues: []string{tn}, ClusterValues: []string{""}})
		}
		for _, c := range []string{tn + "-a", tn + "-b"} {
			want = append(want, Partition{Tenant: tn, Cluster: c, TenantValues: []string{tn}, ClusterValues: []string{c}})
		}
	}
	slices.SortFunc(want, func(a, b Partition) int { return strings.Compare(a.Tenant+"/"+a.Cluster, b.Tenant+"/"+b.Cluster) })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("partitions (-want +got):\n%s", d)
	}
	if n := most.Load(); n != lookups {
		t.Errorf("at most %d cluster lookups ran at once, want %d (8 tenants, each lookup 30 ms)", n, lookups)
	}
	failT5.Store(true)
	defer failT5.Store(false)
	if _, err := m.partitions(context.Background(), h); err == nil || !strings.Contains(err.Error(), "/api/v1/label/cluster/values") {
		t.Errorf("a failed cluster lookup of one tenant: error %v, want one naming the lookup's URL", err)
	}
}

// An hour of one tenant is listed in one round of lookups without a selector: the clusters of every series are the
// tenant's, so no search of the tenant's series is sent. The same holds when no series has a tenant. With two tenants
// each tenant's clusters are looked up with its selector.
func TestPartitionsOfOneTenantWithoutSearch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tenants  []string // values of the tenant label
		noTenant bool     // some series lack the tenant label
		want     []Partition
		searches int // cluster lookups with a tenant selector
	}{
		{name: "one tenant", tenants: []string{"acme"}, want: []Partition{
			{Tenant: "acme", Cluster: "c1", TenantValues: []string{"acme"}, ClusterValues: []string{"c1"}},
			{Tenant: "acme", Cluster: "c2", TenantValues: []string{"acme"}, ClusterValues: []string{"c2"}},
			{Tenant: "acme", Cluster: UnknownCluster, TenantValues: []string{"acme"}, ClusterValues: []string{""}},
		}},
		{name: "no tenant label", noTenant: true, want: []Partition{
			{Tenant: DefaultTenant, Cluster: "c1", TenantValues: []string{""}, ClusterValues: []string{"c1"}},
			{Tenant: DefaultTenant, Cluster: "c2", TenantValues: []string{""}, ClusterValues: []string{"c2"}},
			{Tenant: DefaultTenant, Cluster: UnknownCluster, TenantValues: []string{""}, ClusterValues: []string{""}},
		}},
		{name: "a tenant and series without one", tenants: []string{"acme"}, noTenant: true, searches: 2, want: []Partition{
			{Tenant: "acme", Cluster: "acme-c", TenantValues: []string{"acme"}, ClusterValues: []string{"acme-c"}},
			{Tenant: DefaultTenant, Cluster: "-c", TenantValues: []string{""}, ClusterValues: []string{"-c"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var searches atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				match := r.URL.Query().Get("match[]")
				var vals []string
				switch {
				case r.URL.Path == "/api/v1/label/tenant/values" && match == "":
					vals = tc.tenants
				case r.URL.Path == "/api/v1/label/cluster/values" && match == "":
					vals = []string{"c1", "c2"}
				case r.URL.Path == "/api/v1/label/cluster/values":
					searches.Add(1)
					tenant := strings.TrimSuffix(strings.TrimPrefix(match, `{tenant="`), `"}`)
					if strings.HasPrefix(match, `{tenant=~`) || strings.Contains(match, `tenant=""`) {
						tenant = ""
					}
					vals = []string{tenant + "-c"}
				case match == `{__name__!="",tenant=""}` && tc.noTenant:
					vals = []string{"up"}
				case match == `{__name__!="",cluster=""}`: // the hour's series without a cluster (only the first two cases read it)
					vals = []string{"up"}
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": vals})
			}))
			defer srv.Close()
			m := metricsReader{api: victoria.Metrics{Endpoint: victoria.Endpoint{Base: srv.URL, HTTP: srv.Client()}},
				sel: Selection{Tenant: "tenant", Cluster: "cluster"}}
			got, err := m.partitions(context.Background(), window.Of(time.Date(2026, 6, 29, 17, 30, 0, 0, time.UTC)))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("partitions (-want +got):\n%s", d)
			}
			if n := searches.Load(); n != int64(tc.searches) {
				t.Errorf("%d cluster lookups with a tenant selector, want %d", n, tc.searches)
			}
		})
	}
}

// failT5 makes the fake source of TestPartitionsLookUpTenantsAtOnce fail the cluster lookup of tenant t5.
var failT5 atomic.Bool

// When S3 cannot be reached, every window of every source fails with the bucket's error and one "S3 unreachable"
// line, and no window is exported from the source, although the bucket is checked while the first window is listed.
func TestBucketDownFailsEveryWindow(t *testing.T) {
	var exports atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/export" {
			exports.Add(1)
			return
		}
		var vals []string
		switch r.URL.Path {
		case "/api/v1/label/tenant/values":
			vals = []string{"t"}
		case "/api/v1/label/cluster/values":
			vals = []string{"c"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": vals})
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler()) // a loopback port that refuses connections once closed
	s3URL := closed.URL
	closed.Close()
	env := map[string]string{EnvSources: "metrics", EnvMetricsURL: srv.URL, EnvS3Bucket: "kof-cold",
		EnvS3Endpoint: s3URL, EnvS3UsePathStyle: "true", bucket.EnvAccessKey: "k", bucket.EnvSecretKey: "s"}
	cfg, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	e, err := New(cfg, Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 29, 17, 30, 0, 0, time.UTC)
	ws := []window.Hour{window.Of(now).Prev().Prev(), window.Of(now).Prev()}
	res := e.RunWindows(context.Background(), ws)
	if len(res.Failed) != len(ws) || res.Exported+res.Skipped+res.Empty != 0 {
		t.Fatalf("result %+v; want both windows failed", res)
	}
	for i, f := range res.Failed {
		if f.Window != ws[i] || f.Source != Metrics || f.Tenant != "" || !strings.Contains(f.Err.Error(), "HEAD "+s3URL) {
			t.Errorf("failure %d: %v; want window %s failed by the bucket check", i, f, ws[i])
		}
	}
	if n := strings.Count(logs.String(), `"msg":"`+msgBucketDown+`"`); n != 1 {
		t.Errorf("%d %q lines, want 1:\n%s", n, msgBucketDown, logs.String())
	}
	if n := exports.Load(); n != 0 {
		t.Errorf("%d exports from the source while S3 was unreachable, want none", n)
	}
}

// TestWriteKeepsEveryLinesLabels streams an export of many short series (more lines than a batch's pairs hold at
// first, and more batches than circulate, so pairs grow and are reused) with 0 to 15 labels each through
// metricsReader.write, and reads both files back: every series must keep exactly its own labels and samples.
func TestWriteKeepsEveryLinesLabels(t *testing.T) {
	h := window.Of(time.Date(2026, 6, 29, 17, 30, 0, 0, time.UTC))
	const series = 20_000
	type want struct {
		labels  map[string]string
		samples int
	}
	wants := map[int64]want{}
	var body strings.Builder
	for s := range series {
		labels := map[string]string{}
		var pairs [][2]string
		var metric strings.Builder
		name := "m"
		if s%16 == 0 {
			name = fmt.Sprintf("bare%d", s) // no labels: a name of its own
		}
		fmt.Fprintf(&metric, `{"__name__":%q`, name)
		for l := range s % 16 {
			label, value := fmt.Sprintf("l%02d", l), fmt.Sprintf("s%d-l%d", s, l)
			labels[label] = value
			pairs = append(pairs, [2]string{label, value})
			fmt.Fprintf(&metric, `,%q:%q`, label, value)
		}
		metric.WriteString("}")
		n := 1 + s%3
		var vals, times []string
		for i := range n {
			vals = append(vals, fmt.Sprint(s*10+i))
			times = append(times, fmt.Sprint(h.Start.UnixMilli()+int64(i)*1000))
		}
		fmt.Fprintf(&body, `{"metric":%s,"values":[%s],"timestamps":[%s]}`+"\n", metric.String(), strings.Join(vals, ","), strings.Join(times, ","))
		id := columnar.SeriesID(name, pairs)
		wants[id] = want{labels: labels, samples: n}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, body.String())
	}))
	defer srv.Close()
	m := metricsReader{api: victoria.Metrics{Endpoint: victoria.Endpoint{Base: srv.URL, HTTP: srv.Client()}},
		sel: Selection{Tenant: "tenant", Cluster: "cluster"}}
	var samples, seriesFile bytes.Buffer
	wr, err := m.write(context.Background(), Partition{Tenant: DefaultTenant, Cluster: UnknownCluster, TenantValues: []string{""}, ClusterValues: []string{""}},
		h, []io.Writer{&samples, &seriesFile}, columnar.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if wr.series != series {
		t.Fatalf("wrote %d series, want %d", wr.series, series)
	}
	rows, err := parquet.Read[columnar.SeriesRow](bytes.NewReader(seriesFile.Bytes()), int64(seriesFile.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		w, ok := wants[r.SeriesID]
		if !ok {
			t.Fatalf("series row %d %v: no such series", r.SeriesID, r.Labels)
		}
		if len(r.Labels) != len(w.labels) || !maps.Equal(r.Labels, w.labels) && len(w.labels) > 0 {
			t.Fatalf("series %d: labels %v, want %v", r.SeriesID, r.Labels, w.labels)
		}
	}
	got, err := parquet.Read[columnar.SampleRow](bytes.NewReader(samples.Bytes()), int64(samples.Len()))
	if err != nil {
		t.Fatal(err)
	}
	count := map[int64]int{}
	for _, r := range got {
		count[r.SeriesID]++
	}
	for id, w := range wants {
		if count[id] != w.samples {
			t.Fatalf("series %d %v: %d samples, want %d", id, w.labels, count[id], w.samples)
		}
	}
}
