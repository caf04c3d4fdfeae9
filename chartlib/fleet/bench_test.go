package fleet

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/validate"
)

// benchSize returns the size of the benchmark fleet besides the management cluster: 10 regional and 200 child
// clusters, or 2 and 4 with -short (make test runs every benchmark once, small, to prove it works).
func benchSize() (regionals, children int) {
	if testing.Short() {
		return 2, 4
	}
	return 10, 200
}

// benchClusters returns the benchmark fleet's inputs: regionals r0…r9, each in its own AWS region, and children
// c0…c199 spread over them, half bound by region and half by the regional-cluster-name label.
func benchClusters() []*unstructured.Unstructured {
	benchRegionals, benchChildren := benchSize()
	objs := []*unstructured.Unstructured{clusterTemplate("aws-standalone")}
	for i := range benchRegionals {
		objs = append(objs, regional(fmt.Sprintf("r%d", i), fmt.Sprintf("region-%d", i)))
	}
	for i := range benchChildren {
		r := i % benchRegionals
		var labels map[string]string
		if i%2 == 1 {
			labels = map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": fmt.Sprintf("r%d", r)}
		}
		objs = append(objs, child(fmt.Sprintf("c%d", i), fmt.Sprintf("region-%d", r), labels))
	}
	return objs
}

// BenchmarkFleet renders the default umbrella for 1 management + 10 regional + 200 child clusters, as `kof render`
// does: every KOF chart rendered with the Helm SDK (1 umbrella, 4 management releases, 3 charts per regional and
// 2 per child cluster: 435 chart renders), layer 2 for every service, every object validated.
func BenchmarkFleet(b *testing.B) {
	v, err := validate.New()
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{ChartsDir: chartsDir, Clusters: benchClusters(), Validator: v}
	b.ReportAllocs()
	renders := 0
	cpu := cpuTime(b)
	for b.Loop() {
		f, err := Render(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		renders = localRenders(f)
		if nr, nc := benchSize(); len(f.Clusters) != 1+nr+nc {
			b.Fatalf("rendered %d clusters, want %d", len(f.Clusters), 1+nr+nc)
		}
		if f.Failed() {
			for _, c := range f.Clusters {
				if c.Failed() {
					b.Fatalf("cluster %s failed: %v", c.Name, c.Problems())
				}
			}
		}
	}
	b.ReportMetric(float64(renders), "renders/op")
	reportCPU(b, cpu)
}

// cpuTime returns the user and system CPU time used so far by this process and its waited-for children (getrusage),
// a measure that, unlike wall time, does not grow when other work shares the machine.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatalf("getrusage: %v", err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// reportCPU reports the CPU seconds per iteration used since start (see cpuTime) as the metric cpu-s/op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime(b)-start).Seconds()/float64(b.N), "cpu-s/op")
}

// localRenders returns the number of chart renders of f (chartRender).
// chartRender reports whether s is a render of a KOF chart (what `helm template` can do too): a local service that is
// neither plain resources (no chart) nor the operator's outputs.
func chartRender(s *Service) bool { return s.Local && !s.Resources && s.Name != OperatorOutputs }

func localRenders(f *Fleet) int {
	n := 0
	for _, c := range f.Clusters {
		for _, s := range c.Services {
			if chartRender(s) {
				n++
			}
		}
	}
	return n
}
