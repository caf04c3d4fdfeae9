package mgmt

import (
	"path/filepath"
	"testing"

	"kof.dev/kof/chartlib/values"
)

// chartsRoot is the repository's charts directory.
var chartsRoot = filepath.Join("..", "..", "..", "charts")

// TestUmbrellaConsistentWithComponents: every default under `<component>.values` of the umbrella exists in that
// component chart with a compatible type (what `kof check values` checks without -f).
func TestUmbrellaConsistentWithComponents(t *testing.T) {
	findings, err := values.Consistency(chartsRoot, "kof", values.PassThroughAllowList())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Errorf("%v", f)
	}
}

// TestScenarioValuesCheck: `kof check values` accepts the umbrella inputs of the scenarios that hold at the umbrella
// level, and reports scenario 14's typo with its path and the fix.
func TestScenarioValuesCheck(t *testing.T) {
	checker := values.NewChecker(chartsRoot)
	for _, s := range []string{"01-regional-child", "02-regionless", "03-regionless-selfsigned", "05-m2m", "06-m2m-non-k0s", "07-m2m-storage-overrides", "08-m2r", "13-audit-cluster-disabled"} {
		findings, err := checker.CheckFiles("kof", []string{scenario(s)})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for _, f := range findings {
			t.Errorf("%s: %v", s, f)
		}
	}
	findings, err := checker.CheckFiles("kof", []string{scenario("14-values-typo")})
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 1 || findings[0].Path != "kof-child.values.fromManagement.toManagmentCluster" || !contains(findings[0].Message, "toManagementCluster") {
		t.Errorf("scenario 14 findings %v, want one naming kof-child.values.fromManagement.toManagmentCluster with the fix", findings)
	}
}
