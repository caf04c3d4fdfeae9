package image

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// layoutMarker is the file that makes a folder an OCI image layout (image-spec image-layout.md).
const layoutMarker = "oci-layout"

// WriteLayout writes imgs as an OCI image layout in dir: each image's index, annotated with the ref name
// `<name>:<version>`, in the layout's index.json, blobs shared. A dir that is already a layout is replaced as a
// whole; any other non-empty dir is refused (nothing of the user's is deleted). Errors name the folder.
func WriteLayout(dir string, imgs []*Image) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, layoutMarker)); err != nil {
			return fmt.Errorf("write OCI layout: %s is not empty and not an OCI layout; pick an empty folder", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("replace OCI layout %s: %w", dir, err)
		}
	}
	p, err := layout.Write(dir, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return fmt.Errorf("write OCI layout %s: %w", dir, err)
	}
	for _, img := range imgs {
		ref := img.Spec.Name + ":" + img.Spec.Version
		if err := p.AppendIndex(img.Index, layout.WithAnnotations(map[string]string{
			ocispec.AnnotationRefName: ref})); err != nil {
			return fmt.Errorf("write %s into OCI layout %s: %w", ref, dir, err)
		}
	}
	return nil
}

// Remote says how to reach a registry.
type Remote struct {
	// PlainHTTP talks HTTP instead of HTTPS (a registry on loopback).
	PlainHTTP bool
	// Keychain supplies credentials; nil means authn.DefaultKeychain (the Docker config file, $DOCKER_CONFIG).
	Keychain authn.Keychain
}

func (r Remote) options(ctx context.Context) []remote.Option {
	kc := r.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc)}
}

// Parse parses ref (`host[:port]/path[:tag|@digest]`) with the registry's scheme set by PlainHTTP. It returns the
// parser's error naming ref.
func (r Remote) Parse(ref string) (name.Reference, error) {
	var opts []name.Option
	if r.PlainHTTP {
		opts = append(opts, name.Insecure)
	}
	parsed, err := name.ParseReference(ref, append(opts, name.StrictValidation)...)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", ref, err)
	}
	return parsed, nil
}

// Push pushes img to `<repository>:<img.Spec.Version>` (repository is `host[:port]/path/<name>`) and returns the
// pushed reference. Errors name the reference; credentials never appear in them.
func (r Remote) Push(ctx context.Context, repository string, img *Image) (name.Reference, error) {
	ref, err := r.Parse(repository + ":" + img.Spec.Version)
	if err != nil {
		return nil, err
	}
	if err := remote.WriteIndex(ref, img.Index, r.options(ctx)...); err != nil {
		return nil, fmt.Errorf("push %s: %w", ref, err)
	}
	return ref, nil
}

// Resolve returns the descriptor the registry serves for ref (a tag or a digest), by a HEAD request.
func (r Remote) Resolve(ctx context.Context, ref string) (*v1.Descriptor, error) {
	parsed, err := r.Parse(ref)
	if err != nil {
		return nil, err
	}
	d, err := remote.Head(parsed, r.options(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", ref, err)
	}
	return d, nil
}

// Index fetches the image index at ref.
func (r Remote) Index(ctx context.Context, ref string) (v1.ImageIndex, error) {
	parsed, err := r.Parse(ref)
	if err != nil {
		return nil, err
	}
	idx, err := remote.Index(parsed, r.options(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("fetch index %s: %w", ref, err)
	}
	return idx, nil
}

// checkStatic reports an error when the ELF file at path asks for a dynamic loader or shared libraries.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("read ELF %s: %w", path, err)
	}
	defer f.Close()
	var errs []error
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			errs = append(errs, fmt.Errorf("%s is dynamically linked (ELF interpreter); build with CGO_ENABLED=0", path))
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		errs = append(errs, fmt.Errorf("%s needs shared libraries %v; build with CGO_ENABLED=0", path, libs))
	}
	return errors.Join(errs...)
}
