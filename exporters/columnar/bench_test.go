package columnar

import (
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the user and system CPU time the process has used so far (0 where getrusage is missing), so
// that the write path's cost per sample can be read apart from the load of a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMetricWriter writes 1,000 series of 1,000 samples with five labels each into io.Discard and reports
// the wall and CPU time per sample and the file bytes per sample (the write path of the cold-storage exporter
// without the network).
func BenchmarkMetricWriter(b *testing.B) {
	series, per := 1000, 1000
	if testing.Short() { // make test: once, small
		series, per = 20, 50
	}
	labels := make([][][2]string, series)
	for s := range labels {
		labels[s] = [][2]string{{"cluster", "bench"}, {"container", "app"}, {"namespace", fmt.Sprintf("ns-%d", s%20)},
			{"pod", fmt.Sprintf("pod-%d", s)}, {"tenant", "bench"}}
	}
	b.ReportAllocs()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		w, err := NewMetricWriter(io.Discard, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for s := 0; s < series; s++ {
			if err := w.Series("container_cpu_usage_seconds_total", labels[s]); err != nil {
				b.Fatal(err)
			}
			for j := 0; j < per; j++ {
				if err := w.Sample(1_750_000_000_000+int64(j)*3600, float64(j)*0.25); err != nil {
					b.Fatal(err)
				}
			}
		}
		sum, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Bytes)/float64(series*per), "file-bytes/sample")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*series*per), "ns/sample")
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*series*per), "cpu-ns/sample")
}
