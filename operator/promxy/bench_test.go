package promxy

import (
	"fmt"
	"testing"
)

// BenchmarkRender renders the config of 1,000 server groups with basic auth, the size of a large fleet's regionals.
func BenchmarkRender(b *testing.B) {
	groups := make([]Group, 1000)
	for i := range groups {
		groups[i] = regional(fmt.Sprintf("ns%d", i%20), fmt.Sprintf("psg-%d", i), fmt.Sprintf("r%d", i))
	}
	opts := Options{AlertmanagerURL: "http://alertmanager:9093", RemoteWriteURL: "http://vminsert:8480/api/v1/write"}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		out, err := Render(opts, groups)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/config")
}
