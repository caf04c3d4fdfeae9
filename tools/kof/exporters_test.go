package main

import (
	"strings"
	"testing"
)

// TestCheckValuesExporterCharts checks that `kof check values --chart <exporter>` accepts the user guide's values
// and reports a misspelled key with a suggestion and a wrong type, each with its full path.
func TestCheckValuesExporterCharts(t *testing.T) {
	cases := []struct {
		chart, good, bad string
		want             []string
	}{
		{"cold-storage-exporter", "testdata/cold-values.yaml", "testdata/cold-values-typo.yaml",
			[]string{"s3.usePathstyle: unknown key; did you mean usePathStyle?", "s3.existingSecret: wrong type"}},
		{"audit-logs-exporter", "testdata/audit-values.yaml", "testdata/audit-values-typo.yaml",
			[]string{"complianceMod: unknown key; did you mean complianceMode?", "window.catchUpHours: wrong type"}},
	}
	for _, c := range cases {
		if code, out, errOut := kof(t, "check", "values", "--charts", "../../charts", "--chart", c.chart, "-f", c.good); code != exitClean {
			t.Errorf("%s: the user guide's values: exit %d\n%s%s", c.chart, code, out, errOut)
		}
		code, out, _ := kof(t, "check", "values", "--charts", "../../charts", "--chart", c.chart, "-f", c.bad)
		if code != exitFindings {
			t.Errorf("%s: exit %d, want %d", c.chart, code, exitFindings)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.chart, w, out)
			}
		}
	}
}
