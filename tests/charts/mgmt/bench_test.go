package mgmt

import (
	"context"
	"testing"

	"kof.dev/kof/chartlib/render"
)

// benchmarkRender renders chart with its defaults b.N times from one loaded chart.
func benchmarkRender(b *testing.B, chart string) {
	loaded, err := render.Load(chartDir(chart))
	if err != nil {
		b.Fatal(err)
	}
	opts := renderSpec{chart: chart}.options()
	opts.Chart = loaded
	b.ReportAllocs()
	for b.Loop() {
		set, err := render.Chart(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if set.Len() == 0 {
			b.Fatalf("%s rendered no object", chart)
		}
	}
}

// BenchmarkRenderUmbrella measures one render of the kof umbrella with its defaults.
func BenchmarkRenderUmbrella(b *testing.B) { benchmarkRender(b, "kof") }

// BenchmarkRenderMothership measures one render of kof-mothership with its defaults (the largest chart here).
func BenchmarkRenderMothership(b *testing.B) { benchmarkRender(b, "kof-mothership") }
