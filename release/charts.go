package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
)

// Chart is one packaged chart of a release.
type Chart struct {
	// Name and Version of the chart (the version is also its appVersion).
	Name, Version string
	// Archive is the path of `<name>-<version>.tgz`; Data its bytes; SHA256 their hex sha256.
	Archive string
	Data    []byte
	SHA256  string
	// Pins are the values the release rewrote.
	Pins []Pin
}

// ChartDirs returns the chart folders under chartsDir (those holding a Chart.yaml), sorted by name.
func ChartDirs(chartsDir string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(chartsDir, "*", chartutil.ChartfileName))
	if err != nil {
		return nil, fmt.Errorf("list charts in %s: %w", chartsDir, err)
	}
	dirs := make([]string, 0, len(matches))
	for _, m := range matches {
		dirs = append(dirs, filepath.Dir(m))
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no chart in %s", chartsDir)
	}
	return dirs, nil
}

// PackageChart packages the chart folder dir for a release, as `helm package` does (.helmignore honoured) with
// version and appVersion set to version and the values pinned by PinValues (images, repoURL); the pinned defaults
// are checked against the chart's values.schema.json. It writes `<name>-<version>.tgz` into outDir with every
// archive timestamp at created, so equal inputs give an equal archive. Errors name the chart and the step.
func PackageChart(dir, outDir, version string, created time.Time, images map[string]Published,
	repoURL string) (*Chart, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", dir, err)
	}
	c.Metadata.Version, c.Metadata.AppVersion = version, version
	var pins []Pin
	found := false
	for _, f := range c.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		found = true
		if f.Data, pins, err = PinValues(c.Name(), f.Data, images, repoURL); err != nil {
			return nil, err
		}
		if c.Values, err = chartutil.ReadValues(f.Data); err != nil {
			return nil, fmt.Errorf("chart %s: pinned values: %w", c.Name(), err)
		}
	}
	if !found {
		return nil, fmt.Errorf("chart %s: no %s", c.Name(), chartutil.ValuesfileName)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.Name(), err)
	}
	if err := chartutil.ValidateAgainstSchema(c, c.Values); err != nil {
		return nil, fmt.Errorf("chart %s: pinned defaults fail values.schema.json: %w", c.Name(), err)
	}
	tmp, err := os.MkdirTemp("", "kof-chart-")
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.Name(), err)
	}
	defer os.RemoveAll(tmp)
	saved, err := chartutil.Save(c, tmp)
	if err != nil {
		return nil, fmt.Errorf("package chart %s: %w", c.Name(), err)
	}
	raw, err := os.ReadFile(saved)
	if err != nil {
		return nil, fmt.Errorf("package chart %s: %w", c.Name(), err)
	}
	data, err := fixTimes(raw, created)
	if err != nil {
		return nil, fmt.Errorf("package chart %s: %w", c.Name(), err)
	}
	out := filepath.Join(outDir, filepath.Base(saved))
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return nil, fmt.Errorf("write chart %s: %w", c.Name(), err)
	}
	sum := sha256.Sum256(data)
	return &Chart{Name: c.Name(), Version: version, Archive: out, Data: data, SHA256: hex.EncodeToString(sum[:]),
		Pins: pins}, nil
}

// fixTimes rewrites a gzip-compressed tar archive with every entry's modification time at t (and no access or
// change times), keeping entries, contents and the gzip header otherwise. Helm's packager stamps the clock's time.
func fixTimes(archive []byte, t time.Time) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("read archive: %w", err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Header = zr.Header
	zw.Header.ModTime = time.Time{}
	tr, tw := tar.NewReader(zr), tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		h.ModTime, h.AccessTime, h.ChangeTime = t.UTC(), time.Time{}, time.Time{}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write archive: %w", err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return nil, fmt.Errorf("write archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("write archive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("write archive: %w", err)
	}
	return out.Bytes(), nil
}

// ChartClient returns a Helm registry client (plain HTTP when plainHTTP) using Helm's registry credentials with
// Docker's config file as fallback, as `helm push` does.
func ChartClient(plainHTTP bool) (*registry.Client, error) {
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("helm registry client: %w", err)
	}
	return c, nil
}

// PushChart pushes c as an OCI artifact to `<chartsRepo>/<name>:<version>` (`helm push <tgz> oci://<chartsRepo>`),
// with the OCI `created` annotation at created, and returns the manifest digest.
func PushChart(client *registry.Client, chartsRepo string, c *Chart, created time.Time) (string, error) {
	ref := fmt.Sprintf("%s/%s:%s", chartsRepo, c.Name, c.Version)
	res, err := client.Push(c.Data, ref, registry.PushOptCreationTime(created.UTC().Format(time.RFC3339)))
	if err != nil {
		return "", fmt.Errorf("push chart %s: %w", ref, err)
	}
	return res.Manifest.Digest, nil
}
