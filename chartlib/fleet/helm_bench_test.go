package fleet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// helmBinary is the helm built by `make tools` (ci/tools.sh).
const helmBinary = "../../bin/helm"

// helmRun is one `helm template` invocation equivalent to one chart render of the fleet.
type helmRun struct {
	release, namespace, chart, values string
}

// helmRuns renders the benchmark fleet once and returns one `helm template` run per local chart render (the
// umbrella, the management releases, every cluster's KOF services), with the same values written to dir.
func helmRuns(b *testing.B, dir string) []helmRun {
	b.Helper()
	f, err := Render(context.Background(), Options{ChartsDir: chartsDir, Clusters: benchClusters()})
	if err != nil {
		b.Fatal(err)
	}
	var runs []helmRun
	for _, c := range f.Clusters {
		for _, s := range c.Services {
			if !chartRender(s) { // plain resources have no chart: helm cannot template them
				continue
			}
			data, err := yaml.Marshal(s.Values)
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(dir, c.Dir+"-"+s.Name+".yaml")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			runs = append(runs, helmRun{release: s.Name, namespace: s.Namespace, chart: filepath.Join(chartsDir, s.Chart), values: path})
		}
	}
	return runs
}

// BenchmarkHelmTemplateFleet runs `bin/helm template` once per chart render of BenchmarkFleet's fleet (the same
// charts, release names, namespaces and values; as many at once as BenchmarkFleet renders clusters), the baseline
// BenchmarkFleet is compared with. Layer 2, the operator's outputs and validation are not included: helm cannot
// do them. It needs bin/helm (`make tools`).
func BenchmarkHelmTemplateFleet(b *testing.B) {
	helm, err := filepath.Abs(helmBinary)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(helm); err != nil {
		b.Fatalf("%s not found: build the tools with `make tools`: %v", helmBinary, err)
	}
	runs := helmRuns(b, b.TempDir())
	cpu := cpuTime(b)
	for b.Loop() {
		jobs := make(chan helmRun)
		errs := make(chan error, len(runs))
		var wg sync.WaitGroup
		for range workers(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range jobs {
					cmd := exec.Command(helm, "template", r.release, r.chart, "-n", r.namespace, "-f", r.values)
					if out, err := cmd.CombinedOutput(); err != nil {
						errs <- &helmError{run: r, out: string(out), err: err}
					}
				}
			}()
		}
		for _, r := range runs {
			jobs <- r
		}
		close(jobs)
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(runs)), "renders/op")
	reportCPU(b, cpu)
}

// helmError is a failed `helm template` run.
type helmError struct {
	run helmRun
	out string
	err error
}

func (e *helmError) Error() string {
	return "helm template " + e.run.release + " " + e.run.chart + ": " + e.err.Error() + "\n" + e.out
}
