package diff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"testing/fstest"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/errdef"

	"kof.dev/kof/chartlib/fleet"
)

// OCIScheme starts a chart source that is an OCI chart repository.
const OCIScheme = "oci://"

// Source is where one side's KOF charts come from: a folder, a file system (such as the charts built into kof), or
// an OCI chart repository at a version (a KOF release, docs/release.md: `oci://<REGISTRY>/charts` holds
// `<chart>:<version>` for every chart).
type Source struct {
	// Dir is a folder holding `<chart>/Chart.yaml` for every KOF chart.
	Dir string
	// FS holds the charts as folders `<chart>/` (used when Dir and OCI are empty).
	FS fs.FS
	// OCI is the chart repository, `oci://host[:port]/path`; Version is then required.
	OCI, Version string
	// PlainHTTP talks plain HTTP to the registry of OCI (a registry on loopback).
	PlainHTTP bool
}

// ParseSource reads a chart source flag: "" for fsys (the embedded charts), `oci://...` for an OCI repository at
// version, anything else a folder. Errors name the flag and the fix.
func ParseSource(flag, value, version string, plainHTTP bool, fsys fs.FS) (Source, error) {
	switch {
	case value == "":
		if version != "" {
			return Source{}, fmt.Errorf("%s is empty (the charts built into kof) but a version %s is given; give the "+
				"OCI chart repository, e.g. oci://ghcr.io/k0rdent/kof/charts", flag, version)
		}
		return Source{FS: fsys}, nil
	case strings.HasPrefix(value, OCIScheme):
		if version == "" {
			return Source{}, fmt.Errorf("%s %s: an OCI chart repository needs the release's version; give it with "+
				"the matching --*-version flag", flag, value)
		}
		return Source{OCI: strings.TrimSuffix(value, "/"), Version: version, PlainHTTP: plainHTTP}, nil
	default:
		if version != "" {
			return Source{}, fmt.Errorf("%s %s is a folder; a version (%s) only applies to an oci:// repository", flag,
				value, version)
		}
		if _, err := os.Stat(path.Join(value, fleet.UmbrellaChart, "Chart.yaml")); err != nil {
			return Source{}, fmt.Errorf("%s %s: no %s/Chart.yaml in it; give the folder holding the KOF charts", flag,
				value, fleet.UmbrellaChart)
		}
		return Source{Dir: value}, nil
	}
}

// String names the source: the folder, `oci://...:<version>` or "the charts built into kof".
func (s Source) String() string {
	switch {
	case s.Dir != "":
		return s.Dir
	case s.OCI != "":
		return s.OCI + " --version " + s.Version
	default:
		return "the charts built into kof"
	}
}

// Apply sets the charts of opts from s: ChartsDir for a folder, Charts for a file system or an OCI repository
// (pulled lazily, see OCI). Errors come from making the registry client.
func (s Source) Apply(opts *fleet.Options) error {
	opts.ChartsDir, opts.Charts = "", nil
	switch {
	case s.Dir != "":
		opts.ChartsDir = s.Dir
	case s.OCI != "":
		o, err := NewOCI(s.OCI, s.Version, s.PlainHTTP)
		if err != nil {
			return err
		}
		opts.Charts = o
	default:
		if s.FS == nil {
			return errors.New("chart source: no folder, file system or OCI repository")
		}
		opts.Charts = s.FS
	}
	return nil
}

// OCI is the file system of the charts of one OCI chart repository at one version: the first access to a path
// under `<chart>/` pulls `<repository>/<chart>:<version>` (as `helm pull`) and keeps the chart's files in memory; a
// chart the registry does not have at that version does not exist (fs.ErrNotExist), so third-party charts stay
// references. It is safe for concurrent use.
type OCI struct {
	repo, version string
	client        *registry.Client
	mu            sync.Mutex
	charts        map[string]fstest.MapFS
	errs          map[string]error
}

// NewOCI returns the file system of repo (`oci://host/path`) at version; plainHTTP for a registry without TLS. It
// uses Helm's registry credentials (Docker's config file as fallback), as `helm pull` does.
func NewOCI(repo, version string, plainHTTP bool) (*OCI, error) {
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("helm registry client: %w", err)
	}
	return &OCI{repo: strings.TrimPrefix(strings.TrimSuffix(repo, "/"), OCIScheme), version: version, client: c,
		charts: map[string]fstest.MapFS{}, errs: map[string]error{}}, nil
}

// Open opens name, pulling its chart first.
func (o *OCI) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("an OCI repository cannot be listed")}
	}
	chartName, _, _ := strings.Cut(name, "/")
	files, err := o.pull(chartName)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return files.Open(name)
}

// pull returns the files of chart name as `<name>/<file>`, pulling it once.
func (o *OCI) pull(name string) (fstest.MapFS, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if files, ok := o.charts[name]; ok {
		return files, nil
	}
	if err, ok := o.errs[name]; ok {
		return nil, err
	}
	ref := o.repo + "/" + name + ":" + o.version
	res, err := o.client.Pull(ref)
	if errors.Is(err, errdef.ErrNotFound) {
		o.errs[name] = fs.ErrNotExist
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("pull %s%s: %w", OCIScheme, ref, err)
	}
	buffered, err := loader.LoadArchiveFiles(bytes.NewReader(res.Chart.Data))
	if err != nil {
		return nil, fmt.Errorf("read chart %s%s: %w", OCIScheme, ref, err)
	}
	files := fstest.MapFS{}
	for _, f := range buffered {
		files[path.Join(name, f.Name)] = &fstest.MapFile{Data: f.Data, Mode: 0o644}
	}
	o.charts[name] = files
	return files, nil
}
