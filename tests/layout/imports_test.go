package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportRule fails for every import between areas that docs/design.md's import rule forbids, read from
// `go list` over the whole module (the packages' own imports and their tests').
func TestImportRule(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	for _, p := range importProblems(pkgs) {
		t.Error(p)
	}
}

// The rule finds planted forbidden imports: the operator importing an exporter and the renderer, the renderer the
// doctor, an exporter the operator in its tests, anything importing cmd/ or tools/, and an area it does not rank.
func TestImportRuleFindsPlantedViolations(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	for _, tt := range []struct {
		name string
		pkg  goPackage
		want string
	}{
		{"operator imports an exporter", goPackage{ImportPath: m("operator/outputs"),
			Imports: []string{m("exporters/bucket")}}, "operator may not import exporters"},
		{"operator imports the renderer", goPackage{ImportPath: m("operator/internal/apply"),
			Imports: []string{m("chartlib/render")}}, "operator may not import chartlib"},
		{"renderer imports the doctor", goPackage{ImportPath: m("chartlib/fleet"),
			Imports: []string{m("doctor/diagnose")}}, "chartlib may not import doctor"},
		{"exporter test imports the operator", goPackage{ImportPath: m("exporters/auditlog"),
			XTestImports: []string{m("operator/names")}}, "imports in its tests kof.dev/kof/operator/names"},
		{"the CLI imports a program", goPackage{ImportPath: m("tools/kof"),
			Imports: []string{m("cmd/kof-ui")}}, "nothing imports cmd/"},
		{"a test imports the CLI", goPackage{ImportPath: m("tests/e2e"),
			TestImports: []string{m("tools/kof")}}, "nothing imports tools/"},
		{"an unranked area", goPackage{ImportPath: m("newthing/x")}, `area "newthing"`},
	} {
		got := importProblems([]goPackage{tt.pkg})
		if len(got) != 1 || !strings.Contains(got[0], tt.want) {
			t.Errorf("%s: problems %q, want one naming %q", tt.name, got, tt.want)
		}
	}
	ok := []goPackage{
		{ImportPath: m("chartlib/fleet"), Imports: []string{m("operator/outputs"), m("chartlib/render"), "fmt"}},
		{ImportPath: m("doctor/diagnose"), Imports: []string{m("chartlib/fleet"), m("operator/names")}},
		{ImportPath: m("chartlib/schema"), TestImports: []string{m("internal/golden")}},
		{ImportPath: m("exporters/coldstorage"), TestImports: []string{m("internal/testproc")}},
		{ImportPath: m("cmd/kof-operator"), Imports: []string{m("operator")}},
		{ImportPath: m("tests/ui"), Imports: []string{m("internal/harness"), m("doctor/diagnose")}},
	}
	if got := importProblems(ok); len(got) != 0 {
		t.Errorf("allowed imports: problems %q, want none", got)
	}
}
