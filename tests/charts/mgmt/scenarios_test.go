package mgmt

import (
	"path/filepath"
	"strings"
	"testing"

	"kof.dev/kof/chartlib/render"
)

// scenario returns the umbrella values file of a shared scenario, copied under testdata/scenarios.
func scenario(name string) string { return filepath.Join("testdata", "scenarios", name+".yaml") }

// TestScenariosUmbrella checks the scenarios that hold at the umbrella level (tests/scenarios/testdata/README.md).
func TestScenariosUmbrella(t *testing.T) {
	cases := map[string]func(*testing.T, *render.Result){
		// 01: the default install renders the five Flux releases in dependsOn order.
		"01-regional-child": checkKofDefaults,
		// 05: M2M reaches kof-child.
		"05-m2m": func(t *testing.T, res *render.Result) {
			wantValue(t, res, "kof-child", true, "fromManagement", "toManagementCluster", "enabled")
			wantValue(t, res, "kof-regional", false, "regionless", "enabled")
		},
		// 06: the management cluster's collectors get PKI_PATH through kof-child.
		"06-m2m-non-k0s": func(t *testing.T, res *render.Result) {
			env := []any{map[string]any{"name": "PKI_PATH", "value": "etc/kubernetes"}}
			wantValue(t, res, "kof-child", env, "fromManagement", "collectors", "opentelemetry-kube-stack", "defaultCRConfig", "env")
		},
		// 08: M2R names the regional cluster in kof-child.
		"08-m2r": func(t *testing.T, res *render.Result) {
			wantValue(t, res, "kof-child", "regional-1", "fromManagement", "toRegionalCluster", "name")
			wantValue(t, res, "kof-child", false, "fromManagement", "toManagementCluster", "enabled")
		},
		// 10: the management cluster's own collectors export to CloudWatch; the default exporters arrive as null.
		"10-third-party-cloudwatch": func(t *testing.T, res *render.Result) {
			checkKofCollectorsOnManagement(t, res)
			exporters := dig(releaseValues(t, res, "kof-collectors", releaseNamespace), "opentelemetry-kube-stack", "defaultCRConfig", "config", "exporters").(map[string]any)
			for _, name := range []string{"otlphttp/logs", "otlphttp/traces"} {
				if v, ok := exporters[name]; !ok || v != nil {
					t.Errorf("exporter %s must reach kof-collectors as null, got %v (present %v)", name, v, ok)
				}
			}
		},
		// 02: storage on the management cluster; kof-regional gets regionless.enabled, no mothership VMCluster.
		"02-regionless": checkKofRegionless,
		// 03: as 02, plus self-signed certificates and exporters skipping TLS verification.
		"03-regionless-selfsigned": func(t *testing.T, res *render.Result) {
			checkKofRegionlessSelfSigned(t, res)
			for _, c := range kofComponents {
				wantValue(t, res, c, "mothership.kof.example.com", "regionless", "domain")
			}
		},
		// 07: the guide's M2M storage overrides reach kof-child and kof-mothership with their exact keys.
		"07-m2m-storage-overrides": checkKofM2MStorageOverrides,
		// 13: disabling the audit logs cluster reaches every regional cluster's storage values.
		"13-audit-cluster-disabled": func(t *testing.T, res *render.Result) {
			wantValue(t, res, "kof-regional", false, "storage", "victoriametrics", "vlcluster_audit", "enabled")
		},
	}
	for name, check := range cases {
		t.Run(name, func(t *testing.T) {
			check(t, renderChart(t, renderSpec{chart: "kof", files: []string{scenario(name)}}))
		})
	}
}

// TestScenario09ModeConflict: M2M and M2R at once fail with one message naming both keys, and nothing renders.
func TestScenario09ModeConflict(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof", files: []string{scenario("09-m2m-and-m2r-conflict")}})
	msg := err.Error()
	for _, key := range []string{"kof-child.values.fromManagement.toManagementCluster.enabled", "kof-child.values.fromManagement.toRegionalCluster.name"} {
		if !strings.Contains(msg, key) {
			t.Errorf("error %q does not name %s", msg, key)
		}
	}
	if n := strings.Count(msg, "storage modes conflict"); n != 1 {
		t.Errorf("error %q reports the conflict %d times, want once", msg, n)
	}
}

// TestModeConflictRegionless: regionless with M2M fails too, naming both keys.
func TestModeConflictRegionless(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof", values: map[string]any{
		"regionless": map[string]any{"enabled": true},
		"kof-child":  map[string]any{"values": map[string]any{"fromManagement": map[string]any{"toManagementCluster": map[string]any{"enabled": true}}}},
	}})
	for _, key := range []string{"regionless.enabled", "kof-child.values.fromManagement.toManagementCluster.enabled"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name %s", err, key)
		}
	}
}

// TestScenario14ValuesTypo: the misspelled key fails schema validation, naming its path.
func TestScenario14ValuesTypo(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof", files: []string{scenario("14-values-typo")}})
	msg := err.Error()
	if !strings.Contains(msg, "toManagmentCluster") || !strings.Contains(msg, "fromManagement") {
		t.Errorf("error %q does not name kof-child.values.fromManagement.toManagmentCluster", msg)
	}
	if !strings.Contains(strings.ToLower(msg), "schema") {
		t.Errorf("error %q is not a schema validation error", msg)
	}
}

// TestUmbrellaAcceptsOtherChildKeys: kof-child values outside fromManagement that the kof-child chart knows reach
// it (the umbrella's schema embeds kof-child's, so unknown keys fail: see chartlib/schema's umbrella tests).
func TestUmbrellaAcceptsOtherChildKeys(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof", values: map[string]any{
		"kof-child": map[string]any{"values": map[string]any{"pkiPath": "x"}},
	}})
	wantValue(t, res, "kof-child", "x", "pkiPath")
}

// TestUmbrellaUserValueWinsOverInjected: an explicit component value beats the injected shared key.
func TestUmbrellaUserValueWinsOverInjected(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof", values: map[string]any{
		"global":         map[string]any{"registry": "mirror.example.com"},
		"kof-mothership": map[string]any{"values": map[string]any{"global": map[string]any{"registry": "other.example.com"}}},
	}})
	wantValue(t, res, "kof-mothership", "other.example.com", "global", "registry")
	wantValue(t, res, "kof-child", "mirror.example.com", "global", "registry")
}

// TestCollectorsWithManagementMode: kof-collectors.enabled with regionless, M2M or M2R would give the management
// cluster two owners of the release kof-collectors (the umbrella's HelmRelease and the mode's MultiClusterService);
// the umbrella refuses each with one message naming both settings (regression: it rendered both).
func TestCollectorsWithManagementMode(t *testing.T) {
	fm := func(m map[string]any) map[string]any {
		return map[string]any{"values": map[string]any{"fromManagement": m}}
	}
	for key, vals := range map[string]map[string]any{
		"regionless.enabled": {"regionless": map[string]any{"enabled": true}},
		"kof-child.values.fromManagement.toManagementCluster.enabled": {
			"kof-child": fm(map[string]any{"toManagementCluster": map[string]any{"enabled": true}})},
		"kof-child.values.fromManagement.toRegionalCluster.name": {
			"kof-child": fm(map[string]any{"toRegionalCluster": map[string]any{"name": "regional-1"}})},
	} {
		t.Run(key, func(t *testing.T) {
			vals["kof-collectors"] = map[string]any{"enabled": true}
			msg := renderError(t, renderSpec{chart: "kof", values: vals}).Error()
			for _, want := range []string{"kof-collectors.enabled and " + key + " are set together", "release owners conflict"} {
				if strings.Count(msg, want) != 1 {
					t.Errorf("error %q does not say %q once", msg, want)
				}
			}
		})
	}
}

// TestIstioMemberNamespaceMatchesComponents: in Istio mode the namespace kof-mothership delivers labelled
// istio-injection: enabled (istio.memberNamespace) must be the one kof-regional's and kof-child's services land in;
// the umbrella refuses a mismatch naming both settings (regression: it rendered, and the services got no sidecars).
func TestIstioMemberNamespaceMatchesComponents(t *testing.T) {
	member := map[string]any{"values": map[string]any{"istio": map[string]any{"memberNamespace": "kof-mesh"}}}
	msg := renderError(t, renderSpec{chart: "kof", values: map[string]any{
		"istio": map[string]any{"enabled": true}, "kof-mothership": member}}).Error()
	for _, want := range []string{
		`kof-mothership.values.istio.memberNamespace is "kof-mesh" but kof-regional.values.namespace is "kof"`,
		"set both to the same namespace",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	// Both sides set alike, and the same mismatch outside Istio mode (memberNamespace unused), render.
	same := map[string]any{"values": map[string]any{"namespace": "kof-mesh"}}
	renderChart(t, renderSpec{chart: "kof", values: map[string]any{"istio": map[string]any{"enabled": true},
		"kof-mothership": member, "kof-regional": same, "kof-child": same}})
	renderChart(t, renderSpec{chart: "kof", values: map[string]any{"kof-mothership": member}})
}
