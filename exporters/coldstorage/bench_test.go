package coldstorage_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/proc"
	"kof.dev/kof/internal/testproc"
)

// The realistic shape of the benchmark: 120 samples per series in the hour (one every 30 s), 11 labels per series
// (tenant, cluster and 9 more); 1M samples are 8,334 series, 5M are 41,667.
const (
	benchPerSeries = 120
	benchStep      = 30_000 // ms
)

// With -short (make test) the sizes are 10k and 50k samples and the gates are off.
//
// BenchmarkExportMetrics exports one hour of 1M and one of 5M samples from a real VictoriaMetrics into a real
// MinIO with the exporter binary (so its peak RSS and CPU time are its own), and reads the same /api/v1/export
// stream into io.Discard in the same run. It prints and reports, for each size, the raw read's and the exporter's
// wall time (best of b.N runs), their ratio (the exporter must reach 0.6 of raw), the exporter's CPU ns per sample,
// the bytes per sample of the files it wrote (at most 10, the previous KOF exporter's) and its peak RSS (the 5M peak
// must stay within 1.2x of the 1M peak). The exporter runs as the chart runs it, with upload parts spilled to a
// scratch folder (SCRATCH_DIR), which each run must leave empty.
func BenchmarkExportMetrics(b *testing.B) {
	vm, minio := testproc.VictoriaMetrics(b), testproc.MinIO(b)
	ctx := context.Background()
	bk, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: "bench", UsePathStyle: true,
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		b.Fatal(err)
	}
	if err := bk.Create(ctx, false); err != nil {
		b.Fatal(err)
	}
	user := testproc.ExporterUser(b, minio, testproc.ColdStorageGuide, "bench") // exactly the user guide's policy
	bin := testproc.ShippedProgram(b, "cold-storage-exporter", "")              // as its image holds it
	scratch := b.TempDir()
	now := time.Now()
	sizes := []struct {
		name      string
		samples   int
		hoursBack int
	}{{"1M", 1_000_000, 3}, {"5M", 5_000_000, 2}}
	bytesPerSample := map[string]float64{}
	if testing.Short() { // `make test` runs every benchmark once, small, to prove it works; the gates are make bench's
		sizes[0].samples, sizes[1].samples = 10_000, 50_000
	}
	peaks := map[string]int64{}
	for _, sz := range sizes {
		h := window.Of(now)
		for i := 0; i < sz.hoursBack; i++ {
			h = h.Prev()
		}
		ingestSamples(b, vm, h, sz.samples)
		b.Run(sz.name, func(b *testing.B) {
			sel := `{__name__!="",tenant="bench",cluster="bench"}`
			var rawBytes int64
			var rawFirst time.Duration // the raw read's first byte, after VictoriaMetrics has found the hour's blocks
			var rawTime, expTime time.Duration
			var expPhases string
			var peak int64
			var cpu, srcRaw, srcExp time.Duration
			for i := 0; i < b.N; i++ {
				src0 := sourceCPU(b, vm)
				start := time.Now()
				fw := &firstWrite{start: start}
				n, err := victoria.Metrics{Endpoint: victoria.Endpoint{Base: vm.URL, HTTP: victoria.NewHTTPClient()}}.Raw(ctx, sel, h, fw)
				if err != nil {
					b.Fatal(err)
				}
				if took := time.Since(start); took < rawTime || rawTime == 0 {
					rawTime, rawFirst = took, fw.first
				}
				rawBytes = n
				src1 := sourceCPU(b, vm)
				cmd := exec.Command(bin)
				cmd.Env = []string{
					"SOURCES=metrics", "METRICS_URL=" + vm.URL, "S3_BUCKET=bench", "S3_ENDPOINT=" + minio.URL,
					"S3_USE_PATH_STYLE=true", "S3_ACCESS_KEY=" + user.AccessKey, "S3_SECRET_KEY=" + user.SecretKey,
					fmt.Sprintf("S3_PREFIX=bench-%s-%d", sz.name, benchRuns.Add(1)), "CATCH_UP_HOURS=1",
					"WINDOW_DELAY=" + window.DelayFor(h, time.Now()).String(), "SCRATCH_DIR=" + scratch,
				}
				var logs strings.Builder
				cmd.Stderr = &logs
				start = time.Now()
				hwm, err := runWatched(cmd)
				if err != nil {
					b.Fatalf("exporter: %v\n%s", err, logs.String())
				}
				if took := time.Since(start); took < expTime || expTime == 0 {
					expTime, expPhases = took, phasesOf(logs.String(), start, start.Add(took))
				}
				src2 := sourceCPU(b, vm)
				srcRaw, srcExp = best(srcRaw, src1-src0), best(srcExp, src2-src1)
				if left, err := os.ReadDir(scratch); err != nil || len(left) != 0 {
					b.Fatalf("scratch folder after the run: %v, %v; want it empty", left, err)
				}
				size, ok := exportedBytes(logs.String(), sz.samples)
				if !ok {
					b.Fatalf("exporter did not export %d rows of window %s:\n%s", sz.samples, h, logs.String())
				}
				bytesPerSample[sz.name] = float64(size) / float64(sz.samples)
				peak = max(peak, hwm)
				cpu = best(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			}
			n := 1.0 // rates of the best run of each (the machine is shared; the best run is the least disturbed)
			expRate := float64(sz.samples) * n / expTime.Seconds()
			rawRate := float64(sz.samples) * n / rawTime.Seconds()
			b.ReportMetric(expRate, "samples/s")
			b.ReportMetric(float64(rawBytes)*n/expTime.Seconds()/1e6, "MB/s")
			b.ReportMetric(rawRate, "raw-samples/s")
			b.ReportMetric(float64(rawBytes)*n/rawTime.Seconds()/1e6, "raw-MB/s")
			b.ReportMetric(expRate/rawRate, "ratio-to-raw")
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(sz.samples), "exporter-cpu-ns/sample")
			b.ReportMetric(bytesPerSample[sz.name], "file-bytes/sample")
			b.ReportMetric(float64(srcRaw.Nanoseconds())/float64(sz.samples), "source-cpu-ns/sample")
			peaks[sz.name] = peak
			fmt.Printf("%s: raw /api/v1/export read %.2f s (%.0f samples/s, %.1f MB/s, VictoriaMetrics CPU %.0f ns/sample); "+
				"exporter %.2f s (%.0f samples/s), CPU %.0f ns/sample (VictoriaMetrics %.0f ns/sample meanwhile), "+
				"%.2f bytes/sample, peak RSS %.1f MiB; ratio exporter/raw %.2f (want >= 0.6)\n",
				sz.name, rawTime.Seconds(), rawRate, float64(rawBytes)/rawTime.Seconds()/1e6,
				float64(srcRaw.Nanoseconds())/float64(sz.samples), expTime.Seconds(), expRate,
				float64(cpu.Nanoseconds())/float64(sz.samples), float64(srcExp.Nanoseconds())/float64(sz.samples),
				bytesPerSample[sz.name], float64(peak)/(1<<20), expRate/rawRate)
			fmt.Printf("%s: raw read's first byte after %.0f ms; exporter run by phase: %s\n", sz.name,
				float64(rawFirst.Microseconds())/1000, expPhases)
			if !testing.Short() && finalRun(b) && expRate/rawRate < 0.6 {
				b.Errorf("exporter at %.0f samples/s is %.2f of the raw read (%.0f samples/s); want at least 0.6", expRate, expRate/rawRate, rawRate)
			}
			if !testing.Short() && finalRun(b) && bytesPerSample[sz.name] > 10 {
				b.Errorf("exporter wrote %.2f bytes/sample; want at most 10", bytesPerSample[sz.name])
			}
		})
	}
	if p1, p5 := peaks["1M"], peaks["5M"]; p1 > 0 && p5 > 0 {
		fmt.Printf("peak RSS: 1M %.1f MiB, 5M %.1f MiB, ratio 5M/1M = %.2f (want <= 1.2)\n", float64(p1)/(1<<20), float64(p5)/(1<<20), float64(p5)/float64(p1))
		if !testing.Short() && float64(p5) > 1.2*float64(p1) {
			b.Errorf("peak RSS at 5M samples %d is more than 1.2x the 1M peak %d", p5, p1)
		}
	}
}

// finalRun reports whether a run of b.N iterations is the one whose figures count. With -benchtime Nx (make bench
// runs 3x) the testing package runs a sub-benchmark with 1 and then N iterations, and a gate that failed the run of
// 1 would stop the run of N, so its best-of-N figures would never be measured; with a duration every run may be the
// last.
func finalRun(b *testing.B) bool {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return true
	}
	if n, ok := strings.CutSuffix(f.Value.String(), "x"); ok {
		if want, err := strconv.Atoi(n); err == nil {
			return b.N >= want
		}
	}
	return true
}

// sourceCPU returns the CPU time VictoriaMetrics vm has used so far. When the CPU is the limit, the raw read takes
// about VictoriaMetrics' CPU over the cores and an export the sum of its and the exporter's, so the exporter reaches
// 0.6 of the raw read only with at most 2/3 of VictoriaMetrics' CPU per sample; the benchmark prints both.
func sourceCPU(b *testing.B, vm *testproc.Server) time.Duration {
	b.Helper()
	d, err := proc.CPUTime(vm.PID())
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// firstWrite discards what is written to it and keeps how long after start the first write came.
type firstWrite struct {
	start time.Time
	first time.Duration
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.first == 0 {
		w.first = time.Since(w.start)
	}
	return len(p), nil
}

// benchRuns numbers the exporter runs of the benchmark, so that each writes its own prefix (the testing package
// calls a sub-benchmark more than once, with growing b.N).
var benchRuns atomic.Int64

// best returns the shorter of two durations, ignoring a zero first one.
func best(cur, d time.Duration) time.Duration {
	if cur == 0 || d < cur {
		return d
	}
	return cur
}

// runWatched runs cmd and returns its peak resident memory: VmHWM of /proc/<pid>/status, read every 2 ms until it
// exits (the rusage of a child started by vfork counts the parent's pages from before exec, so it would report the
// benchmark binary's size).
func runWatched(cmd *exec.Cmd) (int64, error) {
	proc.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if v, err := testproc.ProcessPeakRSS(cmd.Process.Pid); err == nil {
			peak = max(peak, v)
		}
		select {
		case err := <-done:
			return peak, err
		case <-tick.C:
		}
	}
}

// phasesOf returns how the exporter run that started at start and exited at end spent its time, from the times of
// its log lines: start-up (exec, runtime and configuration, to "export started"), lookups (the bucket check, the
// source's partition listing and the folder listing, to "streaming parquet to S3"), the stream (read, encode and
// upload, the commits of both files and `_SUCCESS`, to "window exported") and the way out (to the exit). A line it
// cannot find leaves its phase out.
func phasesOf(logs string, start, end time.Time) string {
	at := map[string]time.Time{}
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &l) == nil {
			if _, seen := at[l.Msg]; !seen {
				at[l.Msg] = l.Time
			}
		}
	}
	marks := []struct{ name, msg string }{{"start-up", "export started"}, {"lookups", "streaming parquet to S3"},
		{"stream, commits and marker", "window exported"}, {"way out", ""}}
	var out []string
	prev := start
	for _, m := range marks {
		t := end
		if m.msg != "" {
			var ok bool
			if t, ok = at[m.msg]; !ok {
				continue
			}
		}
		out = append(out, fmt.Sprintf("%s %.0f ms", m.name, float64(t.Sub(prev).Microseconds())/1000))
		prev = t
	}
	return strings.Join(out, ", ")
}

// exportedBytes returns the size_bytes of the "window exported" log line with rows, and whether there is one.
func exportedBytes(logs string, rows int) (int64, bool) {
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			Msg  string `json:"msg"`
			Rows int    `json:"rows"`
			Size int64  `json:"size_bytes"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "window exported" && l.Rows == rows {
			return l.Size, true
		}
	}
	return 0, false
}

// ingestSamples writes samples of the realistic shape (series of benchPerSeries samples every benchStep from the
// start of hour h, 11 labels each) into VictoriaMetrics through /api/v1/import (JSON lines, one per series).
func ingestSamples(b *testing.B, vm *testproc.Server, h window.Hour, samples int) {
	b.Helper()
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		series := (samples + benchPerSeries - 1) / benchPerSeries
		left := samples
		var line []byte
		for s := 0; s < series; s++ {
			n := min(benchPerSeries, left)
			left -= n
			line = append(line[:0], `{"metric":{"__name__":"container_cpu_usage_seconds_total"`...)
			for _, l := range benchLabels(s) {
				line = append(line, ',')
				line = strconv.AppendQuote(line, l[0])
				line = append(line, ':')
				line = strconv.AppendQuote(line, l[1])
			}
			line = append(line, `},"values":[`...)
			for i := 0; i < n; i++ {
				if i > 0 {
					line = append(line, ',')
				}
				line = strconv.AppendFloat(line, float64(s)*10+float64(i)*0.25, 'f', -1, 64)
			}
			line = append(line, `],"timestamps":[`...)
			for i := 0; i < n; i++ {
				if i > 0 {
					line = append(line, ',')
				}
				line = strconv.AppendInt(line, h.Start.UnixMilli()+int64(i)*benchStep, 10)
			}
			line = append(line, "]}\n"...)
			if _, err := w.Write(line); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	resp, err := http.Post(vm.URL+"/api/v1/import", "application/json", pr) //nolint:noctx // loopback
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	flush(b, vm)
}

// benchLabels returns the 11 labels of series s (a kubelet cAdvisor series).
func benchLabels(s int) [][2]string {
	return [][2]string{
		{"tenant", "bench"}, {"cluster", "bench"}, {"container", fmt.Sprintf("app-%d", s%7)},
		{"id", fmt.Sprintf("/kubepods/burstable/pod%08x", s)}, {"image", fmt.Sprintf("registry.example.com/team/app-%d:v1.%d", s%7, s%3)},
		{"instance", fmt.Sprintf("10.0.%d.%d:10250", s/250%250, s%250)}, {"job", "kubelet"}, {"namespace", fmt.Sprintf("ns-%d", s%20)},
		{"node", fmt.Sprintf("node-%d", s%50)}, {"pod", fmt.Sprintf("app-%d-%08x", s%7, s)}, {"service", "kubelet"},
	}
}
