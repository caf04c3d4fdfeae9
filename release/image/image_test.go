package image

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// moduleRoot is the repository root, where `go build` runs.
const moduleRoot = "../.."

var created = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func helloSpec() Spec {
	return Spec{Name: "hello", Package: "./release/image/testdata/hello", Version: "1.2.3",
		Revision: "0123456789abcdef0123456789abcdef01234567", Source: "https://github.com/k0rdent/kof",
		Created: created}
}

// Two builds of the same inputs, in different folders and at different wall-clock times, give one digest; the
// image is what every KOF image must be (Verify) with the labels of the spec.
func TestBuildIsReproducibleAndVerified(t *testing.T) {
	ctx := context.Background()
	first, err := Build(ctx, moduleRoot, t.TempDir(), helloSpec())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a clock-stamped timestamp would now differ
	second, err := Build(ctx, moduleRoot, t.TempDir(), helloSpec())
	if err != nil {
		t.Fatal(err)
	}
	if first.Digest != second.Digest {
		t.Errorf("two builds of the same inputs: digests %s and %s", first.Digest, second.Digest)
	}
	if err := Verify(first.Index, "hello"); err != nil {
		t.Error(err)
	}
	im, err := first.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	img, err := first.Index.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		ocispec.AnnotationSource:   "https://github.com/k0rdent/kof",
		ocispec.AnnotationRevision: "0123456789abcdef0123456789abcdef01234567",
		ocispec.AnnotationVersion:  "1.2.3",
		ocispec.AnnotationCreated:  "2026-03-01T12:00:00Z",
		ocispec.AnnotationTitle:    "hello",
	}
	if diff := cmp.Diff(want, cfg.Config.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if cfg.Config.User != "65532:65532" || !cfg.Created.Equal(created) {
		t.Errorf("config user %q created %s, want 65532:65532 at %s", cfg.Config.User, cfg.Created, created)
	}
	if first.Binaries[0].Info.Path != "kof.dev/kof/release/image/testdata/hello" || len(first.Binaries[0].SHA256) != 64 {
		t.Errorf("binary info %q sha256 %q", first.Binaries[0].Info.Path, first.Binaries[0].SHA256)
	}
}

// A different version or timestamp changes the digest: the inputs really reach the image.
func TestBuildDigestFollowsInputs(t *testing.T) {
	ctx := context.Background()
	spec := helloSpec()
	spec.Platforms = []Platform{{OS: "linux", Arch: "amd64"}}
	base, err := Build(ctx, moduleRoot, t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	later := spec
	later.Created = created.Add(time.Second)
	newer := spec
	newer.Version = "1.2.4"
	for name, s := range map[string]Spec{"created": later, "version": newer} {
		img, err := Build(ctx, moduleRoot, t.TempDir(), s)
		if err != nil {
			t.Fatal(err)
		}
		if img.Digest == base.Digest {
			t.Errorf("changing %s kept digest %s", name, base.Digest)
		}
	}
}

func TestBuildRefusesBinaryWithoutCARoots(t *testing.T) {
	spec := helloSpec()
	spec.Name, spec.Package = "noroots", "./release/image/testdata/noroots"
	spec.Platforms = []Platform{{OS: "linux", Arch: "amd64"}}
	_, err := Build(context.Background(), moduleRoot, t.TempDir(), spec)
	if err == nil || !strings.Contains(err.Error(), `add `+"`"+`import _ "golang.org/x/crypto/x509roots/fallback"`) {
		t.Fatalf("error %v, want one naming the missing CA roots import and the fix", err)
	}
}

func TestBuildRefusesIncompleteSpec(t *testing.T) {
	_, err := Build(context.Background(), moduleRoot, t.TempDir(), Spec{Name: "a/b"})
	for _, want := range []string{`image name "a/b"`, "Package is empty", "version is empty", "revision is empty",
		"source is empty", "Created is zero"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}

// Every in-cluster binary of the repository gets an image, and each links the CA roots its image relies on.
func TestEveryCommandLinksCARoots(t *testing.T) {
	names, err := Commands(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(names, "kof-operator") {
		t.Fatalf("Commands = %v, want kof-operator among them", names)
	}
	for _, n := range names {
		deps := goList(t, "-deps", "-f", "{{.ImportPath}}", PackageOf(n))
		if !contains(strings.Fields(deps), CARootsPackage) {
			t.Errorf("%s does not import %s; add `import _ %q` to its main package", PackageOf(n), CARootsPackage,
				CARootsPackage)
		}
	}
}

func TestLayerTarIsIndependentOfTheMachine(t *testing.T) {
	var a, b bytes.Buffer
	if err := LayerTar(&a, Entries("x", []byte("binary")), created); err != nil {
		t.Fatal(err)
	}
	if err := LayerTar(&b, Entries("x", []byte("binary")), created.In(time.FixedZone("elsewhere", 7200))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("one instant in two time zones gave two archives")
	}
	tr := tar.NewReader(&a)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		if h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(created) {
			t.Errorf("%s: owner names %q/%q, time %s", h.Name, h.Uname, h.Gname, h.ModTime)
		}
	}
	want := []string{"etc/", "etc/group", "etc/passwd", "home/", "home/nonroot/", "tmp/", "x"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestWriteLayout(t *testing.T) {
	spec := helloSpec()
	spec.Platforms = []Platform{{OS: "linux", Arch: "arm64"}}
	img, err := Build(context.Background(), moduleRoot, t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "images")
	for range 2 { // the second run replaces the first layout
		if err := WriteLayout(dir, []*Image{img}); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != img.Digest ||
		im.Manifests[0].Annotations[ocispec.AnnotationRefName] != "hello:1.2.3" {
		t.Fatalf("layout index %+v, want one entry hello:1.2.3 at %s", im.Manifests, img.Digest)
	}
	child, err := idx.ImageIndex(img.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(child, "hello"); err != nil {
		t.Error(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(other, []*Image{img}); err == nil || !strings.Contains(err.Error(), "not an OCI layout") {
		t.Errorf("writing over a folder of other files: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(other, "notes.txt")); err != nil {
		t.Errorf("the refused folder lost its file: %v", err)
	}
}

func TestVerifyRejectsAShell(t *testing.T) {
	spec := helloSpec()
	spec.Platforms = []Platform{{OS: "linux", Arch: "amd64"}}
	img, err := Build(context.Background(), moduleRoot, t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(img.Index, "other"); err == nil || !strings.Contains(err.Error(), "layer holds hello") {
		t.Errorf("Verify under another name: %v, want the unexpected binary named", err)
	}
}

func TestParsePlatforms(t *testing.T) {
	got, err := ParsePlatforms("linux/amd64, linux/arm64")
	if err != nil || len(got) != 2 || got[1].String() != "linux/arm64" {
		t.Errorf("ParsePlatforms = %v, %v", got, err)
	}
	for _, bad := range []string{"", "windows/amd64", "linux", "linux/amd64,linux/amd64", "linux/arm/v7"} {
		if _, err := ParsePlatforms(bad); err == nil {
			t.Errorf("ParsePlatforms(%q) accepted", bad)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Pack puts a static binary built elsewhere (here one without the CA roots, as a third-party program may be) into
// an image Verify accepts, with the binary as entrypoint; a binary of another platform and a dynamically linked one
// are refused with the reason.
func TestPackBinaryBuiltElsewhere(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	amd64, arm64 := Platform{OS: "linux", Arch: "amd64"}, Platform{OS: "linux", Arch: "arm64"}
	bin := filepath.Join(dir, "noroots")
	if err := GoBuild(ctx, moduleRoot, "./release/image/testdata/noroots", amd64, bin); err != nil {
		t.Fatal(err)
	}
	spec := helloSpec()
	spec.Name, spec.Package = "noroots", "kof.dev/kof/release/image/testdata/noroots"
	img, err := Pack(spec, amd64, bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(img.Index, "noroots"); err != nil {
		t.Error(err)
	}
	if len(img.Binaries) != 1 || img.Binaries[0].Platform != amd64 || img.Binaries[0].Info == nil {
		t.Errorf("binaries %+v, want the one linux/amd64 binary with its build information", img.Binaries)
	}
	if _, err := Pack(spec, arm64, bin); err == nil || !strings.Contains(err.Error(), "built for linux/amd64, want linux/arm64") {
		t.Errorf("packing a linux/amd64 binary as linux/arm64: %v, want the platform named", err)
	}
	if _, err := Pack(spec, amd64, "/bin/sh"); err == nil {
		t.Error("packing /bin/sh (no Go build information, dynamically linked) succeeded")
	}
	if _, err := Pack(Spec{Name: "x"}, amd64, bin); err == nil || !strings.Contains(err.Error(), "version is empty") {
		t.Errorf("an incomplete spec: %v, want it refused", err)
	}
}
