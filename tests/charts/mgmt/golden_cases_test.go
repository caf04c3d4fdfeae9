package mgmt

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"kof.dev/kof/chartlib/render"
)

// charts are the charts of this package.
var charts = []string{"kof", "kof-operators", "kof-mothership", "kof-propagation", "kof-dashboards"}

// goldenCase is one golden render: a chart with its defaults ("defaults") or with one ci/ values file.
type goldenCase struct {
	chart, name string
	files       []string
}

// goldenCases lists every chart's defaults and every ci/NN-*-values.yaml file, sorted.
func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	var out []goldenCase
	for _, c := range charts {
		out = append(out, goldenCase{chart: c, name: "defaults"})
		files, err := filepath.Glob(filepath.Join(chartDir(c), "ci", "*-values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		for _, f := range files {
			out = append(out, goldenCase{chart: c, name: strings.TrimSuffix(filepath.Base(f), "-values.yaml"), files: []string{f}})
		}
	}
	return out
}

// semantic holds the assertions of every golden case, keyed `<chart>/<case>`; each case must have one, so that a
// regenerated golden never stands alone.
var semantic = map[string]func(t *testing.T, res *render.Result){
	"kof/defaults":                           checkKofDefaults,
	"kof/01-regionless":                      checkKofRegionless,
	"kof/02-regionless-selfsigned":           checkKofRegionlessSelfSigned,
	"kof/03-without-regional":                checkKofWithoutRegional,
	"kof/04-m2m-storage-overrides":           checkKofM2MStorageOverrides,
	"kof/05-private-registry":                checkKofPrivateRegistry,
	"kof/06-collectors-on-management":        checkKofCollectorsOnManagement,
	"kof/07-existing-repo":                   checkKofExistingRepo,
	"kof/08-no-readiness-wait":               checkKofNoReadinessWait,
	"kof-operators/defaults":                 checkOperatorsDefaults,
	"kof-operators/01-all-operators":         checkOperatorsAll,
	"kof-operators/02-crds-only":             checkOperatorsCRDsOnly,
	"kof-operators/03-no-flux":               checkOperatorsNoFlux,
	"kof-mothership/defaults":                checkMothershipDefaults,
	"kof-mothership/01-regionless":           checkMothershipRegionless,
	"kof-mothership/02-grafana-certificates": checkMothershipGrafanaCertificates,
	"kof-mothership/03-minimal":              checkMothershipMinimal,
	"kof-mothership/04-ui":                   checkMothershipUI,
	"kof-mothership/05-tenant-proxy":         checkMothershipTenantProxy,
	"kof-mothership/06-istio":                checkMothershipIstio,
	"kof-propagation/defaults":               checkPropagationDefaults,
	"kof-propagation/01-vmuser-bundle":       checkPropagationVMUserBundle,
	"kof-dashboards/defaults":                checkDashboardsDefaults,
	"kof-dashboards/01-no-upstream":          checkDashboardsNoUpstream,
	"kof-dashboards/02-upstream-toggles":     checkDashboardsUpstreamToggles,
}

// TestGolden renders every case, compares it with its golden file, checks that a second render is byte-identical
// and runs the case's semantic assertions.
func TestGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, gc := range goldenCases(t) {
		key := gc.chart + "/" + gc.name
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			spec := renderSpec{chart: gc.chart, files: gc.files}
			res := renderChart(t, spec)
			got, err := res.YAML()
			if err != nil {
				t.Fatal(err)
			}
			again, err := renderChart(t, spec).YAML()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, again) {
				t.Errorf("two renders of %s differ", key)
			}
			checkGolden(t, key+".yaml", got)
			check, ok := semantic[key]
			if !ok {
				t.Fatalf("no semantic assertions for %s: add them to the semantic table", key)
			}
			check(t, res)
		})
	}
	for key := range semantic {
		if !seen[key] {
			t.Errorf("semantic assertions for %s but no such chart or ci file", key)
		}
	}
}
