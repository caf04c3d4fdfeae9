package mgmt

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"kof.dev/kof/operator/config"
)

// TestOperatorEnvironmentLoads feeds the kof-operator environment the chart renders, for its defaults and every ci/
// file, to the operator's own start-up check (operator/config.Load): the chart must never render an environment
// the operator refuses, and the loaded values must be the ones the chart meant.
func TestOperatorEnvironmentLoads(t *testing.T) {
	for _, gc := range goldenCases(t) {
		if gc.chart != "kof-mothership" {
			continue
		}
		t.Run(gc.name, func(t *testing.T) {
			res := renderChart(t, renderSpec{chart: gc.chart, files: gc.files})
			env := operatorEnv(t, res)
			cfg, err := config.Load(func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("kof-operator refuses the rendered environment: %v", err)
			}
			if cfg.PromxySecretName != env["KOF_PROMXY_SECRET_NAME"] || cfg.VLAuditClusterName != env["KOF_VL_AUDIT_CLUSTER_NAME"] {
				t.Errorf("loaded promxy Secret %q, audit VLCluster %q; rendered %q, %q", cfg.PromxySecretName,
					cfg.VLAuditClusterName, env["KOF_PROMXY_SECRET_NAME"], env["KOF_VL_AUDIT_CLUSTER_NAME"])
			}
			if cfg.Storage.VTSelect != env["KOF_VT_SELECT_URL"] || cfg.Storage.VMInsert != env["KOF_VM_INSERT_URL"] {
				t.Errorf("loaded storage URLs %+v differ from the rendered environment", cfg.Storage)
			}
			promxy := res.Get("Deployment", namespace, promxyName)
			if promxy == nil {
				return
			}
			podLabels := field(t, promxy, "spec", "template", "metadata", "labels").(map[string]any)
			set := map[string]string{}
			for k, v := range podLabels {
				set[k] = v.(string)
			}
			if !cfg.PromxyPodSelector.Matches(labels.Set(set)) {
				t.Errorf("operator's promxy selector %q does not select the promxy pods %v", cfg.PromxyPodSelector, set)
			}
		})
	}
}
