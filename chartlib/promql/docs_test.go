package promql

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// alertsDoc is the runbook: a `## <group>` section per rule group and a `### <alert>` section per alert, each
// saying what the alert means and what to do.
const alertsDoc = "../../docs/alerts.md"

// TestRunbookListsEveryAlert: docs/alerts.md has, in the rules file's order, a section for every alert of
// KOF's default rules under its group, each with a **Means:** and a **Do:** part, and no section for an alert that
// does not exist.
func TestRunbookListsEveryAlert(t *testing.T) {
	data, err := os.ReadFile(alertsDoc)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range readRules(t) {
		if r.Alert != "" {
			want = append(want, r.Group+"/"+r.Alert)
		}
	}
	if len(want) == 0 {
		t.Fatalf("no alerts in %s", rulesFile)
	}
	var got []string
	group := ""
	for _, section := range regexp.MustCompile(`(?m)^#{2,3} `).Split(string(data), -1)[1:] {
		title, body, _ := strings.Cut(section, "\n")
		if !strings.HasPrefix(body, "**Means:**") && strings.HasPrefix(title, "KOF") {
			t.Errorf("%s: section %s does not start with **Means:**", alertsDoc, title)
		}
		if strings.HasPrefix(title, "KOF") {
			if !strings.Contains(body, "**Do:**") {
				t.Errorf("%s: section %s has no **Do:**", alertsDoc, title)
			}
			got = append(got, group+"/"+title)
			continue
		}
		group = title
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: alert sections vs the alerts of %s (-rules +runbook):\n%s", alertsDoc, rulesFile, diff)
	}
}
