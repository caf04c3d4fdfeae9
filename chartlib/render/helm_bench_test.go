package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// helmBinary returns the helm CLI built by ci/tools.sh (HELM overrides it).
func helmBinary() string {
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	return filepath.Join("..", "..", "bin", "helm")
}

// BenchmarkHelmTemplate runs `helm template` on the chart BenchmarkRepositoryChartFromDisk renders, so one
// `go test -bench Repository|HelmTemplate` run gives both timings (make bench prints their ratio). It fails when
// bin/helm is missing (run `make tools`).
func BenchmarkHelmTemplate(b *testing.B) {
	helm := helmBinary()
	if _, err := os.Stat(helm); err != nil {
		b.Fatalf("helm CLI: %v (run `make tools`)", err)
	}
	for b.Loop() {
		cmd := exec.Command(helm, "template", "kof-mothership", "../../charts/kof-mothership", "--namespace", "kof")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("helm template: %v\n%s", err, out)
		}
	}
}
