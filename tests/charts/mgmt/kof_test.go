package mgmt

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// fluxNamespace is where the umbrella puts its HelmRepositories and HelmCharts by default
// (global.helmRepo.namespace, KCM's system namespace).
const fluxNamespace = "kcm-system"

// releaseNamespace is the umbrella's own namespace (the tests' release namespace), where its HelmReleases live:
// never KCM's system namespace, where KCM deletes the HelmReleases it does not own.
const releaseNamespace = namespace

// kofComponents are the KOF charts the default umbrella installs (victoria-metrics-operator aside).
var kofComponents = []string{"kof-operators", "kof-mothership", "kof-regional", "kof-child"}

// dependsOn returns each HelmRelease's dependsOn names, and fails when an edge names another namespace.
func dependsOn(t *testing.T, res *render.Result) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, hr := range res.OfKind("HelmRelease.helm.toolkit.fluxcd.io") {
		deps, _, err := unstructured.NestedSlice(hr.Object, "spec", "dependsOn")
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, d := range deps {
			ref := d.(map[string]any)
			if ref["namespace"] != hr.GetNamespace() {
				t.Errorf("HelmRelease %s depends on %v in another namespace than its own %q", hr.GetName(), ref, hr.GetNamespace())
			}
			names = append(names, ref["name"].(string))
		}
		out[hr.GetName()] = names
	}
	return out
}

// releaseValues returns spec.values of the HelmRelease name.
func releaseValues(t *testing.T, res *render.Result, name string, ns string) map[string]any {
	t.Helper()
	hr := mustGet(t, res, "HelmRelease", ns, name)
	v, ok := field(t, hr, "spec", "values").(map[string]any)
	if !ok {
		t.Fatalf("HelmRelease %s: spec.values is not a map", name)
	}
	return v
}

// dig returns the value at path of m (nil when missing).
func dig(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// wantValue fails when the value at path of the HelmRelease's values is not want.
func wantValue(t *testing.T, res *render.Result, release string, want any, path ...string) {
	t.Helper()
	got := dig(releaseValues(t, res, release, releaseNamespace), path...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HelmRelease %s values %v (-want +got):\n%s", release, path, diff)
	}
}

// checkFluxChain asserts the HelmChart/HelmRelease pairs, their chart versions and the dependsOn edges.
func checkFluxChain(t *testing.T, res *render.Result, ns string, versions map[string]string, deps map[string][]string) {
	t.Helper()
	if diff := cmp.Diff(deps, dependsOn(t, res)); diff != "" {
		t.Errorf("HelmRelease dependsOn (-want +got):\n%s", diff)
	}
	gotVersions := map[string]string{}
	for _, hc := range res.OfKind("HelmChart") {
		gotVersions[hc.GetName()] = str(t, hc, "spec", "version")
		if hc.GetNamespace() != ns {
			t.Errorf("HelmChart %s in namespace %q, want %q", hc.GetName(), hc.GetNamespace(), ns)
		}
	}
	if diff := cmp.Diff(versions, gotVersions); diff != "" {
		t.Errorf("HelmChart versions (-want +got):\n%s", diff)
	}
	for name := range versions {
		hr := mustGet(t, res, "HelmRelease", releaseNamespace, name)
		if got := str(t, hr, "spec", "chartRef", "namespace"); got != ns {
			t.Errorf("HelmRelease %s chartRef names a HelmChart in %q, want %q", name, got, ns)
		}
		if got := str(t, hr, "spec", "chartRef", "name"); got != name {
			t.Errorf("HelmRelease %s chartRef names HelmChart %q", name, got)
		}
		if got := str(t, hr, "spec", "chartRef", "kind"); got != "HelmChart" {
			t.Errorf("HelmRelease %s chartRef kind %q, want HelmChart", name, got)
		}
	}
}

func checkKofDefaults(t *testing.T, res *render.Result) {
	if diff := cmp.Diff(map[string]int{"HelmRepository": 2, "HelmChart": 6, "HelmRelease": 6}, res.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	repo := mustGet(t, res, "HelmRepository", fluxNamespace, "kof-repo")
	if str(t, repo, "spec", "type") != "oci" || str(t, repo, "spec", "url") != "oci://ghcr.io/k0rdent/kof/charts" {
		t.Errorf("kof-repo spec %v, want the OCI repository of KOF", repo.Object["spec"])
	}
	vmoRepo := mustGet(t, res, "HelmRepository", fluxNamespace, "kof-victoria-metrics-operator")
	if str(t, vmoRepo, "spec", "url") != "oci://ghcr.io/victoriametrics/helm-charts" {
		t.Errorf("victoria-metrics-operator repository %v", vmoRepo.Object["spec"])
	}
	checkFluxChain(t, res, fluxNamespace,
		map[string]string{"kof-operators": "2.0.0", "victoria-metrics-operator": "0.63.1", "kof-mothership": "2.0.0", "kof-regional": "2.0.0", "kof-child": "2.0.0", "kof-dashboards": "2.0.0"},
		map[string][]string{
			"kof-operators":             {},
			"victoria-metrics-operator": {"kof-operators"},
			"kof-mothership":            {"kof-operators", "victoria-metrics-operator"},
			"kof-regional":              {"kof-mothership"},
			"kof-child":                 {"kof-mothership"},
			"kof-dashboards":            {"kof-mothership"},
		})
	for _, hr := range res.OfKind("HelmRelease") {
		if got := str(t, hr, "spec", "targetNamespace"); got != namespace {
			t.Errorf("HelmRelease %s targets namespace %q, want %q", hr.GetName(), got, namespace)
		}
		for path, want := range map[string]any{"interval": "10m", "timeout": "10m"} {
			if got := field(t, hr, "spec", path); got != want {
				t.Errorf("HelmRelease %s spec.%s = %v, want %v", hr.GetName(), path, got, want)
			}
		}
		for _, action := range []string{"install", "upgrade"} {
			if _, off, _ := unstructured.NestedBool(hr.Object, "spec", action, "disableWait"); off {
				t.Errorf("HelmRelease %s sets spec.%s.disableWait by default; flux.wait defaults to true", hr.GetName(),
					action)
			}
		}
		if got := field(t, hr, "spec", "install", "remediation", "retries"); got != int64(3) {
			t.Errorf("HelmRelease %s install retries %v, want 3", hr.GetName(), got)
		}
		if got := field(t, hr, "spec", "upgrade", "remediation", "remediateLastFailure"); got != true {
			t.Errorf("HelmRelease %s remediateLastFailure %v, want true", hr.GetName(), got)
		}
	}
	for _, c := range kofComponents {
		wantValue(t, res, c, false, "regionless", "enabled")
		wantValue(t, res, c, "mothership", "regionless", "clusterName")
		wantValue(t, res, c, true, "autoUpgrade")
		wantValue(t, res, c, "", "global", "registry")
		wantValue(t, res, c, "v1.19.1", "catalog", "cert-manager", "version")
	}
	wantValue(t, res, "kof-regional", false, "storage", "regionless", "enabled")
	vmo := mustGet(t, res, "HelmRelease", releaseNamespace, "victoria-metrics-operator")
	if v := dig(vmo.Object, "spec", "values"); v != nil {
		t.Errorf("victoria-metrics-operator values %v, want none by default", v)
	}
}

func checkKofRegionless(t *testing.T, res *render.Result) {
	for _, c := range kofComponents {
		wantValue(t, res, c, true, "regionless", "enabled")
		wantValue(t, res, c, "mothership.kof.example.com", "regionless", "domain")
		wantValue(t, res, c, "admin@example.com", "regionless", "certEmail")
	}
	wantValue(t, res, "kof-regional", true, "storage", "regionless", "enabled")
	mothership := renderChart(t, renderSpec{chart: "kof-mothership", values: releaseValues(t, res, "kof-mothership", releaseNamespace)})
	if got := names(mothership, "VMCluster"); len(got) != 0 {
		t.Errorf("regionless kof-mothership renders VMCluster %v, want none", got)
	}
	if got := operatorEnv(t, mothership)["KOF_REGIONLESS_ENABLED"]; got != "true" {
		t.Errorf("regionless kof-operator KOF_REGIONLESS_ENABLED = %q, want true", got)
	}
}

func checkKofRegionlessSelfSigned(t *testing.T, res *render.Result) {
	for _, c := range kofComponents {
		wantValue(t, res, c, true, "regionless", "enabled")
		wantValue(t, res, c, true, "tls", "selfSigned")
		wantValue(t, res, c, true, "tls", "insecureSkipVerify")
	}
	wantValue(t, res, "kof-regional", true, "storage", "tls", "insecureSkipVerify")
}

func checkKofWithoutRegional(t *testing.T, res *render.Result) {
	if hc := res.Get("HelmChart", fluxNamespace, "kof-regional"); hc != nil {
		t.Error("kof-regional disabled but its HelmChart is rendered")
	}
	if hr := res.Get("HelmRelease", releaseNamespace, "kof-regional"); hr != nil {
		t.Error("kof-regional disabled but its HelmRelease is rendered")
	}
	for name, deps := range dependsOn(t, res) {
		for _, d := range deps {
			if d == "kof-regional" {
				t.Errorf("HelmRelease %s still depends on the disabled kof-regional", name)
			}
		}
	}
	if diff := cmp.Diff([]string{"kof-child", "kof-dashboards", "kof-mothership", "kof-operators", "victoria-metrics-operator"}, names(res, "HelmRelease")); diff != "" {
		t.Errorf("HelmReleases (-want +got):\n%s", diff)
	}
}

func checkKofM2MStorageOverrides(t *testing.T, res *render.Result) {
	wantValue(t, res, "kof-child", true, "fromManagement", "toManagementCluster", "enabled")
	wantValue(t, res, "kof-child", "30d", "storage", "victoria-traces-cluster", "vtstorage", "extraArgs", "retentionPeriod")
	wantValue(t, res, "kof-child", "example-ssd", "storage", "victoria-traces-cluster", "vtstorage", "persistentVolume", "storageClassName")
	wantValue(t, res, "kof-child", "100Gi", "storage", "victoria-traces-cluster", "vtstorage", "persistentVolume", "size")
	wantValue(t, res, "kof-child", "1y", "storage", "victoriametrics", "vlcluster_audit", "spec", "vlstorage", "retentionPeriod")
	wantValue(t, res, "kof-child", "example-ssd", "storage", "victoriametrics", "vlcluster_audit", "spec", "vlstorage", "storage", "volumeClaimTemplate", "spec", "storageClassName")
	wantValue(t, res, "kof-child", "100Gi", "storage", "victoriametrics", "vlcluster_audit", "spec", "vlstorage", "storage", "volumeClaimTemplate", "spec", "resources", "requests", "storage")
	wantValue(t, res, "kof-mothership", "30d", "victoriametrics", "vmcluster", "spec", "retentionPeriod")
	mothership := renderChart(t, renderSpec{chart: "kof-mothership", values: releaseValues(t, res, "kof-mothership", releaseNamespace)})
	vmc := mustGet(t, mothership, "VMCluster", namespace, "cluster")
	if got := str(t, vmc, "spec", "retentionPeriod"); got != "30d" {
		t.Errorf("mothership VMCluster retentionPeriod %q, want 30d", got)
	}
}

func checkKofPrivateRegistry(t *testing.T, res *render.Result) {
	repo := mustGet(t, res, "HelmRepository", fluxNamespace, "kof-repo")
	want := map[string]any{
		"url": "oci://registry.example.com/kof/charts", "type": "oci", "interval": "5m",
		"secretRef": map[string]any{"name": "kof-repo-credentials"}, "certSecretRef": map[string]any{"name": "kof-repo-ca"},
	}
	if diff := cmp.Diff(want, repo.Object["spec"]); diff != "" {
		t.Errorf("kof-repo spec (-want +got):\n%s", diff)
	}
	vmoRepo := mustGet(t, res, "HelmRepository", fluxNamespace, "kof-victoria-metrics-operator")
	if _, ok := dig(vmoRepo.Object, "spec", "secretRef").(map[string]any); ok {
		t.Error("KOF's repository credentials leak into the victoria-metrics-operator repository")
	}
	checkFluxChain(t, res, fluxNamespace,
		map[string]string{"kof-operators": "2.0.1", "victoria-metrics-operator": "0.63.1", "kof-mothership": "2.0.1", "kof-regional": "2.0.1", "kof-child": "2.0.1", "kof-dashboards": "2.0.1"},
		map[string][]string{
			"kof-operators":             {},
			"victoria-metrics-operator": {"kof-operators"},
			"kof-mothership":            {"kof-operators", "victoria-metrics-operator"},
			"kof-regional":              {"kof-mothership"},
			"kof-child":                 {"kof-mothership"},
			"kof-dashboards":            {"kof-mothership"},
		})
	for _, hr := range res.OfKind("HelmRelease") {
		checks := []struct {
			path []string
			want any
		}{
			{[]string{"spec", "interval"}, "5m"},
			{[]string{"spec", "timeout"}, "20m"},
			{[]string{"spec", "install", "remediation", "retries"}, int64(5)},
			{[]string{"spec", "upgrade", "remediation", "retries"}, int64(1)},
			{[]string{"spec", "upgrade", "remediation", "remediateLastFailure"}, false},
		}
		for _, c := range checks {
			if got := field(t, hr, c.path...); got != c.want {
				t.Errorf("HelmRelease %s %v = %v, want %v", hr.GetName(), c.path, got, c.want)
			}
		}
	}
	wantValue(t, res, "victoria-metrics-operator", "registry.example.com", "global", "image", "registry")
	for _, c := range kofComponents {
		wantValue(t, res, c, "registry.example.com", "global", "registry")
		wantValue(t, res, c, false, "autoUpgrade")
	}
	wantValue(t, res, "kof-regional", false, "storage", "victoriametrics", "vlcluster_audit", "enabled")
	wantValue(t, res, "kof-regional", "registry.example.com", "storage", "global", "registry")
}

func checkKofCollectorsOnManagement(t *testing.T, res *render.Result) {
	deps := dependsOn(t, res)
	if diff := cmp.Diff([]string{"kof-operators", "kof-mothership"}, deps["kof-collectors"]); diff != "" {
		t.Errorf("kof-collectors dependsOn (-want +got):\n%s", diff)
	}
	exporters, ok := dig(releaseValues(t, res, "kof-collectors", releaseNamespace), "opentelemetry-kube-stack", "defaultCRConfig", "config", "exporters").(map[string]any)
	if !ok {
		t.Fatal("kof-collectors values carry no exporters")
	}
	if _, ok := exporters["awscloudwatchlogs"]; !ok {
		t.Error("kof-collectors values lost the awscloudwatchlogs exporter")
	}
	if v, ok := exporters["prometheusremotewrite"]; !ok || v != nil {
		t.Errorf("prometheusremotewrite must reach kof-collectors as null (to delete its default), got %v (present %v)", v, ok)
	}
	wantValue(t, res, "kof-collectors", true, "kcm", "monitoring")
}

func checkKofExistingRepo(t *testing.T, res *render.Result) {
	if got := names(res, "HelmRepository"); len(got) != 0 {
		t.Errorf("HelmRepositories %v rendered, want none (kofManaged off, victoria-metrics-operator off)", got)
	}
	for _, hc := range res.OfKind("HelmChart") {
		if got := str(t, hc, "spec", "sourceRef", "name"); got != "kof-mirror" {
			t.Errorf("HelmChart %s source %q, want kof-mirror", hc.GetName(), got)
		}
	}
	checkFluxChain(t, res, fluxNamespace,
		map[string]string{"kof-operators": "2.0.0", "kof-mothership": "2.0.0", "kof-regional": "2.0.0", "kof-child": "2.0.0", "kof-dashboards": "2.0.0"},
		map[string][]string{
			"kof-operators":  {},
			"kof-mothership": {"kof-operators"},
			"kof-regional":   {"kof-mothership"},
			"kof-child":      {"kof-mothership"},
			"kof-dashboards": {"kof-mothership"},
		})
	wantValue(t, res, "kof-mothership", "kof-mirror", "kcm", "kofRepository")
	wantValue(t, res, "kof-mothership", fluxNamespace, "kcm", "namespace")
	hr := mustGet(t, res, "HelmRelease", releaseNamespace, "kof-mothership")
	if got := str(t, hr, "spec", "targetNamespace"); got != "kof-system" {
		t.Errorf("kof-mothership targetNamespace %q, want kof-system", got)
	}
}

// checkKofNoReadinessWait: flux.wait false turns off helm-controller's readiness waits (install and upgrade, Jobs
// too) on every HelmRelease and changes nothing else of them; the defaults keep every wait (no disable* field).
func checkKofNoReadinessWait(t *testing.T, res *render.Result) {
	hrs := res.OfKind("HelmRelease")
	if len(hrs) != 6 {
		t.Fatalf("%d HelmReleases, want the 6 of the defaults", len(hrs))
	}
	for _, hr := range hrs {
		for _, action := range []string{"install", "upgrade"} {
			for _, field := range []string{"disableWait", "disableWaitForJobs"} {
				if v, ok, _ := unstructured.NestedBool(hr.Object, "spec", action, field); !ok || !v {
					t.Errorf("HelmRelease %s spec.%s.%s = %v (set %v), want true", hr.GetName(), action, field, v, ok)
				}
			}
		}
	}
}

// TestUmbrellaWithoutOperators: with kof-operators off, victoria-metrics-operator is still installed first and no
// edge names kof-operators.
func TestUmbrellaWithoutOperators(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof", values: map[string]any{"kof-operators": map[string]any{"enabled": false}}})
	want := map[string][]string{
		"victoria-metrics-operator": {},
		"kof-mothership":            {"victoria-metrics-operator"},
		"kof-regional":              {"kof-mothership"},
		"kof-child":                 {"kof-mothership"},
		"kof-dashboards":            {"kof-mothership"},
	}
	if diff := cmp.Diff(want, dependsOn(t, res)); diff != "" {
		t.Errorf("dependsOn (-want +got):\n%s", diff)
	}
}

// TestUmbrellaRefusesKCMSystemNamespace is the regression test of KCM v1.10.0 deleting the umbrella's
// HelmReleases: they live in the umbrella's own namespace, so an umbrella installed in global.helmRepo.namespace
// (KCM's system namespace) is refused with both names and the fix.
func TestUmbrellaRefusesKCMSystemNamespace(t *testing.T) {
	s := renderSpec{chart: "kof"}
	opts := s.options()
	opts.Namespace = fluxNamespace
	_, err := render.Render(context.Background(), opts)
	if err == nil {
		t.Fatal("the umbrella renders in kcm-system; want a refusal")
	}
	for _, want := range []string{`release namespace "kcm-system" is global.helmRepo.namespace`, "helm install -n kof"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	res := renderChart(t, s)
	for _, hr := range res.OfKind("HelmRelease") {
		if hr.GetNamespace() != releaseNamespace {
			t.Errorf("HelmRelease %s in %q, want the umbrella's namespace %q", hr.GetName(), hr.GetNamespace(), releaseNamespace)
		}
	}
}

// TestUmbrellaUnknownComponent: a name in global.components that is not a KOF component fails schema validation.
func TestUmbrellaUnknownComponent(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof", values: map[string]any{"global": map[string]any{"components": []any{"kof-storage"}}}})
	if !contains(err.Error(), "global/components") && !contains(err.Error(), "global.components") {
		t.Errorf("error %q does not name global.components", err)
	}
}
