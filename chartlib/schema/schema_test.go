package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xeipuuv/gojsonschema"

	"kof.dev/kof/internal/golden"
)

func TestGenerateGolden(t *testing.T) {
	got, err := GenerateChart("testdata")
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "testdata/values.schema.json", got)

	var s map[string]any
	if err := json.Unmarshal(got, &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	for path, want := range map[string]any{
		"replicas.type":                   "integer",
		"replicas.description":            "Replica count, continued on a second line.",
		"ratio.type":                      "number",
		"enabled.type":                    "boolean",
		"components.uniqueItems":          true,
		"owned.additionalProperties":      false,
		"thirdParty.additionalProperties": true,
		"openTop.additionalProperties":    true,
	} {
		key, field, _ := strings.Cut(path, ".")
		if diff := cmp.Diff(want, props[key].(map[string]any)[field]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	if _, ok := props["extra"].(map[string]any)["type"]; ok {
		t.Error("null default got a type")
	}
	if _, ok := props["tolerations"].(map[string]any)["additionalProperties"]; ok {
		t.Error("additionalProperties kept on a list")
	}
	if _, ok := props["catalog"].(map[string]any)["properties"]; ok {
		t.Error("catalog with an entry schema listed its defaults as properties")
	}
}

func validate(t *testing.T, schemaJSON []byte, doc string) []string {
	t.Helper()
	res, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schemaJSON), gojsonschema.NewStringLoader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range res.Errors() {
		out = append(out, e.Field()+": "+e.Type())
	}
	return out
}

func TestGeneratedSchemaValidates(t *testing.T) {
	s, err := GenerateChart("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if errs := validate(t, s, `{"replicas": 3, "thirdParty": {"spec": {"any": {"thing": 1}}}, "openTop": {"new": 1},
		"catalog": {"two": {"chart": "x"}}, "extra": [1]}`); len(errs) != 0 {
		t.Errorf("valid values rejected: %v", errs)
	}
	got := validate(t, s, `{"replicas": "3", "regsitry": "x", "owned": {"nmae": "y"}, "openTop": {"closedChild": {"k": 1}},
		"components": ["c"], "catalog": {"two": {}}}`)
	want := []string{
		"(root): additional_property_not_allowed",
		"replicas: invalid_type",
		"components.0: enum",
		"owned: additional_property_not_allowed",
		"openTop.closedChild: additional_property_not_allowed",
		"catalog.two: required",
	}
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestGenerateErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"- a\n- b\n": "want a map",
		"a:\n  # @schema type: [string\n  b: 1\n": "a.b: marker",
		"base: &b {x: 1}\nother:\n  <<: *b\n":     "merge keys",
	} {
		_, err := Generate([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Regression: outside a checkout (no chart under the charts folder) `kof schema verify` checked nothing and exited
// 0; both modes now fail naming the folder and the fix.
func TestSyncWithoutChartsFails(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		for _, write := range []bool{false, true} {
			_, err := Sync(dir, filepath.Join(t.TempDir(), "schemas"), nil, nil, write)
			if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--charts") {
				t.Errorf("Sync(%s, write=%t) error = %v, want one naming the folder and --charts", dir, write, err)
			}
		}
	}
}

func TestSync(t *testing.T) {
	charts := t.TempDir()
	schemas := filepath.Join(t.TempDir(), "schemas")
	dir := filepath.Join(charts, "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
		"values.yaml": "# -- Port.\nport: 80\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	drift, err := Sync(charts, schemas, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) != 3 {
		t.Fatalf("drift before generate = %v, want schema copy, chart schema and modeline", drift)
	}
	if _, err := Sync(charts, schemas, nil, nil, true); err != nil {
		t.Fatal(err)
	}
	if drift, err := Sync(charts, schemas, nil, nil, false); err != nil || len(drift) != 0 {
		t.Fatalf("drift after generate = %v, %v", drift, err)
	}
	values, _ := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if want := Modeline + "\n\n# -- Port.\nport: 80\n"; string(values) != want {
		t.Errorf("values.yaml = %q, want %q", values, want)
	}
	copyA, _ := os.ReadFile(filepath.Join(schemas, "demo.schema.json"))
	copyB, _ := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if string(copyA) != string(copyB) || !strings.Contains(string(copyA), `"description": "Port."`) {
		t.Errorf("schema copies differ or lack the description:\n%s\n%s", copyA, copyB)
	}
	if err := os.WriteFile(filepath.Join(dir, "values.yaml"), append(values, []byte("host: x\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	drift, err = Sync(charts, schemas, []string{"demo"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) != 2 || !strings.Contains(drift[0].String(), "differs") {
		t.Errorf("drift after a values change = %v", drift)
	}
}

func TestLint(t *testing.T) {
	values := strings.Join([]string{
		"# @schema additionalProperties: true", // above the description: fine
		"# -- Open map.",
		"open: {}",
		"# -- Closed map.",
		"# continued description",
		"# @schema enum: [a, b]", // line 6: below the description
		"mode: a",
		"# plain comment, no description",
		"# @schema type: string", // no `# --` in this block: fine
		"name: x",
	}, "\n")
	got := Lint([]byte(values))
	if len(got) != 1 || !strings.HasPrefix(got[0], "line 6: ") {
		t.Errorf("Lint = %v, want one problem at line 6", got)
	}
}
