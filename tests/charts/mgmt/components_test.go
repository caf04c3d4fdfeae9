package mgmt

import (
	"os"
	"testing"

	"kof.dev/kof/chartlib/render"
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

// TestMultiClusterServicesNameRenderedTemplates: every ServiceTemplate a MultiClusterService of kof-regional or
// kof-child names (as rendered with the umbrella's values) is one kof-mothership renders, or one the MCS's own
// chart renders (the resources template of its kof-vmuser-credentials service), for the umbrella's defaults and the
// scenarios that change which services are deployed.
func TestMultiClusterServicesNameRenderedTemplates(t *testing.T) {
	for name, files := range map[string][]string{
		"defaults":      nil,
		"02-regionless": {scenario("02-regionless")},
		"05-m2m":        {scenario("05-m2m")},
		"08-m2r":        {scenario("08-m2r")},
	} {
		t.Run(name, func(t *testing.T) {
			umbrella := renderChart(t, renderSpec{chart: "kof", files: files})
			component := func(chart string) *render.Result {
				values, _ := dig(mustGet(t, umbrella, "HelmRelease", releaseNamespace, chart).Object, "spec", "values").(map[string]any)
				return renderChart(t, renderSpec{chart: chart, values: values, lenient: true})
			}
			templates := map[string]bool{}
			for _, st := range component("kof-mothership").OfKind("ServiceTemplate") {
				templates[st.GetName()] = true
			}
			named := 0
			for _, chart := range []string{"kof-regional", "kof-child"} {
				rendered := component(chart)
				own := map[string]bool{}
				for _, st := range rendered.OfKind("ServiceTemplate") {
					own[st.GetName()] = true
				}
				for _, mcs := range rendered.OfKind("MultiClusterService") {
					services, _ := dig(mcs.Object, "spec", "serviceSpec", "services").([]any)
					for _, s := range services {
						tmpl, _ := s.(map[string]any)["template"].(string)
						named++
						if !templates[tmpl] && !own[tmpl] {
							t.Errorf("%s MultiClusterService %s names ServiceTemplate %q, which kof-mothership does not render", chart, mcs.GetName(), tmpl)
						}
					}
				}
			}
			t.Logf("%d services name rendered ServiceTemplates", named)
			if named == 0 {
				t.Error("no MultiClusterService names any ServiceTemplate")
			}
		})
	}
}
