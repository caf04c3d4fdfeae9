package mgmt

import (
	"testing"

	"kof.dev/kof/chartlib/validate"
)

// TestRenderedObjectsValidate checks every object of every golden case against its upstream API type and
// chartlib/validate's rules (unknown fields, wrong types, duplicates, Flux and KCM invariants).
func TestRenderedObjectsValidate(t *testing.T) {
	for _, gc := range goldenCases(t) {
		t.Run(gc.chart+"/"+gc.name, func(t *testing.T) {
			res := renderChart(t, renderSpec{chart: gc.chart, files: gc.files})
			findings, err := validate.Objects(res.Set)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range findings {
				t.Errorf("%v", f)
			}
		})
	}
}
