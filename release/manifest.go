package release

import (
	"encoding/json"
	"fmt"
	"os"
)

// ManifestFile is the file name of the release manifest in the release's output folder.
const ManifestFile = "release.json"

// Manifest records one release: every image and chart it published with its digest, and the files it wrote.
type Manifest struct {
	// Version is the release version (chart version, appVersion and image tag).
	Version string `json:"version"`
	// Revision is the commit; Source the source repository URL; Created the commit time (RFC 3339).
	Revision string `json:"revision"`
	Source   string `json:"source"`
	Created  string `json:"created"`
	// Registry is `host[:port][/path]`: images are at `<Registry>/<name>`, charts at `<Registry>/charts/<chart>`.
	Registry string `json:"registry"`
	// Images are KOF's images, by name.
	Images []ImageEntry `json:"images"`
	// Charts are KOF's charts, by name.
	Charts []ChartEntry `json:"charts"`
}

// ImageEntry is one published image.
type ImageEntry struct {
	// Name is the image name (the binary's name under cmd/).
	Name string `json:"name"`
	// Repository is `<Registry>/<name>`; Tag the version; Digest the image index digest.
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	Digest     string `json:"digest"`
	// Reference is `<Repository>:<Tag>@<Digest>`, the form the charts render.
	Reference string `json:"reference"`
	// Platforms are the index's images, one per platform.
	Platforms []PlatformEntry `json:"platforms"`
	// SBOM is the image's software bill of materials.
	SBOM *File `json:"sbom,omitempty"`
}

// PlatformEntry is one platform image of an index.
type PlatformEntry struct {
	// Platform is `os/arch`; Digest the platform manifest's digest; BinarySHA256 the binary's hex sha256.
	Platform     string `json:"platform"`
	Digest       string `json:"digest"`
	BinarySHA256 string `json:"binarySHA256"`
}

// ChartEntry is one published chart.
type ChartEntry struct {
	// Name and Version of the chart.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Reference is `oci://<Registry>/charts/<name>` (what `helm install` takes with `--version`); Digest the
	// chart artifact's manifest digest.
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	// Archive is the packaged chart file.
	Archive File `json:"archive"`
	// Pins are the values the release rewrote (KOF image blocks, the umbrella's chart repository URL).
	Pins []Pin `json:"pins,omitempty"`
}

// File is a file the release wrote, relative to the manifest's folder.
type File struct {
	Path   string `json:"path"`
	Format string `json:"format,omitempty"`
	SHA256 string `json:"sha256"`
}

// Image returns the entry of the image name, or nil.
func (m *Manifest) Image(name string) *ImageEntry {
	for i := range m.Images {
		if m.Images[i].Name == name {
			return &m.Images[i]
		}
	}
	return nil
}

// Chart returns the entry of the chart name, or nil.
func (m *Manifest) Chart(name string) *ChartEntry {
	for i := range m.Charts {
		if m.Charts[i].Name == name {
			return &m.Charts[i]
		}
	}
	return nil
}

// WriteManifest writes m as indented JSON to path.
func WriteManifest(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode release manifest: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write release manifest: %w", err)
	}
	return nil
}

// ReadManifest reads the release manifest at path; unknown fields are an error.
func ReadManifest(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read release manifest: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode release manifest %s: %w", path, err)
	}
	return &m, nil
}
