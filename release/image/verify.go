package image

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Verify checks an image index as a registry or layout serves it against what every KOF image must be: an OCI
// index of OCI images, one per platform; each config for its platform with User 65532, the binary as entrypoint
// and the source, revision and version labels; exactly one layer holding exactly the entries of Entries (so no
// shell or any other program), owned and moded as Entries says. It returns every violation at once, each naming
// the platform.
func Verify(idx v1.ImageIndex, name string) error {
	mt, err := idx.MediaType()
	if err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	var errs []error
	if mt != types.OCIImageIndex {
		errs = append(errs, fmt.Errorf("image %s: media type %s, want %s", name, mt, types.OCIImageIndex))
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("image %s: index manifest: %w", name, err)
	}
	if len(im.Manifests) == 0 {
		errs = append(errs, fmt.Errorf("image %s: the index lists no image", name))
	}
	for _, d := range im.Manifests {
		if d.Platform == nil {
			errs = append(errs, fmt.Errorf("image %s: manifest %s has no platform", name, d.Digest))
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			errs = append(errs, fmt.Errorf("image %s %s: %w", name, d.Platform, err))
			continue
		}
		if err := verifyImage(img, name, *d.Platform); err != nil {
			errs = append(errs, fmt.Errorf("image %s %s/%s: %w", name, d.Platform.OS, d.Platform.Architecture, err))
		}
	}
	return errors.Join(errs...)
}

func verifyImage(img v1.Image, name string, p v1.Platform) error {
	var errs []error
	if mt, err := img.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
		errs = append(errs, fmt.Errorf("manifest media type %s (%v), want %s", mt, err, types.OCIManifestSchema1))
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if cfg.OS != p.OS || cfg.Architecture != p.Architecture {
		errs = append(errs, fmt.Errorf("config is for %s/%s", cfg.OS, cfg.Architecture))
	}
	if cfg.Config.User != User {
		errs = append(errs, fmt.Errorf("config User %q, want %q", cfg.Config.User, User))
	}
	if want := []string{Entrypoint(name)}; !slices.Equal(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) > 0 {
		errs = append(errs, fmt.Errorf("config Entrypoint %q Cmd %q, want Entrypoint %q and no Cmd",
			cfg.Config.Entrypoint, cfg.Config.Cmd, want))
	}
	for _, l := range []string{ocispec.AnnotationSource, ocispec.AnnotationRevision, ocispec.AnnotationVersion} {
		if cfg.Config.Labels[l] == "" {
			errs = append(errs, fmt.Errorf("config label %s is missing", l))
		}
	}
	layers, err := img.Layers()
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("layers: %w", err))...)
	}
	if len(layers) != 1 {
		return errors.Join(append(errs, fmt.Errorf("%d layers, want 1", len(layers)))...)
	}
	if err := verifyLayer(layers[0], name); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// verifyLayer compares the layer's entries (path, type, mode, owner) with Entries(name, ...).
func verifyLayer(l v1.Layer, name string) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	defer rc.Close()
	want := map[string]Entry{}
	for _, e := range Entries(name, []byte{}) {
		want[e.Path] = e
	}
	var errs []error
	seen := map[string]bool{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("layer: %w", err)
		}
		seen[h.Name] = true
		e, ok := want[h.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("layer holds %s (%s), which no KOF image may hold", h.Name,
				path.Base(h.Name)))
		case (e.Body == nil) != (h.Typeflag == tar.TypeDir) || (e.Body != nil && h.Typeflag != tar.TypeReg):
			errs = append(errs, fmt.Errorf("layer entry %s has type %q", h.Name, h.Typeflag))
		case h.Mode != e.Mode || h.Uid != e.UID || h.Gid != e.GID:
			errs = append(errs, fmt.Errorf("layer entry %s mode %o owner %d:%d, want %o %d:%d", h.Name, h.Mode,
				h.Uid, h.Gid, e.Mode, e.UID, e.GID))
		}
	}
	for p := range want {
		if !seen[p] {
			errs = append(errs, fmt.Errorf("layer lacks %s", p))
		}
	}
	return errors.Join(errs...)
}
