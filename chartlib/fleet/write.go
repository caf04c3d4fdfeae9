package fleet

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// File names written per service by Write.
const (
	// ManifestFile holds the rendered objects of a local chart.
	ManifestFile = "manifest.yaml"
	// ValuesFile holds the service's final values.
	ValuesFile = "values.yaml"
	// ChartFile holds the chart reference of a service (always; the only record of a third-party service's chart).
	ChartFile = "chart.yaml"
	// ErrorFile holds the failure of a service that could not be instantiated or rendered.
	ErrorFile = "error.txt"
	// ClusterErrorsFile holds the cluster's own errors and validation findings, one per line.
	ClusterErrorsFile = "errors.txt"
)

// chartRef is the content of ChartFile.
type chartRef struct {
	Via        string   `json:"via"`
	Template   string   `json:"template,omitempty"`
	Repository string   `json:"repository,omitempty"`
	Chart      string   `json:"chart"`
	Version    string   `json:"version,omitempty"`
	Release    string   `json:"release"`
	Namespace  string   `json:"namespace"`
	DependsOn  []string `json:"dependsOn,omitempty"`
	Rendered   bool     `json:"rendered"`
	// Resources marks a service of plain resources (no chart, no Helm release).
	Resources bool `json:"resources,omitempty"`
}

// Write stores f under dir: for each cluster and service `<dir>/<cluster>/<service>/` with ManifestFile (local
// charts; a Secret's data values replaced by a digest, manifest.RedactSecret, because a live render carries the
// operator's generated credentials), ValuesFile, ChartFile and, on failure, ErrorFile; each cluster's problems in
// `<dir>/<cluster>/errors.txt` when it has any. Directories are created as needed; existing files are replaced.
// It returns the first file system or marshalling error, naming the file.
func Write(dir string, f *Fleet) error {
	for _, c := range f.Clusters {
		cdir := filepath.Join(dir, c.Dir)
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", cdir, err)
		}
		if probs := c.Problems(); len(probs) > 0 {
			if err := writeFile(filepath.Join(cdir, ClusterErrorsFile), []byte(strings.Join(probs, "\n")+"\n")); err != nil {
				return err
			}
		}
		for _, s := range c.Services {
			if err := writeService(filepath.Join(cdir, serviceDir(c, s)), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// serviceDir returns the directory name of s in c: the release name, or `<namespace>.<name>` when c has two
// releases of that name, followed by `.<n>` for the n-th (n ≥ 2) release of the same namespace and name (a release
// delivered twice, which Fleet reports), so that no release's files replace another's.
func serviceDir(c *Cluster, s *Service) string {
	sameName, sameRelease, nth := 0, 0, 0
	for _, o := range c.Services {
		if o.Name != s.Name {
			continue
		}
		sameName++
		if o.Namespace == s.Namespace {
			sameRelease++
			if o == s {
				nth = sameRelease
			}
		}
	}
	dir := s.Name
	if sameName > 1 {
		dir = s.Namespace + "." + s.Name
	}
	if nth > 1 {
		dir += "." + strconv.Itoa(nth)
	}
	return filepath.Base(dir)
}

// writeService writes the files of one service into dir.
func writeService(dir string, s *Service) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	ref, err := yaml.Marshal(chartRef{Via: s.Via, Template: s.Template, Repository: s.Repository, Chart: s.Chart,
		Version: s.Version, Release: s.Name, Namespace: s.Namespace, DependsOn: s.DependsOn, Rendered: s.Objects != nil,
		Resources: s.Resources})
	if err != nil {
		return fmt.Errorf("marshal chart reference of %s: %w", s.Name, err)
	}
	if err := writeFile(filepath.Join(dir, ChartFile), ref); err != nil {
		return err
	}
	if s.Values != nil {
		vals, err := yaml.Marshal(s.Values)
		if err != nil {
			return fmt.Errorf("marshal values of %s: %w", s.Name, err)
		}
		if err := writeFile(filepath.Join(dir, ValuesFile), vals); err != nil {
			return err
		}
	}
	if s.Objects != nil {
		text, err := s.Objects.RedactedYAML()
		if err != nil {
			return fmt.Errorf("marshal objects of %s: %w", s.Name, err)
		}
		if err := writeFile(filepath.Join(dir, ManifestFile), text); err != nil {
			return err
		}
	}
	if s.Err != nil {
		return writeFile(filepath.Join(dir, ErrorFile), []byte(s.Err.Error()+"\n"))
	}
	return nil
}

// writeFile writes data to path, naming path in the error.
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Summary writes one line per cluster to w: CLUSTER, ROLE, SERVICES (comma-separated release names), OBJECTS and
// ERRORS (count), then every problem of every failed cluster, then every layer-2 lint warning. It returns the first
// write error.
func Summary(w io.Writer, f *Fleet) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tROLE\tSERVICES\tOBJECTS\tERRORS")
	for _, c := range f.Clusters {
		var svcs []string
		for _, s := range c.Services {
			svcs = append(svcs, s.Name)
		}
		list := strings.Join(svcs, ",")
		if list == "" {
			list = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", c.Dir, c.Role, list, c.ObjectCount(), c.ErrorCount())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range f.Clusters {
		for _, p := range c.Problems() {
			if _, err := fmt.Fprintf(w, "%s: %s\n", c.Dir, p); err != nil {
				return err
			}
		}
	}
	for _, l := range f.Lint {
		if _, err := fmt.Fprintf(w, "warning: %s\n", l); err != nil {
			return err
		}
	}
	return nil
}
