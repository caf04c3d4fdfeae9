package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsIndexListsEveryPage fails when a page of docs/ is not linked from docs/README.md, the index a newcomer
// reads first (regression: cold-storage.md and audit-logs.md were reachable from no index).
func TestDocsIndexListsEveryPage(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("found %d pages in docs/; want the manual", len(pages))
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if name != "README.md" && !strings.Contains(string(index), "]("+name+")") {
			t.Errorf("docs/README.md links no %s; add a row for it to the table of the operator manual", name)
		}
	}
}

// docRef is a reference to a page of docs/ in text.
var docRef = regexp.MustCompile(`docs/[A-Za-z0-9_-]+\.md`)

// TestDocReferencesExist fails when a chart, schema, Go file or page names a docs/ page that does not exist
// (regression: charts/kof-dashboards and chartlib/dashboards referred to a missing docs/dashboards.md).
func TestDocReferencesExist(t *testing.T) {
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if slices.Contains([]string{".git", "bin", "out", "dist"}, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".json", ".tpl", ".gotmpl", ".sh", ".txt":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, ref := range slices.Compact(docRef.FindAllString(string(data), -1)) {
			seen++
			if _, err := os.Stat(filepath.Join(root, ref)); err != nil {
				t.Errorf("%s names %s, which does not exist; write the page or name an existing one", rel, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("found %d references to docs/ pages; want the repository's", seen)
	}
}
