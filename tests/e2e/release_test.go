package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	helmrelease "helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/release"
	"kof.dev/kof/release/image"
	"kof.dev/kof/release/sbom"
)

// e2eVersion is the version the release test publishes: a pre-release, so it can never be mistaken for a real one.
const e2eVersion = "2.0.1-e2e.1"

// A release published by `make release` to a real registry installs with `helm install oci://...`, and every image
// reference that names a KOF image, in every object rendered for every cluster of scenario 01, is the pinned
// reference the registry serves at that tag and digest. A second build (`make images`) gives the same digests, and
// each image is what a KOF image must be (user 65532, only the binary: no shell).
func TestReleaseInstallsFromTheRegistry(t *testing.T) {
	ctx := context.Background()
	remote := image.Remote{PlainHTTP: true}
	m, out := currentRelease(t)
	checkPublishedImages(t, ctx, m, remote, out)
	checkPublishedCharts(t, ctx, m, remote)

	start := time.Now()
	layoutDir := filepath.Join(t.TempDir(), "images")
	runMake(t, "images", "VERSION="+e2eVersion, "OUT="+layoutDir)
	t.Logf("make images (second build of the same commit): %.1fs", time.Since(start).Seconds())
	checkSameDigests(t, m, layoutDir)

	charts := pullCharts(t, m)
	sc, err := harness.LoadScenario(shared.scenariosDir, "01-regional-child")
	if err != nil {
		t.Fatal(err)
	}
	umbrella := m.Chart(release.UmbrellaChart)
	if umbrella == nil {
		t.Fatalf("the release has no %s chart", release.UmbrellaChart)
	}
	// Flux pulls the components from the release registry, as a user's would (the session's own chart repository is
	// only the default); the plain-HTTP registry needs `insecure` on Flux's HelmRepository, as a user would set it
	// for such a registry.
	extra := map[string]any{"global": map[string]any{"helmRepo": map[string]any{"kofManaged": map[string]any{
		"url": "oci://" + m.Registry + "/" + release.ChartsPath, "spec": map[string]any{"insecure": true}}}}}
	in, err := shared.session.InstallFrom(ctx, sc, extra, harness.Source{ChartsDir: charts,
		Umbrella: helmInstallOCI(t, umbrella)})
	t.Cleanup(func() {
		if in != nil {
			if err := in.Stop(); err != nil {
				t.Errorf("stop operator: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("install from %s: %v", umbrella.Reference, err)
	}
	if got := in.Release.Chart.Metadata.Version; got != e2eVersion {
		t.Errorf("installed umbrella version %s, want %s", got, e2eVersion)
	}
	checkLiveObjects(t, ctx, m)
	waitOperator(t, in)

	f, _, err := in.Render(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkRenderedImages(t, ctx, f, m, remote)

	deleteClusters(t, in)
	uninstallLeavesCRDsAndNoOperatorObjects(t, in)
}

// runMake runs `make target vars...` in the module root and fails the test with its output on error.
func runMake(t *testing.T, target string, vars ...string) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", target}, vars...)...)
	cmd.Dir = shared.session.Root
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s %s: %v\n%s", target, strings.Join(vars, " "), err, b)
	}
	if testing.Verbose() {
		t.Logf("make %s:\n%s", target, b)
	}
}

// checkPublishedImages checks every image of the manifest: one per binary of cmd/, its tag served at its
// digest, its index a KOF image (image.Verify, from the registry's bytes), its SBOM file intact and about it.
func checkPublishedImages(t *testing.T, ctx context.Context, m *release.Manifest, remote image.Remote, out string) {
	t.Helper()
	names, err := image.Commands(shared.session.Root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range m.Images {
		got = append(got, e.Name)
		if e.Reference != e.Repository+":"+e2eVersion+"@"+e.Digest || e.Repository != m.Registry+"/"+e.Name {
			t.Errorf("image %s: reference %s, repository %s", e.Name, e.Reference, e.Repository)
		}
		d, err := remote.Resolve(ctx, e.Repository+":"+e.Tag)
		if err != nil {
			t.Error(err)
			continue
		}
		if d.Digest.String() != e.Digest {
			t.Errorf("%s:%s is served at %s, the manifest records %s", e.Repository, e.Tag, d.Digest, e.Digest)
		}
		idx, err := remote.Index(ctx, e.Repository+"@"+e.Digest)
		if err != nil {
			t.Error(err)
			continue
		}
		if err := image.Verify(idx, e.Name); err != nil {
			t.Errorf("published image: %v", err)
		}
		if len(e.Platforms) != 2 {
			t.Errorf("image %s has platforms %v, want linux/amd64 and linux/arm64", e.Name, e.Platforms)
		}
		checkSBOM(t, e, out)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("release images %v, want one per binary of cmd/ %v", got, names)
	}
}

func checkSBOM(t *testing.T, e release.ImageEntry, out string) {
	t.Helper()
	if e.SBOM == nil {
		t.Errorf("image %s has no SBOM", e.Name)
		return
	}
	data, err := os.ReadFile(filepath.Join(out, e.SBOM.Path))
	if err != nil {
		t.Error(err)
		return
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.SBOM.SHA256 {
		t.Errorf("SBOM %s does not match the manifest's sha256", e.SBOM.Path)
	}
	bom, err := sbom.Decode(data)
	if err != nil {
		t.Error(err)
		return
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil || bom.Metadata.Component.BOMRef != e.Repository+"@"+e.Digest {
		t.Errorf("SBOM %s is not about %s@%s", e.SBOM.Path, e.Repository, e.Digest)
	}
	if bom.Components == nil || len(*bom.Components) < 10 {
		t.Errorf("SBOM %s lists too few components for a Go binary", e.SBOM.Path)
	}
}

// checkPublishedCharts checks every chart of charts/ is in the release at the release version, served at its digest.
func checkPublishedCharts(t *testing.T, ctx context.Context, m *release.Manifest, remote image.Remote) {
	t.Helper()
	dirs, err := release.ChartDirs(filepath.Join(shared.session.Root, "charts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		c := m.Chart(filepath.Base(d))
		if c == nil {
			t.Errorf("chart %s is not in the release", filepath.Base(d))
			continue
		}
		if c.Version != e2eVersion || c.Reference != "oci://"+m.Registry+"/charts/"+c.Name {
			t.Errorf("chart %s: %s --version %s", c.Name, c.Reference, c.Version)
		}
		got, err := remote.Resolve(ctx, strings.TrimPrefix(c.Reference, "oci://")+":"+c.Version)
		if err != nil {
			t.Error(err)
		} else if got.Digest.String() != c.Digest {
			t.Errorf("chart %s is served at %s, the manifest records %s", c.Name, got.Digest, c.Digest)
		}
	}
}

// checkSameDigests compares the digests of a second, independent build (an OCI layout) with the release's.
func checkSameDigests(t *testing.T, m *release.Manifest, layoutDir string) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != len(m.Images) {
		t.Errorf("make images wrote %d images, the release has %d", len(im.Manifests), len(m.Images))
	}
	for _, d := range im.Manifests {
		ref := d.Annotations[ocispec.AnnotationRefName]
		e := m.Image(strings.TrimSuffix(ref, ":"+e2eVersion))
		if e == nil {
			t.Errorf("make images wrote %s, which the release lacks", ref)
			continue
		}
		if d.Digest.String() != e.Digest {
			t.Errorf("image %s: second build %s, release %s: the build is not reproducible", e.Name, d.Digest, e.Digest)
		}
	}
}

// helmEnv isolates the helm CLI's configuration, cache and data in a test folder.
func helmEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	return append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
}

// pullCharts pulls every chart of the release with `helm pull oci://... --version --untar` into one folder.
func pullCharts(t *testing.T, m *release.Manifest) string {
	t.Helper()
	dir := t.TempDir()
	env := helmEnv(t)
	for _, c := range m.Charts {
		cmd := exec.Command(filepath.Join(shared.session.Root, "bin", "helm"), "pull", c.Reference, "--version",
			c.Version, "--plain-http", "--untar", "--untardir", dir)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm pull %s --version %s: %v\n%s", c.Reference, c.Version, err, b)
		}
	}
	return dir
}

// helmInstallOCI returns the Source.Umbrella that runs `helm upgrade --install kof oci://... --version <v>` with the
// helm CLI against the shared control plane and returns the deployed release.
func helmInstallOCI(t *testing.T, umbrella *release.ChartEntry) func(context.Context, map[string]any) (*helmrelease.Release, error) {
	env := helmEnv(t)
	return func(ctx context.Context, values map[string]any) (*helmrelease.Release, error) {
		b, err := yaml.Marshal(values)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, filepath.Join(shared.session.Root, "bin", "helm"), "upgrade", "--install",
			harness.UmbrellaRelease, umbrella.Reference, "--version", umbrella.Version, "--plain-http",
			"--namespace", harness.UmbrellaNamespace, "--kubeconfig", shared.session.ControlPlane.Kubeconfig,
			"-f", file)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm install %s --version %s: %v\n%s", umbrella.Reference, umbrella.Version, err, out)
		}
		return shared.session.Helm.Get(harness.UmbrellaRelease, harness.UmbrellaNamespace)
	}
}

// checkLiveObjects checks what the installed release put on the API server: Flux's HelmRepository of KOF's charts
// points at the release registry, and the kof-operator Deployment runs the pinned image.
func checkLiveObjects(t *testing.T, ctx context.Context, m *release.Manifest) {
	t.Helper()
	repos := &unstructured.UnstructuredList{}
	repos.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	repos.SetKind("HelmRepositoryList")
	if err := c().List(ctx, repos, client.InNamespace(harness.KCMNamespace)); err != nil {
		t.Fatal(err)
	}
	want := "oci://" + m.Registry + "/" + release.ChartsPath
	found := false
	for _, r := range repos.Items {
		if r.GetName() == "kof-repo" {
			found = true
			url, _, _ := unstructured.NestedString(r.Object, "spec", "url")
			insecure, _, _ := unstructured.NestedBool(r.Object, "spec", "insecure")
			if url != want || !insecure {
				t.Errorf("HelmRepository kof-repo url %s insecure %v, want %s insecure", url, insecure, want)
			}
		}
	}
	if !found {
		t.Error("no HelmRepository kof-repo")
	}
	op := m.Image("kof-operator")
	refs := 0
	for _, r := range release.References(liveDeployments(t, ctx)) {
		if release.ImageName(r.Ref) == "kof-operator" {
			refs++
			if r.Ref != op.Reference {
				t.Errorf("live %s %s = %s, want %s", r.Object, r.Field, r.Ref, op.Reference)
			}
		}
	}
	if refs == 0 {
		t.Error("no live Deployment runs the kof-operator image")
	}
}

// checkRenderedImages checks every image reference of every object rendered for every cluster: those naming a KOF
// image are the release's pinned reference and the registry serves that tag at that digest; third-party ones are
// listed.
func checkRenderedImages(t *testing.T, ctx context.Context, f *fleet.Fleet, m *release.Manifest, remote image.Remote) {
	t.Helper()
	served := map[string]string{} // tag reference → digest the registry serves
	thirdParty := map[string]bool{}
	kof := 0
	for _, cl := range f.Clusters {
		for _, svc := range cl.Services {
			if svc.Objects == nil {
				continue
			}
			for _, r := range release.References(svc.Objects.Objects()) {
				e := m.Image(release.ImageName(r.Ref))
				if e == nil {
					thirdParty[r.Ref] = true
					continue
				}
				kof++
				where := cl.Name + "/" + svc.Name + " " + r.Object + " " + r.Field
				if r.Ref != e.Reference {
					t.Errorf("%s = %s, want the release's %s", where, r.Ref, e.Reference)
					continue
				}
				name, tag, digest := release.Parts(r.Ref)
				if _, ok := served[name+":"+tag]; !ok {
					d, err := remote.Resolve(ctx, name+":"+tag)
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					served[name+":"+tag] = d.Digest.String()
					if _, err := remote.Resolve(ctx, name+"@"+digest); err != nil {
						t.Errorf("%s: %v", where, err)
					}
				}
				if served[name+":"+tag] != digest {
					t.Errorf("%s pins %s; the registry serves %s:%s at %s", where, digest, name, tag, served[name+":"+tag])
				}
			}
		}
	}
	if kof == 0 {
		t.Fatal("no rendered object names a KOF image: the check would prove nothing")
	}
	list := make([]string, 0, len(thirdParty))
	for r := range thirdParty {
		list = append(list, r)
	}
	sort.Strings(list)
	t.Logf("%d references to KOF images checked in %d clusters; %d third-party images (listed, not checked):\n  %s",
		kof, len(f.Clusters), len(list), strings.Join(list, "\n  "))
}

// liveDeployments returns every Deployment on the API server as unstructured objects.
func liveDeployments(t *testing.T, ctx context.Context) []*unstructured.Unstructured {
	t.Helper()
	var list appsv1.DeploymentList
	if err := c().List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&list.Items[i])
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetKind("Deployment")
		out = append(out, u)
	}
	return out
}
