package exporters

import (
	"path/filepath"

	"kof.dev/kof/chartlib/install"
)

// installRelease returns the release of chart in the release namespace with values.
func installRelease(chart string, values map[string]any) install.Release {
	return install.Release{Name: chart, Namespace: namespace, ChartDir: filepath.Join(root, "charts", chart), Values: values}
}
