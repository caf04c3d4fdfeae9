package scenarios

import (
	"context"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"kof.dev/kof/chartlib/collector"
	"kof.dev/kof/chartlib/fleet"
)

// otelcol is the Validator of the KOF collector distribution in the repository's bin/ (built by `make tools`).
var otelcol = sync.OnceValues(func() (*collector.Validator, error) {
	return collector.NewValidator(context.Background(), filepath.Join("..", "..", "bin", "otelcol"))
})

// validateCollectors runs `otelcol validate` on every OpenTelemetryCollector config of every cluster of f and
// returns how many it validated. A component the distribution cannot build is logged as UNVERIFIED with the config
// it is in; every other failure fails the test.
func validateCollectors(t *testing.T, name string, f *fleet.Fleet) int {
	t.Helper()
	v, err := otelcol()
	if err != nil {
		t.Fatalf("the KOF collector distribution: %v", err)
	}
	n := 0
	for _, c := range f.Clusters {
		for _, s := range c.Services {
			if s.Objects == nil {
				continue
			}
			cfgs, err := collector.FromObjects(name+"/"+c.Name+"/"+s.Name, s.Objects.Objects())
			if err != nil {
				t.Error(err)
				continue
			}
			for _, cfg := range cfgs {
				res, err := v.Validate(context.Background(), cfg)
				if err != nil {
					t.Error(err)
					continue
				}
				n++
				for _, u := range res.Unverified {
					t.Logf("UNVERIFIED %s: %s (its module is not served at %s; the rest of the config is validated)",
						cfg.Source, u, v.Release)
				}
			}
		}
	}
	return n
}

// TestScenarioCollectorsValidate: every collector config `kof render` produces for every scenario that renders is
// accepted by `otelcol validate` of the KOF distribution (09 and 14 render nothing by design: their own tests).
func TestScenarioCollectorsValidate(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			n := validateCollectors(t, sc.name, mustRender(t, sc.name))
			if n == 0 {
				t.Errorf("no collector config rendered")
			}
			t.Logf("%d collector configs validated", n)
		})
	}
}

// TestUmbrellaCICollectorsValidate: the same for every ci/ values file of the kof umbrella chart, rendered for the
// standard clusters.
func TestUmbrellaCICollectorsValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartsDir, "kof", "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ci/ values files of the kof chart (err %v)", err)
	}
	sort.Strings(files)
	v, err := validator()
	if err != nil {
		t.Fatalf("validator: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			f, err := fleet.Render(context.Background(), fleet.Options{
				ChartsDir:   chartsDir,
				ValuesFiles: []string{file},
				Clusters:    loadObjects(t, filepath.Join("testdata", "clusters-standard.yaml")),
				Validator:   v,
			})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			t.Logf("%d collector configs validated", validateCollectors(t, filepath.Base(file), f))
		})
	}
}
