package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `kof diff` exits 0 without a change, 1 with changes (text and json) and 2 on a usage error, naming the flag.
func TestDiffExitCodes(t *testing.T) {
	clusters := filepath.Join(scenarioDir, "clusters-standard.yaml")
	code, out, errOut := kof(t, "diff", "--from-charts", "../../charts", "--to-charts", "../../charts",
		"--clusters", clusters)
	if code != 0 || !strings.Contains(out, "4 clusters: 0 changed, 4 unchanged") {
		t.Errorf("no change: exit %d, stdout %q, stderr %q; want exit 0", code, out, errOut)
	}
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("catalog:\n  cert-manager:\n    version: v1.19.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = kof(t, "diff", "--to-values", values, "--clusters", clusters)
	if code != 1 || !strings.Contains(out, `~ release cert-manager/cert-manager`) ||
		!strings.Contains(out, `version: "v1.19.1" → "v1.19.2"`) {
		t.Errorf("values change: exit %d, stdout %q, stderr %q; want exit 1 and the cert-manager release", code, out,
			errOut)
	}
	code, out, _ = kof(t, "diff", "--to-values", values, "--clusters", clusters, "-o", "json")
	var r struct {
		ExitCode int `json:"exitCode"`
		Summary  struct {
			ChangedClusters int `json:"changedClusters"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 || r.ExitCode != 1 || r.Summary.ChangedClusters != 2 {
		t.Errorf("json: exit %d, %+v (%v); want exit 1 and 2 changed clusters\n%s", code, r, err, out)
	}
	for _, args := range [][]string{
		{"diff", "--from-charts", "oci://registry.example.com/kof/charts", "--clusters", clusters},
		{"diff", "--from-values", values},
		{"diff", "--live", "--clusters", clusters},
	} {
		code, _, errOut := kof(t, args...)
		if code != 2 || !strings.Contains(errOut, "--") {
			t.Errorf("kof %v: exit %d, stderr %q; want exit 2 naming the flag", args, code, errOut)
		}
	}
}
