package remote

import (
	"testing"

	"kof.dev/kof/chartlib/sveltos"
)

// BenchmarkChildLayer2 measures layer 2 of the child MCS for one cluster (both services, double pass): the cost
// Sveltos pays per child cluster and per change of its inputs.
func BenchmarkChildLayer2(b *testing.B) {
	mcs := mcsNamed(b, renderChart(b, renderSpec{chart: "kof-child"}), "kof-child-cluster")
	cds := loadObjects(b, "clusters/standard.yaml")
	objects := childFixtures(cds, "regional-1", "regional-1.kof.example.com", "child-1")
	cluster := capiCluster(b, deployment(b, cds, "child-1"))
	b.ResetTimer()
	for b.Loop() {
		if _, err := instantiate(b, mcs, cluster, objects, sveltos.DoublePass); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRegionalLayer2 measures layer 2 of the regional MCS for one cluster (six services, double pass).
func BenchmarkRegionalLayer2(b *testing.B) {
	mcs := mcsNamed(b, renderChart(b, renderSpec{chart: "kof-regional"}), "kof-regional-cluster")
	cds := loadObjects(b, "clusters/standard.yaml")
	objects := regionalFixtures(b, cds)
	cluster := capiCluster(b, deployment(b, cds, "regional-1"))
	b.ResetTimer()
	for b.Loop() {
		if _, err := instantiate(b, mcs, cluster, objects, sveltos.DoublePass); err != nil {
			b.Fatal(err)
		}
	}
}
