package layout

import (
	"fmt"
	"slices"
	"strings"
)

// Module is the module path of the repository (go.mod).
const Module = "kof.dev/kof"

// An area is a product or a support layer of the repository: a top folder, except internal/, whose folders are
// areas of their own because they sit at both ends of the graph (internal/proc below everything, internal/harness
// above the products it drives).
//
// areaRank orders the areas (docs/design.md, "The import rule"): a package may import a package of its own area or of
// an area of a lower rank, never one of the same rank in another area nor one of a higher rank. So the operator and
// the exporters import neither each other nor the renderer (chartlib) or the doctor, the renderer never imports the
// doctor, the tenant proxy (tenancy) reads the operator's definition of the tenant label but not the renderer, and
// nothing imports the in-cluster programs (cmd) or the CLI (tools). The charts' Go package (the charts
// embedded) ranks above the renderer because its tests render them.
var areaRank = map[string]int{
	"internal/proc":     0,
	"internal/testproc": 1,
	"operator":          2,
	"exporters":         2,
	"chartlib":          3,
	"tenancy":           3,
	"doctor":            4,
	"charts":            4,
	"release":           4,
	"internal/golden":   5,
	"internal/vmauth":   5,
	"internal/harness":  5,
	"cmd":               6,
	"tools":             6,
	"tests":             7,
}

// testSupport are the areas any package's tests may import whatever their rank: golden files and the vmauth
// translation are test support that imports the products it checks.
var testSupport = []string{"internal/golden", "internal/vmauth"}

// sinks are the areas nothing imports, whatever its rank.
var sinks = []string{"cmd", "tools", "tests"}

// goPackage is what `go list -json` says of one package: its import path and the module's packages it imports.
type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// areaOf returns the area of a package of the module (its path relative to the module), or "" for a package of
// another module.
func areaOf(importPath string) string {
	rel, ok := strings.CutPrefix(importPath, Module+"/")
	if !ok {
		return ""
	}
	parts := strings.Split(rel, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return "internal/" + parts[1]
	}
	return parts[0]
}

// importProblems returns one message per import of pkgs that breaks the rule of areaRank, and one per package in an
// area the rule does not know.
func importProblems(pkgs []goPackage) []string {
	var out []string
	for _, p := range pkgs {
		from := areaOf(p.ImportPath)
		if _, ok := areaRank[from]; !ok {
			out = append(out, fmt.Sprintf("package %s is in area %q, which the import rule does not rank: add it to "+
				"areaRank (tests/layout/imports.go) and to the rule in docs/design.md", p.ImportPath, from))
			continue
		}
		for _, imp := range p.Imports {
			out = append(out, checkImport(p.ImportPath, from, imp, false)...)
		}
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
			out = append(out, checkImport(p.ImportPath, from, imp, true)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkImport returns the problem of one import of pkg (in area from), if any.
func checkImport(pkg, from, imp string, test bool) []string {
	to := areaOf(imp)
	if to == "" || to == from {
		return nil
	}
	what := "imports"
	if test {
		what = "imports in its tests"
		if slices.Contains(testSupport, to) {
			return nil
		}
	}
	rank, ok := areaRank[to]
	switch {
	case !ok:
		return []string{fmt.Sprintf("%s %s %s, in area %q, which the import rule does not rank", pkg, what, imp, to)}
	case slices.Contains(sinks, to):
		return []string{fmt.Sprintf("%s %s %s: nothing imports %s/ (docs/design.md, \"The import rule\")",
			pkg, what, imp, to)}
	case rank >= areaRank[from]:
		return []string{fmt.Sprintf("%s %s %s: %s may not import %s (docs/design.md, \"The import rule\")",
			pkg, what, imp, from, to)}
	}
	return nil
}
