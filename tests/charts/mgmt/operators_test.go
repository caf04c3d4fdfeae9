package mgmt

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/render"
)

// operatorRelease is what one kof-operators HelmRelease must install.
type operatorRelease struct {
	chart, version, repoURL, repoType string
	dependsOn                         []string
}

// checkOperatorReleases asserts the HelmReleases of kof-operators, their sources and their order.
func checkOperatorReleases(t *testing.T, res *render.Result, want map[string]operatorRelease) {
	t.Helper()
	deps := dependsOn(t, res)
	if len(res.OfKind("HelmRelease")) != len(want) || len(res.OfKind("HelmRepository")) != len(want) {
		t.Errorf("HelmReleases %v, HelmRepositories %v; want %d of each", names(res, "HelmRelease"), names(res, "HelmRepository"), len(want))
	}
	for name, w := range want {
		hr := mustGet(t, res, "HelmRelease", namespace, name)
		got := operatorRelease{
			chart:     str(t, hr, "spec", "chart", "spec", "chart"),
			version:   str(t, hr, "spec", "chart", "spec", "version"),
			dependsOn: deps[name],
		}
		repoName := str(t, hr, "spec", "chart", "spec", "sourceRef", "name")
		repo := mustGet(t, res, "HelmRepository", namespace, repoName)
		got.repoURL = str(t, repo, "spec", "url")
		got.repoType = str(t, repo, "spec", "type")
		if diff := cmp.Diff(w, got, cmp.AllowUnexported(operatorRelease{})); diff != "" {
			t.Errorf("HelmRelease %s (-want +got):\n%s", name, diff)
		}
	}
}

var (
	promCRDs  = operatorRelease{chart: "prometheus-operator-crds", version: "24.0.1", repoURL: "oci://ghcr.io/prometheus-community/charts", repoType: "oci", dependsOn: []string{}}
	grafanaOp = operatorRelease{chart: "grafana-operator", version: "v5.18.0", repoURL: "oci://ghcr.io/grafana/helm-charts", repoType: "oci", dependsOn: []string{"kof-opentelemetry-operator"}}
	otel      = operatorRelease{chart: "opentelemetry-operator", version: "0.99.0", repoURL: "https://open-telemetry.github.io/opentelemetry-helm-charts", repoType: "default"}
)

func checkOperatorsDefaults(t *testing.T, res *render.Result) {
	o := otel
	o.dependsOn = []string{"kof-prometheus-operator-crds"}
	checkOperatorReleases(t, res, map[string]operatorRelease{"kof-prometheus-operator-crds": promCRDs, "kof-opentelemetry-operator": o, "kof-grafana-operator": grafanaOp})
	hr := mustGet(t, res, "HelmRelease", namespace, "kof-opentelemetry-operator")
	if got := field(t, hr, "spec", "values", "admissionWebhooks", "autoGenerateCert", "enabled"); got != true {
		t.Errorf("opentelemetry-operator autoGenerateCert %v, want true (no cert-manager needed)", got)
	}
	if got := str(t, hr, "spec", "releaseName"); got != "opentelemetry-operator" {
		t.Errorf("releaseName %q", got)
	}
}

func checkOperatorsAll(t *testing.T, res *render.Result) {
	o := otel
	o.dependsOn = []string{"kof-cert-manager"}
	checkOperatorReleases(t, res, map[string]operatorRelease{
		"kof-prometheus-operator-crds": promCRDs,
		"kof-cert-manager":             {chart: "cert-manager", version: "v1.19.1", repoURL: "oci://quay.io/jetstack/charts", repoType: "oci", dependsOn: []string{"kof-prometheus-operator-crds"}},
		"kof-opentelemetry-operator":   o,
		"kof-grafana-operator":         {chart: "grafana-operator", version: "v5.18.0", repoURL: "oci://ghcr.io/grafana/helm-charts", repoType: "oci", dependsOn: []string{"kof-opentelemetry-operator"}},
	})
	hr := mustGet(t, res, "HelmRelease", namespace, "kof-grafana-operator")
	if got := field(t, hr, "spec", "values", "resources", "requests", "cpu"); got != "50m" {
		t.Errorf("grafana-operator values resources %v, want the ci value 50m", got)
	}
	cm := mustGet(t, res, "HelmRelease", namespace, "kof-cert-manager")
	if got := field(t, cm, "spec", "values", "crds", "enabled"); got != true {
		t.Errorf("cert-manager crds.enabled %v, want true", got)
	}
}

func checkOperatorsCRDsOnly(t *testing.T, res *render.Result) {
	checkOperatorReleases(t, res, map[string]operatorRelease{"kof-prometheus-operator-crds": promCRDs})
}

func checkOperatorsNoFlux(t *testing.T, res *render.Result) {
	if res.Len() != 0 {
		t.Errorf("delivery none renders %v, want nothing", res.KindSummary())
	}
}

// TestOperatorsMissingCatalogEntry: an enabled operator without a catalog entry fails, naming both keys.
func TestOperatorsMissingCatalogEntry(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof-operators", values: map[string]any{
		"catalog": map[string]any{"opentelemetry-operator": nil},
	}})
	for _, want := range []string{"opentelemetry-operator.enabled", "catalog.opentelemetry-operator"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestOperatorsOnRemoteCluster: without Flux (a remote cluster reached through KCM) the default `auto` delivery
// renders nothing, and `flux` forces the Flux objects.
func TestOperatorsOnRemoteCluster(t *testing.T) {
	remote := renderChart(t, renderSpec{chart: "kof-operators", apiVersions: []string{}})
	if remote.Len() != 0 {
		t.Errorf("kof-operators without Flux renders %v, want nothing", remote.KindSummary())
	}
	if !contains(remote.Files["kof-operators/templates/NOTES.txt"], "rendered nothing") {
		t.Errorf("NOTES do not explain the empty render: %q", remote.Files["kof-operators/templates/NOTES.txt"])
	}
	forced := renderChart(t, renderSpec{chart: "kof-operators", apiVersions: []string{}, values: map[string]any{"delivery": "flux"}})
	if diff := cmp.Diff([]string{"kof-grafana-operator", "kof-opentelemetry-operator", "kof-prometheus-operator-crds"}, names(forced, "HelmRelease")); diff != "" {
		t.Errorf("forced flux delivery HelmReleases (-want +got):\n%s", diff)
	}
}
