package dashboards

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// dashboardsDoc is the page that lists every KOF dashboard, one `### kof-<name>` section each.
const dashboardsDoc = "../../docs/dashboards.md"

// TestDocsListEveryDashboard: docs/dashboards.md has a section for every dashboard All builds, titled by its uid and
// naming its title, and no section for a dashboard that does not exist.
func TestDocsListEveryDashboard(t *testing.T) {
	data, err := os.ReadFile(dashboardsDoc)
	if err != nil {
		t.Fatal(err)
	}
	sections := regexp.MustCompile(`(?m)^### (\S+)\n\n\*\*([^*]+)\.\*\*`).FindAllStringSubmatch(string(data), -1)
	documented := map[string]string{}
	var order []string
	for _, s := range sections {
		documented[s[1]] = s[2]
		order = append(order, s[1])
	}
	var want []string
	for _, b := range boards(t) {
		uid := "kof-" + b.Name
		want = append(want, uid)
		if got, ok := documented[uid]; !ok {
			t.Errorf("%s: dashboard %s has no section `### %s` (with its title in bold)", dashboardsDoc, uid, uid)
		} else if got != deref(b.Dashboard.Title) {
			t.Errorf("%s: section %s names %q, the dashboard's title is %q", dashboardsDoc, uid, got, deref(b.Dashboard.Title))
		}
	}
	for _, uid := range order {
		if !slices.Contains(want, uid) {
			t.Errorf("%s: section %s is not a KOF dashboard", dashboardsDoc, uid)
		}
	}
}
