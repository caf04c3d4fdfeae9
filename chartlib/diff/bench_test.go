package diff

import (
	"context"
	"syscall"
	"testing"
	"time"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/validate"
)

// benchValues is the new side's umbrella values of BenchmarkDiff: version bumps of two third-party charts, one
// every regional cluster gets (cert-manager) and one every child gets (the OpenTelemetry operator), so that every
// cluster changes.
const benchValues = `catalog:
  cert-manager:
    version: v1.19.2
  opentelemetry-operator:
    version: 0.99.1
`

// BenchmarkDiff runs `kof diff` over the scenario fleet (1 management + 10 regional + 200 child clusters, as
// chartlib/fleet's BenchmarkFleet): both sides rendered from the repository's charts, the new one with
// benchValues, and compared. ci/bench.sh compares it with BenchmarkRenderFleet of the same run (target: at most 2x).
func BenchmarkDiff(b *testing.B) {
	clusters := benchClusters(b)
	values := writeValues(b, benchValues)
	src := Source{Dir: chartsDir}
	opts := Options{Old: Side{Charts: src}, New: Side{Charts: src, ValuesFiles: []string{values}},
		Fleet: fleet.Options{Clusters: clusters}}
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		r, err := Run(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if nr, nc := benchSize(); r.Summary.Clusters != 1+nr+nc || r.ExitCode() != ExitChanges {
			b.Fatalf("diff of %d clusters with exit %d, want %d clusters with changes", r.Summary.Clusters,
				r.ExitCode(), 1+nr+nc)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkRenderFleet is the baseline of BenchmarkDiff: one `kof render` of the same fleet (every object validated,
// as `kof render` does).
func BenchmarkRenderFleet(b *testing.B) {
	v, err := validate.New()
	if err != nil {
		b.Fatal(err)
	}
	opts := fleet.Options{ChartsDir: chartsDir, Clusters: benchClusters(b), Validator: v}
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		f, err := fleet.Render(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if f.Failed() {
			b.Fatal("the benchmark fleet fails to render")
		}
	}
	reportCPU(b, cpu)
}

// cpuTime returns the user and system CPU time this process has used (getrusage), a measure that, unlike wall
// time, does not grow when other work shares the machine.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU seconds per iteration used since start as the metric cpu-s/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime(b)-start).Seconds()/float64(b.N), "cpu-s/op")
}
