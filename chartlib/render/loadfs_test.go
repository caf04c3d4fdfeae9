package render

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadFS(t *testing.T) {
	fsys := fstest.MapFS{
		"c/Chart.yaml":             {Data: []byte("\xEF\xBB\xBFapiVersion: v2\nname: c\nversion: 1.0.0\n")},
		"c/.helmignore":            {Data: []byte("ci/\n*.md\n")},
		"c/values.yaml":            {Data: []byte("a: 1\n")},
		"c/templates/cm.yaml":      {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")},
		"c/templates/_helpers.tpl": {Data: []byte(`{{ define "c.x" }}x{{ end }}`)},
		"c/ci/01-values.yaml":      {Data: []byte("a: 2\n")},
		"c/README.md":              {Data: []byte("# c\n")},
		"other/Chart.yaml":         {Data: []byte("apiVersion: v2\nname: other\nversion: 1.0.0\n")},
	}
	c, err := LoadFS(fsys, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "c" || c.Values["a"] != float64(1) {
		t.Errorf("chart %s values %v, want c with a=1", c.Name(), c.Values)
	}
	var names []string
	for _, f := range c.Raw {
		names = append(names, f.Name)
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"Chart.yaml", "values.yaml", "templates/cm.yaml", "templates/_helpers.tpl", ".helmignore"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Errorf("files %s: %s missing", got, want)
		}
	}
	if strings.Contains(got, "ci/") || strings.Contains(got, "README.md") {
		t.Errorf("files %s: .helmignore'd files loaded", got)
	}
	if _, err := LoadFS(fsys, "missing"); err == nil || !strings.Contains(err.Error(), `load chart "missing"`) {
		t.Errorf("missing chart: error %v, want one naming the folder", err)
	}
	bad := fstest.MapFS{"b/Chart.yaml": {Data: []byte("name: [\n")}}
	if _, err := LoadFS(bad, "b"); err == nil || !strings.Contains(err.Error(), `load chart "b"`) {
		t.Errorf("invalid Chart.yaml: error %v, want one naming the folder", err)
	}
}
