package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// controllerName finds the value of the package-level constant Name in the non-test Go files of dir ("" if none).
func controllerName(t *testing.T, dir string) string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if n.Name != "Name" || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							return v
						}
					}
				}
			}
		}
	}
	return ""
}

// docControllerRow is a row of docs/operator.md's controller table: "| `kof-<duty>` | input | output |".
var docControllerRow = regexp.MustCompile("(?m)^\\| `(kof-[a-z]+)` \\|")

// TestControllersShareOneNamingScheme fails when a controller package of the operator lacks the constant Name,
// names itself outside the kof-<duty> scheme (the one name of its metrics, logger and events), or is missing from
// (or unknown to) the controller table of docs/operator.md (regression: three controllers named their metrics
// without the kof- prefix their events and the docs used).
func TestControllersShareOneNamingScheme(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(root, "operator", "internal", "controller", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		name := controllerName(t, dir)
		want := "kof-" + filepath.Base(dir)
		if name != want {
			t.Errorf("operator/internal/controller/%s: const Name = %q; want %q (the controller's metrics, logger "+
				"and events all use it)", filepath.Base(dir), name, want)
		}
		names = append(names, want)
	}
	if len(names) < 5 {
		t.Fatalf("found %d controller packages; want the operator's five", len(names))
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "operator.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range docControllerRow.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(names)
	slices.Sort(documented)
	if !slices.Equal(names, documented) {
		t.Errorf("docs/operator.md's controller table lists %v; the operator's controllers are %v", documented, names)
	}
}
