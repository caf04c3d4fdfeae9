package validate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"kof.dev/kof/chartlib/render"
)

// requiredValues are charts whose defaults alone cannot render (the user must name a bucket): their defaults case
// must fail with a message naming the key, and every ci/ case must validate.
var requiredValues = map[string]string{
	"cold-storage-exporter": "s3.bucket is required",
	"audit-logs-exporter":   "s3.bucket is required",
}

// TestRepositoryChartsValidate renders every chart of the repository with its defaults and with each
// ci/*-values.yaml file, and requires every rendered object to pass its API schema and KOF's rules.
func TestRepositoryChartsValidate(t *testing.T) {
	charts, err := filepath.Glob("../../charts/*/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) == 0 {
		t.Fatal("no charts under ../../charts")
	}
	v := validator(t)
	for _, chartYAML := range charts {
		dir := filepath.Dir(chartYAML)
		c, err := render.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob(filepath.Join(dir, "ci", "*-values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append([]string{""}, files...) {
			name := filepath.Base(dir) + "/defaults"
			if f != "" {
				name = filepath.Base(dir) + "/" + strings.TrimSuffix(filepath.Base(f), "-values.yaml")
			}
			t.Run(name, func(t *testing.T) {
				opts := render.Options{Chart: c, Namespace: "kof", ReleaseName: filepath.Base(dir)}
				if f != "" {
					opts.ValuesFiles = []string{f}
				}
				set, err := render.Chart(context.Background(), opts)
				if want, ok := requiredValues[filepath.Base(dir)]; ok && f == "" {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("defaults: %v; want an error containing %q", err, want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, fd := range v.Set(set) {
					t.Errorf("%s", fd)
				}
			})
		}
	}
}
