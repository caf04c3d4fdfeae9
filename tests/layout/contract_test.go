package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestContractListsTheOperatorEnvironment fails when the environment variables the operator reads
// (operator/config, every `Env... = "..."` constant) and those docs/contract.md lists under "Operator environment"
// differ: a variable renamed or added in one place must be renamed or added in the other.
func TestContractListsTheOperatorEnvironment(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "operator", "config", "config.go"))
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, m := range regexp.MustCompile(`(?m)^\s*Env[A-Za-z]+\s*=\s*"([A-Z_]+)"`).FindAllSubmatch(src, -1) {
		code = append(code, string(m[1]))
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "contract.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)## Operator environment\n(.*?)\n## ").FindSubmatch(doc)
	if section == nil {
		t.Fatal(`docs/contract.md has no "## Operator environment" section followed by another section`)
	}
	var listed []string
	for _, m := range regexp.MustCompile("`([A-Z][A-Z_]+)`").FindAllSubmatch(section[1], -1) {
		listed = append(listed, string(m[1]))
	}
	slices.Sort(code)
	slices.Sort(listed)
	code, listed = slices.Compact(code), slices.Compact(listed)
	if len(code) < 20 {
		t.Fatalf("only %d Env constants found in operator/config/config.go", len(code))
	}
	if diff := cmp.Diff(code, listed); diff != "" {
		t.Errorf("operator environment: operator/config (-) vs docs/contract.md (+):\n%s", diff)
	}
}
