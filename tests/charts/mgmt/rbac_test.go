package mgmt

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestOperatorRulesMatchGeneratedRBAC: the kof-operator ClusterRole carries exactly the rules controller-gen made
// from the operator's RBAC markers (operator/config/rbac/role.yaml); charts/kof-mothership/generate.sh copies them.
func TestOperatorRulesMatchGeneratedRBAC(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "operator", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatalf("read the operator's generated role: %v", err)
	}
	var role map[string]any
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	res := renderChart(t, renderSpec{chart: "kof-mothership"})
	got := field(t, mustGet(t, res, "ClusterRole", "", operatorName), "rules")
	if diff := cmp.Diff(role["rules"], got); diff != "" {
		t.Errorf("ClusterRole rules differ from operator/config/rbac/role.yaml; run charts/kof-mothership/generate.sh (-role +chart):\n%s", diff)
	}
}

// TestCRDsMatchGenerated: the chart's crds/ are byte-for-byte the CRDs controller-gen made from operator/api.
func TestCRDsMatchGenerated(t *testing.T) {
	generated, err := filepath.Glob(filepath.Join("..", "..", "..", "operator", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("no generated CRDs under operator/config/crd/bases (err %v)", err)
	}
	chartCRDs, err := filepath.Glob(filepath.Join(chartDir("kof-mothership"), "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(chartCRDs) != len(generated) {
		t.Errorf("chart has %d CRDs, operator/config/crd/bases %d; run charts/kof-mothership/generate.sh", len(chartCRDs), len(generated))
	}
	for _, g := range generated {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(chartDir("kof-mothership"), "crds", filepath.Base(g)))
		if err != nil {
			t.Errorf("chart lacks %s: %v", filepath.Base(g), err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("crds/%s differs from the generated CRD; run charts/kof-mothership/generate.sh", filepath.Base(g))
		}
	}
}
