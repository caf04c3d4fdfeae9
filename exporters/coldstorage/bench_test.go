package coldstorage_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// benchSeries is the number of series of the benchmark; each holds samples/benchSeries samples in its hour.
const benchSeries = 1000

// With -short (make test) the sizes are 10k and 50k samples and the gates are off.
//
// BenchmarkExportMetrics exports one hour of 1M and one of 5M samples from a real VictoriaMetrics into a real
// MinIO with the exporter binary (so its peak RSS is its own), and reads the same /api/v1/export stream into
// io.Discard in the same run. It reports the exporter's samples/s and MB/s of export stream, the raw read's, their
// ratio (the exporter must reach 0.6 of raw), each from the best of b.N runs, and the exporter's peak RSS at each size (the 5M peak must stay
// within 1.2x of the 1M peak).
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
	bin := filepath.Join(b.TempDir(), "cold-storage-exporter")
	build := exec.Command("go", "build", "-o", bin, "kof.dev/kof/cmd/cold-storage-exporter")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	now := time.Now()
	sizes := []struct {
		name      string
		samples   int
		hoursBack int
	}{{"1M", 1_000_000, 3}, {"5M", 5_000_000, 2}}
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
			var rawTime, expTime time.Duration
			var peak int64
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				n, err := victoria.Metrics{Endpoint: victoria.Endpoint{Base: vm.URL, HTTP: victoria.NewHTTPClient()}}.Raw(ctx, sel, h, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				rawTime = best(rawTime, time.Since(start))
				rawBytes = n
				cmd := exec.Command(bin)
				cmd.Env = []string{
					"SOURCES=metrics", "METRICS_URL=" + vm.URL, "S3_BUCKET=bench", "S3_ENDPOINT=" + minio.URL,
					"S3_USE_PATH_STYLE=true", "S3_ACCESS_KEY=" + testproc.MinIOAccessKey, "S3_SECRET_KEY=" + testproc.MinIOSecretKey,
					fmt.Sprintf("S3_PREFIX=bench-%s-%d", sz.name, i), "CATCH_UP_HOURS=1",
					fmt.Sprintf("WINDOW_DELAY=%dh", sz.hoursBack-1),
				}
				var logs strings.Builder
				cmd.Stderr = &logs
				start = time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("exporter: %v\n%s", err, logs.String())
				}
				expTime = best(expTime, time.Since(start))
				if !strings.Contains(logs.String(), fmt.Sprintf(`"rows":%d`, sz.samples)) {
					b.Fatalf("exporter did not export %d rows of window %s:\n%s", sz.samples, h, logs.String())
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss<<10 > peak {
					peak = ru.Maxrss << 10
				}
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
			peaks[sz.name] = peak
			fmt.Printf("%s: exporter %.0f samples/s %.1f MB/s (CPU %.0f ns/sample), raw %.0f samples/s %.1f MB/s, ratio %.2f, peak RSS %.1f MiB\n",
				sz.name, expRate, float64(rawBytes)/expTime.Seconds()/1e6, float64(cpu.Nanoseconds())/float64(sz.samples),
				rawRate, float64(rawBytes)/rawTime.Seconds()/1e6, expRate/rawRate, float64(peak)/(1<<20))
			if !testing.Short() && expRate/rawRate < 0.6 {
				b.Errorf("exporter at %.0f samples/s is %.2f of the raw read (%.0f samples/s); want at least 0.6", expRate, expRate/rawRate, rawRate)
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

// best returns the shorter of two durations, ignoring a zero first one.
func best(cur, d time.Duration) time.Duration {
	if cur == 0 || d < cur {
		return d
	}
	return cur
}

// ingestSamples writes samples spread over benchSeries series evenly through hour h into VictoriaMetrics,
// streaming the Prometheus text.
func ingestSamples(b *testing.B, vm *testproc.Server, h window.Hour, samples int) {
	b.Helper()
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		per := samples / benchSeries
		step := int64(time.Hour/time.Millisecond) / int64(per)
		var line []byte
		for s := 0; s < benchSeries; s++ {
			prefix := fmt.Sprintf(`container_cpu_usage_seconds_total{tenant="bench",cluster="bench",namespace="ns-%d",pod="pod-%d",container="app"} `, s%20, s)
			for i := 0; i < per; i++ {
				line = append(line[:0], prefix...)
				line = strconv.AppendFloat(line, float64(i)*0.25, 'f', -1, 64)
				line = append(line, ' ')
				line = strconv.AppendInt(line, h.Start.UnixMilli()+int64(i)*step, 10)
				line = append(line, '\n')
				if _, err := w.Write(line); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	resp, err := http.Post(vm.URL+"/api/v1/import/prometheus", "text/plain", pr) //nolint:noctx // loopback
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	flush(b, vm)
}
