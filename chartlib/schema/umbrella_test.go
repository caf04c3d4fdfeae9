package schema_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/schema"
)

// umbrella is the repository's umbrella chart, whose committed values.schema.json embeds the component schemas.
const umbrella = "../../charts/kof"

// TestUmbrellaSchemaRejectsComponentTypos renders charts/kof as `helm template` does with a misspelled key inside a
// component's values (and one handed on from kof-child to kof-storage) and wants Helm's schema validation to fail,
// naming the object and the key.
func TestUmbrellaSchemaRejectsComponentTypos(t *testing.T) {
	for _, tc := range []struct {
		name, values, at, key string
	}{
		{"kof-storage", "kof-storage:\n  values:\n    victoriametrics:\n      vlcluster_adit: {}\n",
			"/kof-storage/values/victoriametrics", "vlcluster_adit"},
		{"kof-mothership", "kof-mothership:\n  values:\n    promxi: {}\n", "/kof-mothership/values", "promxi"},
		{"kof-collectors", "kof-collectors:\n  values:\n    opentelemetry-kube-stak: {}\n",
			"/kof-collectors/values", "opentelemetry-kube-stak"},
		{"kof-child", "kof-child:\n  values:\n    storag: {}\n", "/kof-child/values", "storag"},
		{"kof-child storage handoff", "kof-child:\n  values:\n    storage:\n      victoriametrics:\n        vlcluster_adit: {}\n",
			"/kof-child/values/storage/victoriametrics", "vlcluster_adit"},
		{"kof-child fromManagement.collectors handoff",
			"kof-child:\n  values:\n    fromManagement:\n      collectors:\n        opentelemetry-kube-stak: {}\n",
			"/kof-child/values/fromManagement/collectors", "opentelemetry-kube-stak"},
		{"kof-regional storage handoff", "kof-regional:\n  values:\n    storage:\n      victoriametrics:\n        vlcluster_adit: {}\n",
			"/kof-regional/values/storage/victoriametrics", "vlcluster_adit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(file, []byte(tc.values), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := render.Chart(context.Background(), render.Options{ChartDir: umbrella, ValuesFiles: []string{file}})
			if err == nil {
				t.Fatalf("rendering charts/kof with %q succeeded, want a schema error", tc.values)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.at) || !strings.Contains(msg, tc.key) {
				t.Errorf("error does not name %s and %q:\n%s", tc.at, tc.key, msg)
			}
		})
	}
}

// TestUmbrellaSchemaAcceptsScenario07 renders charts/kof with the M2M storage overrides of the "Storing KOF data"
// guide (kof-child.values.storage.<kof-storage values>) and wants no error.
func TestUmbrellaSchemaAcceptsScenario07(t *testing.T) {
	file := "../../tests/scenarios/testdata/07-m2m-storage-overrides/values.yaml"
	if _, err := render.Chart(context.Background(), render.Options{ChartDir: umbrella, ValuesFiles: []string{file}}); err != nil {
		t.Fatalf("render charts/kof -f %s: %v", file, err)
	}
}

// TestGenerateComposed embeds a receiving chart's schema at an open handoff path, through a `*` segment, and leaves
// third-party components (no chart directory) and closed subtrees alone.
func TestGenerateComposed(t *testing.T) {
	dir := t.TempDir()
	write := func(chart, values string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, chart), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"Chart.yaml": "name: " + chart + "\n", "values.yaml": values} {
			if err := os.WriteFile(filepath.Join(dir, chart, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("top", "comp:\n  # @schema passthrough\n  # -- Values of comp.\n  values: {}\n"+
		"third:\n  # @schema passthrough\n  values: {}\n"+
		"closed:\n  values:\n    a: 1\n")
	write("comp", "inner:\n  # @schema passthrough\n  leaf: {}\nx: 1\n")
	write("leaf", "y: true\n")
	write("closed", "b: 1\n")
	got, err := schema.GenerateComposed(dir, "top", schema.Handoffs{
		"top":  {"*.values": "*"},
		"comp": {"inner.leaf": "leaf"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, want := range []string{`"x": {`, `"y": {`, `"description": "Values of comp."`} {
		if !strings.Contains(s, want) {
			t.Errorf("composed schema lacks %s:\n%s", want, s)
		}
	}
	if strings.Count(s, `"$schema"`) != 1 || strings.Contains(s, `"b": {`) {
		t.Errorf("want one $schema and closed.values kept as the top chart typed it:\n%s", s)
	}
}
