package mgmt

import (
	"os"
	"testing"
)

// TestUmbrellaValuesFitComponents renders, for the umbrella's defaults and every umbrella ci/ file and scenario
// input, each KOF component chart with the values of its HelmRelease, as Flux would: every component must accept
// the injected shared keys (its values.schema.json) and render. Rendering is lenient, as in helm-controller.
func TestUmbrellaValuesFitComponents(t *testing.T) {
	inputs := map[string][]string{"defaults": nil}
	for _, gc := range goldenCases(t) {
		if gc.chart == "kof" && gc.name != "defaults" {
			inputs[gc.name] = gc.files
		}
	}
	for _, s := range []string{"01-regional-child", "02-regionless", "03-regionless-selfsigned", "05-m2m", "06-m2m-non-k0s", "07-m2m-storage-overrides", "08-m2r", "10-third-party-cloudwatch", "13-audit-cluster-disabled"} {
		inputs["scenario-"+s] = []string{scenario(s)}
	}
	for name, files := range inputs {
		t.Run(name, func(t *testing.T) {
			umbrella := renderChart(t, renderSpec{chart: "kof", files: files})
			for _, hr := range umbrella.OfKind("HelmRelease") {
				chart := str(t, hr, "spec", "chartRef", "name")
				if _, err := os.Stat(chartDir(chart)); err != nil {
					continue // third-party chart (victoria-metrics-operator): referenced, never rendered here
				}
				values, _ := dig(hr.Object, "spec", "values").(map[string]any)
				res := renderChart(t, renderSpec{chart: chart, values: values, lenient: true})
				if res.Len() == 0 && chart != "kof-propagation" {
					t.Errorf("%s renders nothing with the umbrella's values", chart)
				}
			}
		})
	}
}
