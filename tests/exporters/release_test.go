package exporters

import (
	"path/filepath"

	"kof.dev/kof/internal/harness"
)

// installRelease returns the release of chart in the release namespace with values.
func installRelease(chart string, values map[string]any) harness.Release {
	return harness.Release{Name: chart, Namespace: namespace, ChartDir: filepath.Join(root, "charts", chart), Values: values}
}
