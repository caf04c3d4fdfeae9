// Package sbom writes the software bill of materials of a KOF image as a CycloneDX 1.6 JSON document
// (github.com/CycloneDX/cyclonedx-go): the image as the subject, one application component per platform binary
// and one library component per Go module linked into any of them (from the build information Go embeds into every
// binary), with the dependency graph between them. Equal inputs give equal bytes: the timestamp is the image's
// creation time and the serial number is derived from the image digest.
//
// Sources: CycloneDX 1.6 specification (https://cyclonedx.org/docs/1.6/json/); package URL types `golang` and
// `oci` (https://github.com/package-url/purl-spec); Go build information (runtime/debug.BuildInfo).
package sbom

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"
)

// SpecVersion is the CycloneDX version of every document this package writes.
const SpecVersion = cdx.SpecVersion1_6

// Format names the document format in the release manifest.
const Format = "CycloneDX 1.6 JSON"

// Property names of the CycloneDX properties this package sets (the `kof:` namespace is ours; `cdx:gomod:` and
// `oci:` follow the CycloneDX property taxonomy's prefixes).
const (
	PropertyPlatform    = "oci:image:platform"
	PropertyImageDigest = "oci:image:manifest-digest"
	PropertyGoVersion   = "cdx:gomod:build:env:GOVERSION"
	PropertyRevision    = "kof:revision"
	PropertySource      = "kof:source"
)

// Subject is the image a document describes.
type Subject struct {
	// Repository is `host[:port]/path/<name>`; Name the image name; Version its tag.
	Repository, Name, Version string
	// Digest is the image index digest (`sha256:...`).
	Digest string
	// Revision and Source are the commit and the source repository URL.
	Revision, Source string
	// Created is the image's creation time.
	Created time.Time
}

// Binary is one platform binary of the image.
type Binary struct {
	// Platform is `os/arch`.
	Platform string
	// ImageDigest is the digest of the platform's image manifest.
	ImageDigest string
	// SHA256 is the hex sha256 of the binary.
	SHA256 string
	// Info is the binary's Go build information.
	Info *buildinfo.BuildInfo
}

// New returns the document of s with bins (at least one). It returns an error when bins is empty or a binary has no
// build information.
func New(s Subject, bins []Binary) (*cdx.BOM, error) {
	if len(bins) == 0 {
		return nil, fmt.Errorf("sbom of %s: no binary", s.Name)
	}
	bom := cdx.NewBOM()
	imageRef := s.Repository + "@" + s.Digest
	// RFC 9562 UUID v5 of the image reference in the URL namespace: one serial number per image, stable.
	bom.SerialNumber = "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte(imageRef)).String()
	bom.Metadata = &cdx.Metadata{
		Timestamp: s.Created.UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "kof",
			Version: s.Version, Description: "kof release (docs/release.md)"}}},
		Component: &cdx.Component{BOMRef: imageRef, Type: cdx.ComponentTypeContainer, Name: s.Name,
			Version: s.Version, PackageURL: ociPURL(s),
			Properties: &[]cdx.Property{{Name: PropertyRevision, Value: s.Revision}, {Name: PropertySource, Value: s.Source}}},
	}
	libs := map[string]cdx.Component{}
	var comps []cdx.Component
	var deps []cdx.Dependency
	var apps []string
	for _, b := range bins {
		if b.Info == nil {
			return nil, fmt.Errorf("sbom of %s: binary for %s has no build information", s.Name, b.Platform)
		}
		ref := fmt.Sprintf("%s@%s", b.Info.Path, b.Platform)
		apps = append(apps, ref)
		comps = append(comps, cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeApplication, Name: b.Info.Path,
			Version: s.Version, Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: b.SHA256}},
			Properties: &[]cdx.Property{{Name: PropertyPlatform, Value: b.Platform},
				{Name: PropertyImageDigest, Value: b.ImageDigest}, {Name: PropertyGoVersion, Value: b.Info.GoVersion}}})
		var on []string
		for _, m := range modules(b.Info) {
			p := golangPURL(m.path, m.version)
			if _, ok := libs[p]; !ok {
				libs[p] = cdx.Component{BOMRef: p, Type: cdx.ComponentTypeLibrary, Name: m.path, Version: m.version,
					PackageURL: p}
			}
			on = append(on, p)
		}
		deps = append(deps, cdx.Dependency{Ref: ref, Dependencies: &on})
	}
	keys := make([]string, 0, len(libs))
	for k := range libs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		comps = append(comps, libs[k])
	}
	deps = append([]cdx.Dependency{{Ref: imageRef, Dependencies: &apps}}, deps...)
	bom.Components, bom.Dependencies = &comps, &deps
	return bom, nil
}

type module struct{ path, version string }

// modules returns the Go standard library and every module linked into the binary (replacements resolved), by
// path. The main module is left out: it is the application component itself.
func modules(info *buildinfo.BuildInfo) []module {
	out := []module{{path: "std", version: info.GoVersion}}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		out = append(out, module{path: m.Path, version: m.Version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// golangPURL returns `pkg:golang/<module path>@<version>`, each part percent-encoded.
func golangPURL(path, version string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = purlEscape(s)
	}
	return "pkg:golang/" + strings.Join(segs, "/") + "@" + purlEscape(version)
}

// ociPURL returns `pkg:oci/<name>@<digest>?repository_url=<repository without name>&tag=<version>`.
func ociPURL(s Subject) string {
	q := url.Values{}
	q.Set("repository_url", s.Repository)
	q.Set("tag", s.Version)
	return "pkg:oci/" + purlEscape(s.Name) + "@" + purlEscape(s.Digest) + "?" + q.Encode()
}

func purlEscape(s string) string { return strings.ReplaceAll(url.PathEscape(s), "+", "%2B") }

// Encode returns bom as indented CycloneDX 1.6 JSON. It returns the encoder's error.
func Encode(bom *cdx.BOM) ([]byte, error) {
	var buf bytes.Buffer
	if err := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(bom, SpecVersion); err != nil {
		return nil, fmt.Errorf("encode CycloneDX: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode parses a CycloneDX JSON document with the library's decoder. It returns the decoder's error.
func Decode(data []byte) (*cdx.BOM, error) {
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, fmt.Errorf("decode CycloneDX: %w", err)
	}
	return &bom, nil
}
