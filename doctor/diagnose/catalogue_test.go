package diagnose

import (
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// catalogueRow matches one row of the findings catalogue in docs/ui.md: | `Code` | severity | meaning | fix |.
var catalogueRow = regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| (error|warning|info) \\| [^|]+ \\| [^|]+ \\|$")

// The findings catalogue of docs/ui.md lists every code of Catalogue, in its order, with its severity.
func TestCatalogueDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ui.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented, want []CatalogueEntry
	for _, m := range catalogueRow.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, CatalogueEntry{Code(m[1]), Severity(m[2])})
	}
	want = Catalogue()
	if diff := cmp.Diff(want, documented); diff != "" {
		t.Errorf("docs/ui.md findings catalogue (-Catalogue +docs):\n%s", diff)
	}
}

// Every code the package defines is in the catalogue once.
func TestCatalogueComplete(t *testing.T) {
	src, err := os.ReadFile("finding.go")
	if err != nil {
		t.Fatal(err)
	}
	defined := regexp.MustCompile(`(?m)^\s+Code[A-Za-z]+ Code = "([A-Za-z]+)"$`).FindAllStringSubmatch(string(src), -1)
	seen := map[Code]int{}
	for _, e := range Catalogue() {
		seen[e.Code]++
	}
	for _, m := range defined {
		if seen[Code(m[1])] != 1 {
			t.Errorf("code %s appears %d times in Catalogue, want once", m[1], seen[Code(m[1])])
		}
	}
	if len(defined) != len(Catalogue()) {
		t.Errorf("%d codes defined, %d in Catalogue", len(defined), len(Catalogue()))
	}
}
