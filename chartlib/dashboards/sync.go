package dashboards

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ChartDirs are the folders, relative to the repository root, that hold the dashboards' JSON files: the same files
// for the management cluster's Grafana (charts/kof-dashboards) and a regional cluster's (charts/kof-storage
// `grafana.enabled`), generated once from All; a Helm chart reads only files inside its own folder.
var ChartDirs = []string{"charts/kof-dashboards/files/dashboards", "charts/kof-storage/files/dashboards"}

// Sync compares the JSON file of every dashboard (`<dir>/<name>.json`) with what All builds, and returns one line
// per difference (`<path>: out of date`, `<path>: missing`, `<path>: not a KOF dashboard`) in path order. With write,
// it also writes the missing and changed files and removes `.json` files no dashboard has. Errors: building a
// dashboard, or reading or writing dir.
func Sync(dir string, write bool) ([]string, error) {
	boards, err := All()
	if err != nil {
		return nil, err
	}
	want := map[string][]byte{}
	for _, b := range boards {
		data, err := JSON(b.Dashboard)
		if err != nil {
			return nil, err
		}
		want[filepath.Join(dir, b.Name+".json")] = data
	}
	existing, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list dashboards in %q: %w", dir, err)
	}
	var drift []string
	for _, path := range existing {
		if _, ok := want[path]; !ok {
			drift = append(drift, path+": not a KOF dashboard")
			if write {
				if err := os.Remove(path); err != nil {
					return nil, fmt.Errorf("remove stale dashboard: %w", err)
				}
			}
		}
	}
	for path, data := range want {
		have, err := os.ReadFile(path)
		switch {
		case os.IsNotExist(err):
			drift = append(drift, path+": missing")
		case err != nil:
			return nil, fmt.Errorf("read dashboard: %w", err)
		case !bytes.Equal(have, data):
			drift = append(drift, path+": out of date")
		default:
			continue
		}
		if write {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("create %q: %w", dir, err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return nil, fmt.Errorf("write dashboard: %w", err)
			}
		}
	}
	sort.Slice(drift, func(i, j int) bool { return strings.SplitN(drift[i], ":", 2)[0] < strings.SplitN(drift[j], ":", 2)[0] })
	return drift, nil
}
