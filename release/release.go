// Package release publishes KOF: an OCI image per in-cluster binary (release/image), every chart packaged with its
// version, appVersion and KOF image references pinned to the release (tag and digest), images and charts pushed to
// one OCI registry, a CycloneDX SBOM per image (release/sbom) and a release manifest naming every artifact with its
// digest. `make images` and `make release` run it through `kof images` and `kof release`.
//
// Source: docs/release.md (layout of a release registry, the image convention of chart values, the steps).
package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"kof.dev/kof/release/image"
	"kof.dev/kof/release/sbom"
)

// Folders of a release's output folder.
const (
	ChartsDir = "charts"
	SBOMDir   = "sbom"
)

// Options configures Images and Publish.
type Options struct {
	// Root is the module root (go.mod, charts/, cmd/).
	Root string
	// Version is the release version: a semantic version without build metadata (image tags allow no `+`).
	Version string
	// Revision is the commit, Source the source repository URL, Created the commit time (SOURCE_DATE_EPOCH).
	Revision, Source string
	Created          time.Time
	// Platforms of every image; empty means image.DefaultPlatforms().
	Platforms []image.Platform
	// Registry is `host[:port][/path]`; required by Publish, optional for Images (empty: write an OCI layout).
	Registry string
	// Remote says how to reach Registry (plain HTTP, credentials).
	Remote image.Remote
	// OutDir receives the OCI layout (Images) or the manifest, charts and SBOMs (Publish).
	OutDir string
	// Progress receives one line per step; nil discards them.
	Progress func(format string, args ...any)
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// check validates the options shared by Images and Publish; it returns every problem at once, each naming the
// Makefile variable to fix.
func (o Options) check(needRegistry bool) error {
	var errs []error
	if v, err := semver.StrictNewVersion(o.Version); err != nil {
		errs = append(errs, fmt.Errorf("VERSION=%q: %w; use a semantic version such as 2.0.0", o.Version, err))
	} else if v.Metadata() != "" {
		errs = append(errs, fmt.Errorf("VERSION=%q: build metadata (+%s) is not allowed in image tags; drop it",
			o.Version, v.Metadata()))
	}
	if o.Registry == "" && needRegistry {
		errs = append(errs, errors.New("REGISTRY is empty; give the registry and path to publish to, e.g. "+
			"REGISTRY=registry.example.com/kof"))
	}
	if o.Registry != "" {
		if _, _, err := SplitRegistry(o.Registry); err != nil {
			errs = append(errs, err)
		}
	}
	if o.OutDir == "" {
		errs = append(errs, errors.New("output folder is empty"))
	}
	return errors.Join(errs...)
}

// SplitRegistry splits `host[:port][/path]` into the host and the path ("" when none). It returns an error naming
// REGISTRY when the value has a scheme, a tag or digest, or is not a valid registry and repository path.
func SplitRegistry(registry string) (host, path string, err error) {
	if strings.Contains(registry, "://") {
		return "", "", fmt.Errorf("REGISTRY=%q: give host[:port][/path] without a scheme", registry)
	}
	host, path, _ = strings.Cut(strings.TrimSuffix(registry, "/"), "/")
	if _, err := name.NewRegistry(host, name.StrictValidation); err != nil {
		return "", "", fmt.Errorf("REGISTRY=%q: host %q: %w", registry, host, err)
	}
	if path != "" {
		if _, err := name.NewRepository(host+"/"+path, name.StrictValidation); err != nil || strings.ContainsAny(path, ":@") {
			return "", "", fmt.Errorf("REGISTRY=%q: path %q: want lowercase path elements without a tag", registry, path)
		}
	}
	return host, path, nil
}

// published returns where the image name of a release to registry lives.
func published(registry, imageName, version, digest string) Published {
	host, path, _ := SplitRegistry(registry)
	repo := imageName
	if path != "" {
		repo = path + "/" + imageName
	}
	return Published{Registry: host, Repository: repo, Tag: version, Digest: digest}
}

// BuildImages builds the image of every binary under cmd/ (image.Commands) for o.Platforms, with the OCI
// labels of o. Binaries go to a temporary folder removed afterwards. Errors name the image and the step.
func BuildImages(ctx context.Context, o Options) ([]*image.Image, error) {
	names, err := image.Commands(o.Root)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "kof-images-")
	if err != nil {
		return nil, fmt.Errorf("create build folder: %w", err)
	}
	defer os.RemoveAll(work)
	out := make([]*image.Image, 0, len(names))
	for _, n := range names {
		start := time.Now()
		spec := image.Spec{Name: n, Package: image.PackageOf(n), Platforms: o.Platforms, Version: o.Version,
			Revision: o.Revision, Source: o.Source, Created: o.Created, Description: packageDoc(ctx, o.Root, n)}
		img, err := image.Build(ctx, o.Root, work, spec)
		if err != nil {
			return nil, err
		}
		o.progress("image %s %s (%d platforms, %.1fs)", n, img.Digest, len(img.Binaries), time.Since(start).Seconds())
		out = append(out, img)
	}
	return out, nil
}

// packageDoc returns the first sentence of the doc comment of the binary name's main package ("" when none).
func packageDoc(ctx context.Context, root, binary string) string {
	cmd := exec.CommandContext(ctx, "go", "list", "-f", "{{.Doc}}", image.PackageOf(binary))
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Images builds every KOF image (BuildImages) and, without o.Registry, writes them as one OCI image layout into
// o.OutDir (image.WriteLayout); with o.Registry it pushes each to `<Registry>/<name>:<Version>`. It returns the
// images; errors name the step.
func Images(ctx context.Context, o Options) ([]*image.Image, error) {
	if err := o.check(false); err != nil {
		return nil, err
	}
	imgs, err := BuildImages(ctx, o)
	if err != nil {
		return nil, err
	}
	if o.Registry == "" {
		if err := image.WriteLayout(o.OutDir, imgs); err != nil {
			return nil, err
		}
		o.progress("OCI layout %s: %d images", o.OutDir, len(imgs))
		return imgs, nil
	}
	for _, img := range imgs {
		if _, err := pushImage(ctx, o, img); err != nil {
			return nil, err
		}
	}
	return imgs, nil
}

// pushImage pushes img and checks that the registry serves the tag at the built digest; it returns the entry.
func pushImage(ctx context.Context, o Options, img *image.Image) (ImageEntry, error) {
	repo := strings.TrimSuffix(o.Registry, "/") + "/" + img.Spec.Name
	ref, err := o.Remote.Push(ctx, repo, img)
	if err != nil {
		return ImageEntry{}, err
	}
	got, err := o.Remote.Resolve(ctx, ref.String())
	if err != nil {
		return ImageEntry{}, err
	}
	if got.Digest != img.Digest {
		return ImageEntry{}, fmt.Errorf("push %s: the registry serves %s, built %s", ref, got.Digest, img.Digest)
	}
	o.progress("pushed %s@%s", ref, img.Digest)
	e := ImageEntry{Name: img.Spec.Name, Repository: repo, Tag: img.Spec.Version, Digest: img.Digest.String(),
		Reference: repo + ":" + img.Spec.Version + "@" + img.Digest.String()}
	for _, b := range img.Binaries {
		e.Platforms = append(e.Platforms, PlatformEntry{Platform: b.Platform.String(), Digest: b.ImageDigest.String(),
			BinarySHA256: b.SHA256})
	}
	return e, nil
}

// Publish runs a whole release to o.Registry: it builds every image, packages every chart under charts/ with the
// images pinned (PackageChart) and writes an SBOM per image before anything is pushed, so bad input publishes
// nothing; then it pushes the images (each checked back at its digest), then the charts to `<Registry>/charts`, and
// writes the manifest (ManifestFile) last. o.OutDir must be empty or hold an earlier release (then it is replaced).
// It returns the manifest; errors name the step, and a failed push leaves no manifest (rerunning is safe: equal
// inputs give equal digests).
func Publish(ctx context.Context, o Options) (*Manifest, error) {
	if err := o.check(true); err != nil {
		return nil, err
	}
	if err := prepareOut(o.OutDir); err != nil {
		return nil, err
	}
	imgs, err := BuildImages(ctx, o)
	if err != nil {
		return nil, err
	}
	pubs := map[string]Published{}
	for _, img := range imgs {
		pubs[img.Spec.Name] = published(o.Registry, img.Spec.Name, o.Version, img.Digest.String())
	}
	chartsRepo := strings.TrimSuffix(o.Registry, "/") + "/" + ChartsPath
	charts, err := packageCharts(o, pubs, "oci://"+chartsRepo)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Version: o.Version, Revision: o.Revision, Source: o.Source,
		Created: o.Created.UTC().Format(time.RFC3339), Registry: o.Registry}
	sboms := map[string]*File{}
	for _, img := range imgs {
		f, err := writeSBOM(o, img)
		if err != nil {
			return nil, err
		}
		sboms[img.Spec.Name] = f
	}
	for _, img := range imgs {
		e, err := pushImage(ctx, o, img)
		if err != nil {
			return nil, err
		}
		e.SBOM = sboms[img.Spec.Name]
		m.Images = append(m.Images, e)
	}
	client, err := ChartClient(o.Remote.PlainHTTP)
	if err != nil {
		return nil, err
	}
	for _, c := range charts {
		digest, err := PushChart(client, chartsRepo, c, o.Created)
		if err != nil {
			return nil, err
		}
		o.progress("pushed chart oci://%s/%s:%s@%s", chartsRepo, c.Name, c.Version, digest)
		m.Charts = append(m.Charts, ChartEntry{Name: c.Name, Version: c.Version, Reference: "oci://" + chartsRepo +
			"/" + c.Name, Digest: digest, Archive: File{Path: filepath.ToSlash(filepath.Join(ChartsDir,
			filepath.Base(c.Archive))), SHA256: c.SHA256}, Pins: c.Pins})
	}
	if err := WriteManifest(filepath.Join(o.OutDir, ManifestFile), m); err != nil {
		return nil, err
	}
	o.progress("release %s: %d images, %d charts; manifest %s", o.Version, len(m.Images), len(m.Charts),
		filepath.Join(o.OutDir, ManifestFile))
	return m, nil
}

// prepareOut makes dir an empty folder: it may be missing, empty or an earlier release's output (holding
// ManifestFile), which is removed; anything else is refused, so nothing of the user's is deleted.
func prepareOut(dir string) error {
	entries, err := os.ReadDir(dir)
	if err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
			return fmt.Errorf("release output %s is not empty and holds no earlier %s; pick an empty folder", dir,
				ManifestFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("replace release output %s: %w", dir, err)
		}
	}
	for _, d := range []string{ChartsDir, SBOMDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("create release output: %w", err)
		}
	}
	return nil
}

// packageCharts packages every chart of Root/charts (PackageChart) into OutDir/charts; it returns every chart's
// error at once.
func packageCharts(o Options, pubs map[string]Published, repoURL string) ([]*Chart, error) {
	dirs, err := ChartDirs(filepath.Join(o.Root, "charts"))
	if err != nil {
		return nil, err
	}
	var out []*Chart
	var errs []error
	for _, d := range dirs {
		c, err := PackageChart(d, filepath.Join(o.OutDir, ChartsDir), o.Version, o.Created, pubs, repoURL)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	o.progress("packaged %d charts at %s with images pinned", len(out), o.Version)
	return out, nil
}

// writeSBOM writes the CycloneDX document of img into OutDir/sbom/<name>.cdx.json and returns its entry.
func writeSBOM(o Options, img *image.Image) (*File, error) {
	s := sbom.Subject{Repository: strings.TrimSuffix(o.Registry, "/") + "/" + img.Spec.Name, Name: img.Spec.Name,
		Version: o.Version, Digest: img.Digest.String(), Revision: o.Revision, Source: o.Source, Created: o.Created}
	var bins []sbom.Binary
	for _, b := range img.Binaries {
		bins = append(bins, sbom.Binary{Platform: b.Platform.String(), ImageDigest: b.ImageDigest.String(),
			SHA256: b.SHA256, Info: b.Info})
	}
	bom, err := sbom.New(s, bins)
	if err != nil {
		return nil, err
	}
	data, err := sbom.Encode(bom)
	if err != nil {
		return nil, fmt.Errorf("sbom of %s: %w", img.Spec.Name, err)
	}
	rel := filepath.ToSlash(filepath.Join(SBOMDir, img.Spec.Name+".cdx.json"))
	if err := os.WriteFile(filepath.Join(o.OutDir, rel), data, 0o644); err != nil {
		return nil, fmt.Errorf("write sbom of %s: %w", img.Spec.Name, err)
	}
	sum := sha256.Sum256(data)
	return &File{Path: rel, Format: sbom.Format, SHA256: hex.EncodeToString(sum[:])}, nil
}
