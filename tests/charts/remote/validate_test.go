package remote

import (
	"testing"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/validate"
)

// checkValid validates every object of res against its upstream API schema and the render rules of
// chartlib/validate, reporting each finding.
func checkValid(t testing.TB, what string, res *render.Result) {
	t.Helper()
	findings, err := validate.Objects(res.Set)
	if err != nil {
		t.Fatalf("validate %s: %v", what, err)
	}
	for _, f := range findings {
		t.Errorf("%s: %s", what, f)
	}
}

// TestObjectsValidate validates the objects of every chart case and of every layer-2 service render.
func TestObjectsValidate(t *testing.T) {
	for _, chart := range remoteCharts {
		checkValid(t, chart+" defaults", renderChart(t, renderSpec{chart: chart}))
		for _, f := range ciFiles(t, chart) {
			checkValid(t, chart+" "+caseName(f), renderChart(t, renderSpec{chart: chart, files: []string{f}}))
		}
	}
}
