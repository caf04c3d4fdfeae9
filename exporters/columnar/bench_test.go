package columnar

import (
	"fmt"
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

// BenchmarkSeriesWriter writes one hour of the realistic shape (8,334 series of 120 samples, 11 labels each, 1M
// samples) into io.Discard and reports the wall and CPU time per sample and the bytes per sample of both files
// together (the write path of the cold-storage exporter without the network).
func BenchmarkSeriesWriter(b *testing.B) {
	series, per := 8334, 120
	if testing.Short() { // make test: once, small
		series = 100
	}
	labels := make([][][2]string, series)
	for s := range labels {
		labels[s] = benchLabels(s)
	}
	ts := make([]int64, per)
	vals := make([]float64, per)
	b.ReportAllocs()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		var samples, seriesOut countingWriter
		w, err := NewSeriesWriter(&samples, &seriesOut, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for s := 0; s < series; s++ {
			if err := w.Series("container_cpu_usage_seconds_total", labels[s]); err != nil {
				b.Fatal(err)
			}
			for j := range ts {
				ts[j] = 1_750_000_000_000 + int64(j)*30_000
				vals[j] = float64(s*per+j) * 0.25
			}
			if err := w.Samples(ts, vals); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(samples.n+seriesOut.n)/float64(series*per), "file-bytes/sample")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*series*per), "ns/sample")
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*series*per), "cpu-ns/sample")
}

// benchLabels returns the 11 labels of series s of the benchmarks' realistic shape (a kubelet cAdvisor series:
// tenant, cluster, namespace, pod, container, node, job, instance, image, id and service).
func benchLabels(s int) [][2]string {
	return [][2]string{
		{"cluster", "bench"}, {"container", fmt.Sprintf("app-%d", s%7)}, {"id", fmt.Sprintf("/kubepods/burstable/pod%08x", s)},
		{"image", fmt.Sprintf("registry.example.com/team/app-%d:v1.%d", s%7, s%3)}, {"instance", fmt.Sprintf("10.0.%d.%d:10250", s/250%250, s%250)},
		{"job", "kubelet"}, {"namespace", fmt.Sprintf("ns-%d", s%20)}, {"node", fmt.Sprintf("node-%d", s%50)},
		{"pod", fmt.Sprintf("app-%d-%08x", s%7, s)}, {"service", "kubelet"}, {"tenant", "bench"},
	}
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
