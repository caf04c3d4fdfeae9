// Package image builds KOF's OCI images from Go main packages without a container daemon: per platform one static
// linux binary (`go build -trimpath`, cgo off), put alone into a single layer with fixed timestamps, run as the
// non-root user 65532 with the binary as entrypoint, and an OCI image index over the platforms. Equal inputs (the
// same commit, version and timestamp) give equal digests. The image holds no shell and no CA files: every binary must
// link golang.org/x/crypto/x509roots/fallback, whose embedded roots Go's TLS uses when the system has none.
//
// Sources: OCI image spec v1.1 (image-layout, manifest, config, annotations in
// github.com/opencontainers/image-spec/specs-go/v1); reproducible builds (https://reproducible-builds.org/docs/
// source-date-epoch/); docs/release.md.
package image

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"kof.dev/kof/internal/proc"
)

// Facts every KOF image shares.
const (
	// UID and GID of the user every KOF image runs as (the "nonroot" user of distroless images).
	UID = 65532
	// User is the image config's `User`: UID and GID.
	User = "65532:65532"
	// CARootsPackage is the package every KOF binary must link: the Mozilla CA roots Go's crypto/x509 falls back
	// to when the image has no CA files (TLS to S3, storage and the Kubernetes API of remote clusters).
	CARootsPackage = "golang.org/x/crypto/x509roots/fallback"
	// CommandsDir holds one folder per in-cluster binary, relative to the module root; each gets an image.
	CommandsDir = "cmd"
)

// Platform is one OS and architecture an image is built for.
type Platform struct {
	OS, Arch string
}

// String returns `os/arch`.
func (p Platform) String() string { return p.OS + "/" + p.Arch }

// DefaultPlatforms returns the platforms of every KOF image: linux/amd64 and linux/arm64.
func DefaultPlatforms() []Platform {
	return []Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}}
}

// ParsePlatforms parses a comma-separated list of `os/arch` (e.g. `linux/amd64,linux/arm64`). It returns an error
// naming the entry that is not `linux/<arch>` or that repeats.
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		osName, arch, ok := strings.Cut(part, "/")
		if !ok || osName != "linux" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("platform %q: want linux/<arch>, e.g. linux/amd64", part)
		}
		if seen[part] {
			return nil, fmt.Errorf("platform %q: listed twice", part)
		}
		seen[part] = true
		out = append(out, Platform{OS: osName, Arch: arch})
	}
	return out, nil
}

// Spec describes one image.
type Spec struct {
	// Name is the image name (the last element of its repository), e.g. `kof-operator`.
	Name string
	// Package is the main package to build, as `go build` takes it from the module root (e.g.
	// `./cmd/kof-operator`).
	Package string
	// Platforms to build; empty means DefaultPlatforms().
	Platforms []Platform
	// Version, Revision and Source fill the OCI labels `version`, `revision` and `source`.
	Version, Revision, Source string
	// Description fills the OCI label `description` ("" leaves it out).
	Description string
	// Created is the time of every timestamp in the image (config, history, layer entries): the commit time
	// (SOURCE_DATE_EPOCH), never the clock.
	Created time.Time
}

// Binary is one platform's binary inside an image.
type Binary struct {
	// Platform the binary was built for.
	Platform Platform
	// ImageDigest is the digest of the platform's image manifest.
	ImageDigest v1.Hash
	// SHA256 is the hex sha256 of the binary file.
	SHA256 string
	// Info is the build information Go embedded into the binary (modules, settings).
	Info *buildinfo.BuildInfo
}

// Image is a built multi-platform image.
type Image struct {
	// Spec is what was built.
	Spec Spec
	// Index is the OCI image index over the platforms.
	Index v1.ImageIndex
	// Digest is the digest of Index: the image's identity.
	Digest v1.Hash
	// Binaries are the per-platform binaries, in Spec.Platforms order.
	Binaries []Binary
}

// Labels returns the OCI labels of an image of s: source, revision, version, created, title and (when set)
// description.
func (s Spec) Labels() map[string]string {
	l := map[string]string{
		ocispec.AnnotationSource:   s.Source,
		ocispec.AnnotationRevision: s.Revision,
		ocispec.AnnotationVersion:  s.Version,
		ocispec.AnnotationCreated:  s.Created.UTC().Format(time.RFC3339),
		ocispec.AnnotationTitle:    s.Name,
	}
	if s.Description != "" {
		l[ocispec.AnnotationDescription] = s.Description
	}
	return l
}

// Entrypoint is the path of the binary inside the image of name.
func Entrypoint(name string) string { return "/" + name }

func (s Spec) check() error {
	var errs []error
	if s.Name == "" || strings.ContainsAny(s.Name, "/: ") {
		errs = append(errs, fmt.Errorf("image name %q: want one path element such as kof-operator", s.Name))
	}
	if s.Package == "" {
		errs = append(errs, fmt.Errorf("image %s: Package is empty; name the main package to build", s.Name))
	}
	for key, v := range map[string]string{"version": s.Version, "revision": s.Revision, "source": s.Source} {
		if v == "" {
			errs = append(errs, fmt.Errorf("image %s: %s is empty; every KOF image carries the OCI %s label",
				s.Name, key, key))
		}
	}
	if s.Created.IsZero() {
		errs = append(errs, fmt.Errorf("image %s: Created is zero; pass the commit time (SOURCE_DATE_EPOCH)", s.Name))
	}
	return errors.Join(errs...)
}

// Build builds the image of spec: for every platform `go build` of spec.Package from the module root into workDir,
// the checks of CheckBinary, one layer (LayerTar) and the config (user 65532, entrypoint, labels), then the index.
// It returns the image; errors name the image, the platform and the step (go build output included).
func Build(ctx context.Context, root, workDir string, spec Spec) (*Image, error) {
	if len(spec.Platforms) == 0 {
		spec.Platforms = DefaultPlatforms()
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	out := &Image{Spec: spec}
	for _, p := range spec.Platforms {
		bin := filepath.Join(workDir, fmt.Sprintf("%s-%s-%s", spec.Name, p.OS, p.Arch))
		if err := GoBuild(ctx, root, spec.Package, p, bin); err != nil {
			return nil, fmt.Errorf("image %s %s: %w", spec.Name, p, err)
		}
		info, err := CheckBinary(bin, p)
		if err != nil {
			return nil, fmt.Errorf("image %s %s: %w", spec.Name, p, err)
		}
		if idx, err = out.add(idx, p, bin, info); err != nil {
			return nil, err
		}
	}
	return out.finish(idx)
}

// Pack packs the static linux binary at bin, built elsewhere for platform p, into a single-platform image of spec
// exactly as Build would (one layer, user 65532, the binary as entrypoint, labels, an index); spec.Package names
// where the binary comes from (its main package). It is for the test-only images of the third-party programs
// ci/tools.sh builds (VictoriaMetrics, MinIO, the OpenTelemetry Collector): unlike Build it does not require
// CARootsPackage. Errors name the image and the failed check (not static, wrong platform, no Go build information).
func Pack(spec Spec, p Platform, bin string) (*Image, error) {
	spec.Platforms = []Platform{p}
	if err := spec.check(); err != nil {
		return nil, err
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("image %s: read build info of %s: %w", spec.Name, bin, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != p.OS || settings["GOARCH"] != p.Arch {
		return nil, fmt.Errorf("image %s: %s is built for %s/%s, want %s", spec.Name, bin, settings["GOOS"],
			settings["GOARCH"], p)
	}
	if err := checkStatic(bin); err != nil {
		return nil, fmt.Errorf("image %s: %w", spec.Name, err)
	}
	out := &Image{Spec: spec}
	idx, err := out.add(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), p, bin, info)
	if err != nil {
		return nil, err
	}
	return out.finish(idx)
}

// add appends platform p's image around the binary bin to idx and records it in out.Binaries.
func (out *Image) add(idx v1.ImageIndex, p Platform, bin string, info *buildinfo.BuildInfo) (v1.ImageIndex, error) {
	spec := out.Spec
	img, sum, err := platformImage(spec, p, bin)
	if err != nil {
		return nil, fmt.Errorf("image %s %s: %w", spec.Name, p, err)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image %s %s: digest: %w", spec.Name, p, err)
	}
	idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}}})
	out.Binaries = append(out.Binaries, Binary{Platform: p, ImageDigest: d, SHA256: sum, Info: info})
	return idx, nil
}

// finish annotates idx with the labels and sets out.Index and out.Digest.
func (out *Image) finish(idx v1.ImageIndex) (*Image, error) {
	spec := out.Spec
	annotated, ok := mutate.Annotations(idx, spec.Labels()).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("image %s: annotating the index did not return an index", spec.Name)
	}
	out.Index = annotated
	d, err := out.Index.Digest()
	if err != nil {
		return nil, fmt.Errorf("image %s: index digest: %w", spec.Name, err)
	}
	out.Digest = d
	return out, nil
}

// platformImage assembles one platform's image around the binary at bin; it returns the image and the binary's
// hex sha256.
func platformImage(spec Spec, p Platform, bin string) (v1.Image, string, error) {
	layer, sum, err := binaryLayer(spec.Name, bin, spec.Created)
	if err != nil {
		return nil, "", err
	}
	created := v1.Time{Time: spec.Created.UTC()}
	cfg := &v1.ConfigFile{
		Architecture: p.Arch,
		OS:           p.OS,
		Created:      created,
		Config: v1.Config{
			User:       User,
			Entrypoint: []string{Entrypoint(spec.Name)},
			WorkingDir: "/",
			Labels:     spec.Labels(),
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, "", fmt.Errorf("config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{
		Created: created, CreatedBy: "go build -trimpath " + spec.Package, Comment: "kof images"}})
	if err != nil {
		return nil, "", fmt.Errorf("add layer: %w", err)
	}
	annotated, ok := mutate.Annotations(img, spec.Labels()).(v1.Image)
	if !ok {
		return nil, "", errors.New("annotating the image did not return an image")
	}
	return annotated, sum, nil
}

// GoBuild runs `go build` of pkg for p from the module root into out: cgo off (a static binary), -trimpath, no
// VCS stamping, stripped symbols and an empty build ID, the baseline microarchitecture of each architecture, and
// no GOFLAGS from the environment, so the same source and toolchain give the same bytes. The error carries go
// build's output.
func GoBuild(ctx context.Context, root, pkg string, p Platform, out string) error {
	return goBuild(ctx, root, p, "-o", out, pkg)
}

// Compile compiles the packages every in-cluster binary of the module at root (Commands) imports, for each platform
// with GoBuild's flags and environment, without linking or writing a binary: it fills Go's build cache so that a
// later GoBuild compiles only the main package and links. `make test` runs it before the tests, so the release tests' own builds are not cold. The error names the
// platform and carries go build's output.
func Compile(ctx context.Context, root string, platforms []Platform) error {
	names, err := Commands(root)
	if err != nil {
		return err
	}
	mains := make([]string, 0, len(names))
	for _, n := range names {
		mains = append(mains, PackageOf(n))
	}
	for _, p := range platforms {
		// The packages the binaries import, without the main packages: `go build` links (and discards) a main
		// package even without -o; a library package it only compiles.
		list := exec.CommandContext(ctx, "go", append([]string{"list", "-deps", "-f",
			`{{if ne .Name "main"}}{{.ImportPath}}{{end}}`}, mains...)...)
		list.Dir = root
		list.Env = buildEnv(p)
		out, err := list.Output()
		if err != nil {
			return fmt.Errorf("list the packages of %s for %s: %w", strings.Join(mains, " "), p, err)
		}
		if err := goBuild(ctx, root, p, strings.Fields(string(out))...); err != nil {
			return fmt.Errorf("compile for %s: %w", p, err)
		}
	}
	return nil
}

// buildEnv returns the environment of every build for p: proc.ShippedEnv (cgo off, the baseline
// microarchitecture, no GOFLAGS or workspace from the environment, the local toolchain).
func buildEnv(p Platform) []string { return proc.ShippedEnv(p.OS, p.Arch) }

// goBuild runs `go build` with args for p from root with the flags and environment of GoBuild.
func goBuild(ctx context.Context, root string, p Platform, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, proc.ShippedFlags...), args...)...)
	cmd.Dir = root
	cmd.Env = buildEnv(p)
	if b, err := cmd.CombinedOutput(); err != nil {
		if len(args) > 8 {
			args = append(args[:8:8], fmt.Sprintf("... (%d packages)", len(args)))
		}
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// CheckBinary reads the Go build information of the binary at path and checks what a KOF image relies on: built for
// p with cgo off, statically linked (no ELF interpreter, no shared libraries) and linking CARootsPackage. It returns
// the build information; the error names the failed check and the fix.
func CheckBinary(path string, p Platform) (*buildinfo.BuildInfo, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read build info of %s: %w", path, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var errs []error
	if settings["GOOS"] != p.OS || settings["GOARCH"] != p.Arch {
		errs = append(errs, fmt.Errorf("%s: built for %s/%s, want %s", path, settings["GOOS"], settings["GOARCH"], p))
	}
	if settings["CGO_ENABLED"] != "0" {
		errs = append(errs, fmt.Errorf("%s: CGO_ENABLED=%q; KOF images hold static binaries only (CGO_ENABLED=0)",
			path, settings["CGO_ENABLED"]))
	}
	if err := checkStatic(path); err != nil {
		errs = append(errs, err)
	}
	if !linksModule(info, CARootsPackage) {
		errs = append(errs, fmt.Errorf("%s (package %s) does not link %s: the image holds no CA files, so TLS "+
			"would fail; add `import _ %q` to its main package", path, info.Path, CARootsPackage, CARootsPackage))
	}
	return info, errors.Join(errs...)
}

func linksModule(info *buildinfo.BuildInfo, path string) bool {
	for _, d := range info.Deps {
		if d.Path == path {
			return true
		}
	}
	return false
}

// Commands returns the name of every in-cluster binary of the module at root: the folders of CommandsDir holding a
// Go file that is not a test, sorted. It returns an error when CommandsDir cannot be read or holds no binary.
func Commands(root string) ([]string, error) {
	dir := filepath.Join(root, CommandsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list binaries: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, e.Name(), "*.go"))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", filepath.Join(dir, e.Name()), err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				out = append(out, e.Name())
				break
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no binary under %s: every in-cluster binary is a folder there", dir)
	}
	return out, nil
}

// PackageOf returns the `go build` package argument of the binary name: `./cmd/<name>`.
func PackageOf(name string) string { return "./" + CommandsDir + "/" + name }
