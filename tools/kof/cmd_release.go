package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"kof.dev/kof/release"
	"kof.dev/kof/release/image"
)

// releaseFlags are the flags `kof images` and `kof release` share.
type releaseFlags struct {
	root, version, revision, source, platforms, registry, out string
	epoch                                                     int64
	plainHTTP                                                 bool
}

func (f *releaseFlags) add(cmd *cobra.Command, defaultOut string) {
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", ".", "module root (go.mod, charts/, cmd/)")
	fl.StringVar(&f.version, "version", "", "release version: image tag, chart version and appVersion (semver)")
	fl.StringVar(&f.revision, "revision", "", "commit of the build (OCI label org.opencontainers.image.revision)")
	fl.StringVar(&f.source, "source", "", "source repository URL (OCI label org.opencontainers.image.source)")
	fl.Int64Var(&f.epoch, "source-date-epoch", -1, "commit time in Unix seconds: every timestamp of every artifact")
	fl.StringVar(&f.platforms, "platforms", "linux/amd64,linux/arm64", "platforms of every image")
	fl.StringVar(&f.registry, "registry", "", "registry and path to push to, host[:port][/path]")
	fl.BoolVar(&f.plainHTTP, "plain-http", false, "talk plain HTTP to the registry (a registry on loopback)")
	fl.StringVar(&f.out, "out", defaultOut, "output folder")
}

func (f *releaseFlags) options(s streams) (release.Options, error) {
	platforms, err := image.ParsePlatforms(f.platforms)
	if err != nil {
		return release.Options{}, fmt.Errorf("--platforms: %w", err)
	}
	if f.epoch < 0 {
		return release.Options{}, errors.New("--source-date-epoch is required: the commit time in Unix seconds " +
			"(git log -1 --format=%ct); make images and make release pass it")
	}
	root, err := filepath.Abs(f.root)
	if err != nil {
		return release.Options{}, fmt.Errorf("--root: %w", err)
	}
	return release.Options{Root: root, Version: f.version, Revision: f.revision, Source: f.source,
		Created: time.Unix(f.epoch, 0).UTC(), Platforms: platforms, Registry: f.registry,
		Remote: image.Remote{PlainHTTP: f.plainHTTP}, OutDir: f.out,
		Progress: func(format string, args ...any) { fmt.Fprintf(s.err, "[release] "+format+"\n", args...) }}, nil
}

// newImagesCommand returns `kof images`: release.Images.
func newImagesCommand(s streams) *cobra.Command {
	var f releaseFlags
	var compileOnly bool
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Build an OCI image per binary of cmd/: an OCI layout in --out, or pushed to --registry",
		Long: `images builds every in-cluster binary (cmd/<name>) for each platform without a container
daemon and assembles one multi-platform OCI image per binary (release/image). Without --registry the images are
written as one OCI image layout into --out; with --registry each is pushed as <registry>/<name>:<version>. The same
commit, version and --source-date-epoch give the same digests. make images runs it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if compileOnly {
				platforms, err := image.ParsePlatforms(f.platforms)
				if err != nil {
					return fmt.Errorf("--platforms: %w", err)
				}
				return failed(image.Compile(cmd.Context(), f.root, platforms))
			}
			o, err := f.options(s)
			if err != nil {
				return err
			}
			imgs, err := release.Images(cmd.Context(), o)
			if err != nil {
				return failed(err)
			}
			w := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "IMAGE\tTAG\tDIGEST\tPLATFORMS")
			for _, img := range imgs {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", img.Spec.Name, img.Spec.Version, img.Digest, len(img.Binaries))
			}
			return failed(w.Flush())
		},
	}
	f.add(cmd, filepath.Join("out", "images"))
	cmd.Flags().BoolVar(&compileOnly, "compile-only", false, "only compile every binary for every platform into "+
		"Go's build cache (no link, no image; make test runs it before the tests)")
	return cmd
}

// newReleaseCommand returns `kof release`: release.Publish.
func newReleaseCommand(s streams) *cobra.Command {
	var f releaseFlags
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Publish KOF to an OCI registry: images, charts with pinned images, SBOMs and a release manifest",
		Long: `release builds every image, packages every chart of charts/ with version and appVersion set to
--version and every KOF image block pinned to the pushed image (registry, repository, tag, digest), the umbrella's
chart repository set to oci://<registry>/charts, and writes a CycloneDX SBOM per image; only then it pushes the
images to <registry>/<name>:<version> and the charts to oci://<registry>/charts/<chart>, and writes the manifest
release.json into --out. make release runs it; docs/release.md explains installing from the registry.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(s)
			if err != nil {
				return err
			}
			if o.OutDir == "" && o.Version != "" {
				o.OutDir = filepath.Join("out", "release", o.Version)
			}
			m, err := release.Publish(cmd.Context(), o)
			if err != nil {
				return failed(err)
			}
			w := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KIND\tREFERENCE\tDIGEST")
			for _, i := range m.Images {
				fmt.Fprintf(w, "image\t%s:%s\t%s\n", i.Repository, i.Tag, i.Digest)
			}
			for _, c := range m.Charts {
				fmt.Fprintf(w, "chart\t%s --version %s\t%s\n", c.Reference, c.Version, c.Digest)
			}
			if err := w.Flush(); err != nil {
				return failed(err)
			}
			fmt.Fprintf(s.out, "\nmanifest: %s\n", filepath.Join(o.OutDir, release.ManifestFile))
			return nil
		},
	}
	f.add(cmd, "")
	return cmd
}
