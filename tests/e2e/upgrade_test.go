package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	helmrelease "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/diff"
	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/testproc"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/release"
	"kof.dev/kof/release/image"
)

// upgradeFromVersion is the version release N-1 is published as: below e2eVersion (release N, this tree) in semver
// order, so N is an upgrade of N-1 and N-1 a downgrade of N.
const upgradeFromVersion = "2.0.1-e2e.0"

// upgradeBaseline bounds the commits release N-1 is built from while the history of charts/kof/Chart.yaml holds no
// earlier chart version (every commit so far is 2.0.0, set when the chart was added): the first commit whose
// ServiceTemplateChains list only lower versions as upgrade sources, so that a rollback to it is a fair test.
// previousCommit picks the commit after it whose dependencies are this tree's, and uses the parent of the commit
// that sets a new version once one exists.
const upgradeBaseline = "0c43c11fa9ce5ed693f5212e3d4b88775abdfb48"

// releasePlatforms is the one platform the upgrade test builds release N-1 for (the control plane's).
const releasePlatforms = "linux/amd64"

// previousCommit returns the commit release N-1 is built from and how it was found: the parent of the newest
// commit that changed the `version:` of charts/kof/Chart.yaml to this tree's version, when that parent's version is
// another one. Otherwise it is the oldest commit since upgradeBaseline whose go.mod and go.sum are HEAD's (the
// newest commit that changed either), when that is not HEAD itself: the widest upgrade whose `make release` compiles
// from the packages release N compiled (on a fresh machine a commit with other dependency versions recompiles
// nearly every package of the CLI and the images); else upgradeBaseline.
func previousCommit(t *testing.T) (commit, how string) {
	t.Helper()
	root := shared.session.Root
	version := func(rev string) string {
		out, err := exec.Command("git", "-C", root, "show", rev+":charts/kof/Chart.yaml").Output()
		if err != nil {
			return ""
		}
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "version:"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	current := version("HEAD")
	out, err := exec.Command("git", "-C", root, "log", "--format=%H", "--", "charts/kof/Chart.yaml").Output()
	if err != nil {
		t.Fatalf("git log charts/kof/Chart.yaml: %v (the upgrade test needs the repository's history)", err)
	}
	for _, c := range strings.Fields(string(out)) {
		if version(c) != current {
			break
		}
		if prev := version(c + "^"); prev != "" && prev != current {
			return c + "^", fmt.Sprintf("the parent of %s, which set version %s (it has %s)", c[:12], current, prev)
		}
	}
	if err := exec.Command("git", "-C", root, "cat-file", "-e", upgradeBaseline+"^{commit}").Run(); err != nil {
		t.Fatalf("commit %s (upgradeBaseline) is not in the repository's history: clone it with its history", upgradeBaseline)
	}
	deps, err := exec.Command("git", "-C", root, "log", "-1", "--format=%H", "HEAD", "--", "go.mod", "go.sum").Output()
	if err != nil {
		t.Fatalf("git log go.mod go.sum: %v", err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	if c := strings.TrimSpace(string(deps)); c != "" && c != strings.TrimSpace(string(head)) &&
		exec.Command("git", "-C", root, "merge-base", "--is-ancestor", upgradeBaseline, c).Run() == nil {
		return c, fmt.Sprintf("the newest commit that changed go.mod or go.sum (%s), after upgradeBaseline: the oldest "+
			"with this tree's dependencies", c[:12])
	}
	return upgradeBaseline, "no earlier chart version in the history of charts/kof/Chart.yaml (all " + current +
		"): upgradeBaseline"
}

// worktree checks out commit in a new git worktree and returns its folder; it is removed when the test ends.
func worktree(t *testing.T, commit string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "previous")
	root := shared.session.Root
	if b, err := exec.Command("git", "-C", root, "worktree", "add", "--detach", dir, commit).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add %s: %v\n%s", commit, err, b)
	}
	t.Cleanup(func() {
		if b, err := exec.Command("git", "-C", root, "worktree", "remove", "--force", dir).CombinedOutput(); err != nil {
			t.Errorf("git worktree remove %s: %v\n%s", dir, err, b)
		}
	})
	return dir
}

// publish runs `make release` in root (a worktree of an earlier commit) to registry for releasePlatforms and
// returns the manifest. The worktree is a new folder each run, and earlier commits build their bin/kof (the tool
// that builds the images, not a released artifact) without -trimpath, so the compiled packages would name the
// folder and none would come from the build cache (the build took 36 s, 23.6 s with it); GOFLAGS=-trimpath makes
// them the packages this tree's builds and the last run compiled. The images' builds set their own flags and clear
// GOFLAGS (release/image), so the released bytes do not change.
func publish(t *testing.T, root, registry, version string) *release.Manifest {
	t.Helper()
	out := filepath.Join(t.TempDir(), "release-"+version)
	start := time.Now()
	if err := makeRelease(root, registry, version, out, releasePlatforms, "GOFLAGS=-trimpath"); err != nil {
		t.Fatal(err)
	}
	t.Logf("make release %s: %.1fs", version, time.Since(start).Seconds())
	m, err := release.ReadManifest(filepath.Join(out, release.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// releasedOperator extracts the kof-operator binary of the release's linux/amd64 image, as the registry serves it,
// into a file and returns its path: the harness runs the released binary.
func releasedOperator(t *testing.T, ctx context.Context, m *release.Manifest) string {
	t.Helper()
	e := m.Image("kof-operator")
	if e == nil {
		t.Fatal("the release has no kof-operator image")
	}
	idx, err := image.Remote{PlainHTTP: true}.Index(ctx, e.Repository+"@"+e.Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Architecture != "amd64" {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "kof-operator-"+m.Version)
		if err := extract(img, strings.TrimPrefix(image.Entrypoint("kof-operator"), "/"), path); err != nil {
			t.Fatalf("kof-operator of %s: %v", e.Reference, err)
		}
		return path
	}
	t.Fatalf("image %s has no linux/amd64 manifest", e.Reference)
	return ""
}

// extract writes the file name of img's layers to path, executable.
func extract(img v1.Image, name, path string) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rc.Close()
				return err
			}
			if strings.TrimPrefix(h.Name, "./") != name {
				continue
			}
			data, err := io.ReadAll(tr)
			rc.Close()
			if err != nil {
				return err
			}
			return os.WriteFile(path, data, 0o755)
		}
		rc.Close()
	}
	return fmt.Errorf("no file %s in the image", name)
}

// registryValues are the umbrella values that make Flux pull the components from the release registry.
func registryValues(m *release.Manifest) map[string]any {
	return map[string]any{"global": map[string]any{"helmRepo": map[string]any{"kofManaged": map[string]any{
		"url": "oci://" + m.Registry + "/" + release.ChartsPath, "spec": map[string]any{"insecure": true}}}}}
}

// helmRollback returns the Source.Umbrella that runs `helm rollback kof <revision>` with the helm CLI and returns
// the deployed release.
func helmRollback(t *testing.T, revision int) func(context.Context, map[string]any) (*helmrelease.Release, error) {
	env := helmEnv(t)
	return func(ctx context.Context, _ map[string]any) (*helmrelease.Release, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(shared.session.Root, "bin", "helm"), "rollback",
			harness.UmbrellaRelease, fmt.Sprint(revision), "--namespace", harness.UmbrellaNamespace,
			"--kubeconfig", shared.session.ControlPlane.Kubeconfig)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("helm rollback %s %d: %w\n%s", harness.UmbrellaRelease, revision, err, out)
		}
		return shared.session.Helm.Get(harness.UmbrellaRelease, harness.UmbrellaNamespace)
	}
}

// applyCRDs applies the CRDs of the kof-mothership chart in chartsDir with server-side apply, as docs/upgrade.md
// says (`kubectl apply --server-side -f kof-mothership/crds/`).
func applyCRDs(t *testing.T, ctx context.Context, chartsDir string) {
	t.Helper()
	dir := filepath.Join(chartsDir, "kof-mothership", "crds")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := manifest.ParseDocuments(f, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := c().Patch(ctx, o.Unstructured, client.Apply, client.FieldOwner("kubectl"),
				client.ForceOwnership); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
}

// liveObject is what the upgrade checks keep of one object the operator made.
type liveObject struct {
	uid, resourceVersion string
	// content is the object without metadata.resourceVersion, managedFields and status (JSON).
	content string
}

// operatorState returns every object of harness.OperatorOutputKinds labelled managed-by kof-operator, by the key
// kof diff prints (manifest.Key: `Kind[.group] namespace/name`).
func operatorState(t *testing.T, ctx context.Context) map[string]liveObject {
	t.Helper()
	out := map[string]liveObject{}
	for _, gvk := range harness.OperatorOutputKinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c().List(ctx, l, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
			t.Fatalf("list %s: %v", gvk.Kind, err)
		}
		for _, o := range l.Items {
			rv := o.GetResourceVersion()
			cp := o.DeepCopy()
			cp.SetResourceVersion("")
			cp.SetManagedFields(nil)
			cp.SetGeneration(0)
			unstructured.RemoveNestedField(cp.Object, "status")
			b, err := json.Marshal(cp.Object)
			if err != nil {
				t.Fatal(err)
			}
			out[manifest.KeyOf(&o).String()] = liveObject{uid: string(o.GetUID()),
				resourceVersion: rv, content: string(b)}
		}
	}
	return out
}

// kofDiff runs `bin/kof diff --live` from one release to another against the control plane, with the
// installation's umbrella values, and returns the report, its text and the exit code.
func kofDiff(t *testing.T, in *harness.Installation, from, to *release.Manifest) (*diff.Report, string, int) {
	t.Helper()
	vals, err := render.UserValues(render.Options{ValuesFiles: []string{in.Scenario.ValuesFile}, Values: in.Values})
	if err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(vals)
	if err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, b, 0o600); err != nil {
		t.Fatal(err)
	}
	repo := func(m *release.Manifest) string { return "oci://" + m.Registry + "/" + release.ChartsPath }
	args := []string{"diff", "--live", "--kubeconfig", shared.session.ControlPlane.Kubeconfig, "--plain-http",
		"--from-charts", repo(from), "--from-version", from.Version, "--to-charts", repo(to), "--to-version",
		to.Version, "-f", values}
	run := func(extra ...string) (string, int) {
		cmd := exec.Command(filepath.Join(shared.session.Root, "bin", "kof"), append(args, extra...)...)
		cmd.Env = helmEnv(t)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("kof diff: %v", err)
		}
		if errOut.Len() > 0 {
			t.Logf("kof diff stderr: %s", errOut.String())
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
	text, code := run()
	js, jsCode := run("-o", "json")
	if code != jsCode {
		t.Errorf("kof diff exits %d in text and %d in json", code, jsCode)
	}
	var r diff.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("kof diff -o json: %v\n%s", err, js)
	}
	return &r, text, code
}

// checkDiff checks the report of `kof diff` from one release to the other: changes (exit 1) and none that hurts;
// the management cluster's KOF releases change version and the kof-operator Deployment its image.
func checkDiff(t *testing.T, r *diff.Report, text string, code int, from, to *release.Manifest) (movedFrom string) {
	t.Helper()
	t.Logf("kof diff %s → %s (exit %d):\n%s", from.Version, to.Version, code, text)
	movedFrom = helmReleaseMove(r)
	want := diff.ExitChanges
	if movedFrom != "" {
		want = diff.ExitHurts
	}
	if code != want {
		t.Errorf("kof diff %s → %s exits %d, want %d (changes; hurts only for HelmReleases that move from %q)",
			from.Version, to.Version, code, want, movedFrom)
	}
	for _, h := range r.Hurts() {
		if movedFrom != "" && h.Object == "" && h.Reason == diff.ReasonOwnerMoved &&
			strings.Contains(h.Message, "kubectl -n "+movedFrom+" patch helmrelease ") {
			continue // the umbrella's HelmReleases changing namespace: docs/upgrade.md, "HelmReleases that move"
		}
		t.Errorf("kof diff %s → %s: a change hurts: %s %s %s: %s", from.Version, to.Version, h.Cluster, h.Release,
			h.Object, h.Hurt)
	}
	// What the API server and the controllers add to the live umbrella objects is no change of the charts.
	for _, noise := range []string{"metadata.finalizers", "meta.helm.sh/release-name", "metadata.uid",
		"metadata.resourceVersion", "metadata.managedFields", `"10m0s"`} {
		if strings.Contains(text, noise) {
			t.Errorf("kof diff %s → %s reports %s, which the live cluster adds and no chart sets", from.Version,
				to.Version, noise)
		}
	}
	var versionChanged, imageChanged bool
	for _, cl := range r.Clusters {
		if cl.Name != harness.ManagementCluster {
			continue
		}
		for _, rel := range cl.Releases {
			for _, f := range rel.Fields {
				if rel.Name == "kof-mothership" && f.Path == "version" && f.Old == from.Version && f.New == to.Version {
					versionChanged = true
				}
			}
			for _, o := range rel.Objects {
				for _, f := range o.Fields {
					if strings.HasPrefix(o.Key, "Deployment.apps kof/") && strings.HasSuffix(f.Path, ".image") &&
						strings.Contains(fmt.Sprint(f.New), "kof-operator:"+to.Version+"@") {
						imageChanged = true
					}
				}
			}
		}
	}
	if !versionChanged {
		t.Errorf("kof diff does not show kof-mothership's version %s → %s", from.Version, to.Version)
	}
	if !imageChanged {
		t.Errorf("kof diff does not show the kof-operator image of %s", to.Version)
	}
	return movedFrom
}

// helmReleaseMove returns the namespace the management cluster's KOF releases move from when the umbrella's
// HelmReleases change namespace between the two sides of r (their `via` field: HelmRelease <ns>/<name> on both
// sides, the namespace differing), or "" when none moves. Every moving release must move from the same namespace.
func helmReleaseMove(r *diff.Report) string {
	from := ""
	for _, cl := range r.Clusters {
		if cl.Name != harness.ManagementCluster {
			continue
		}
		for _, rel := range cl.Releases {
			for _, f := range rel.Fields {
				o, n := fmt.Sprint(f.Old), fmt.Sprint(f.New)
				if f.Path != "via" || !strings.HasPrefix(o, "HelmRelease ") || !strings.HasPrefix(n, "HelmRelease ") {
					continue
				}
				ns, _, _ := strings.Cut(strings.TrimPrefix(o, "HelmRelease "), "/")
				if from != "" && from != ns {
					return from + " and " + ns // no namespace the docs' lines could be given: checkDiff fails
				}
				from = ns
			}
		}
	}
	return from
}

// suspendMovingHelmReleases runs the lines of docs/upgrade.md ("HelmReleases that move") as written, with their
// `from=` set to from (the namespace the umbrella's HelmReleases move out of), in bash with bin/ first on PATH and
// the control plane's kubeconfig; then every HelmRelease of the umbrella in from must be suspended.
func suspendMovingHelmReleases(t *testing.T, ctx context.Context, from string) {
	t.Helper()
	guide := filepath.Join(shared.session.Root, "docs", "upgrade.md")
	doc, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, block := range testproc.FencedBlocks(doc, "sh") {
		if strings.Contains(string(block), `"suspend":true`) {
			script = string(block)
		}
	}
	const fromLine = "from=kcm-system "
	if !strings.Contains(script, fromLine) {
		t.Fatalf("%s: no sh block with the suspend lines starting %q", guide, fromLine)
	}
	script = strings.Replace(script, fromLine, "from="+from+" ", 1)
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(shared.session.Root, "bin")+":"+os.Getenv("PATH"),
		"KUBECONFIG="+shared.session.ControlPlane.Kubeconfig)
	out, err := cmd.CombinedOutput()
	t.Logf("docs/upgrade.md suspend lines with from=%s:\n%s", from, out)
	if err != nil {
		t.Fatalf("the suspend lines of %s failed: %v", guide, err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind + "List"))
	if err := c().List(ctx, list, client.InNamespace(from),
		client.MatchingLabels{"app.kubernetes.io/name": "kof", "app.kubernetes.io/instance": harness.UmbrellaRelease}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("no HelmRelease of the umbrella in %s to suspend", from)
	}
	for _, hr := range list.Items {
		if suspended, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend"); !suspended {
			t.Errorf("HelmRelease %s/%s is not suspended after the docs' lines", hr.GetNamespace(), hr.GetName())
		}
	}
}

// checkRollout checks an upgrade or rollback from the state before (operatorState and vmUserCredentials): every
// operator object is the same object (same UID), every credential is unchanged (checkCredentials), the operator
// wrote only the objects whose prediction changed (changed, per the diff report) and then nothing, and the operator
// objects and the objects of every KOF release of the management cluster equal kof render's prediction.
func checkRollout(t *testing.T, ctx context.Context, in *harness.Installation, before map[string]liveObject,
	beforeCreds map[string]string, r *diff.Report) {
	t.Helper()
	changed := map[string]bool{}
	for _, cl := range r.Clusters {
		for _, rel := range cl.Releases {
			if rel.Name != fleet.OperatorOutputs {
				continue
			}
			for _, o := range rel.Objects {
				changed[o.Key] = true
			}
		}
	}
	after := operatorState(t, ctx)
	for id, b := range before {
		a, ok := after[id]
		switch {
		case !ok:
			t.Errorf("%s is gone after the rollout", id)
		case a.uid != b.uid:
			t.Errorf("%s was recreated (UID %s → %s)", id, b.uid, a.uid)
		case a.content != b.content && !changed[id]:
			t.Errorf("%s changed, but kof diff predicted no change:\nbefore %s\nafter  %s", id, b.content, a.content)
		case a.resourceVersion != b.resourceVersion && !changed[id]:
			t.Errorf("%s was written (resourceVersion %s → %s) though nothing of it changed", id, b.resourceVersion,
				a.resourceVersion)
		}
	}
	checkCredentials(t, beforeCreds, vmUserCredentials(t, ctx))
	time.Sleep(5 * time.Second) // then nothing: no write in the next seconds
	for id, a := range after {
		if now := operatorState(t, ctx)[id]; now.resourceVersion != a.resourceVersion {
			t.Errorf("%s is still being written after the rollout converged (resourceVersion %s → %s)", id,
				a.resourceVersion, now.resourceVersion)
		}
	}
	assertOfflineMatchesLive(t, in)
	assertReleasesMatchRender(t, ctx, in)
}

// checkChains checks every ServiceTemplateChain of the ServiceTemplates of version `to`: each lists the templates
// of version `from` as upgrade sources when to is the higher version, and never lists a template of a higher
// version than to (no downgrade offered as an upgrade).
func checkChains(t *testing.T, ctx context.Context, from, to string, upgrade bool) {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("k0rdent.mirantis.com/v1beta1")
	l.SetKind("ServiceTemplateChainList")
	if err := c().List(ctx, l, client.InNamespace(harness.KCMNamespace)); err != nil {
		t.Fatal(err)
	}
	suffix := func(v string) string { return "-" + strings.NewReplacer(".", "-", "+", "-").Replace(v) }
	chains := 0
	for _, ch := range l.Items {
		if !strings.HasSuffix(ch.GetName(), suffix(to)) {
			continue
		}
		chains++
		base := strings.TrimSuffix(ch.GetName(), suffix(to))
		entries, _, _ := unstructured.NestedSlice(ch.Object, "spec", "supportedTemplates")
		var sources []string
		for _, e := range entries {
			m, _ := e.(map[string]any)
			name, _ := m["name"].(string)
			if name == ch.GetName() {
				continue
			}
			sources = append(sources, name)
			ups, _, _ := unstructured.NestedSlice(m, "availableUpgrades")
			for _, u := range ups {
				um, _ := u.(map[string]any)
				if um["name"] != ch.GetName() || um["version"] != to {
					t.Errorf("chain %s: %s offers %v, want {name: %s, version: %s}", ch.GetName(), name, um,
						ch.GetName(), to)
				}
			}
		}
		sort.Strings(sources)
		wantSource := base + suffix(from)
		has := contains(sources, wantSource)
		if upgrade && !has {
			t.Errorf("chain %s lists %v as upgrade sources, want %s among them", ch.GetName(), sources, wantSource)
		}
		if !upgrade && has {
			t.Errorf("chain %s offers the newer %s as an upgrade to %s (a downgrade)", ch.GetName(), wantSource, to)
		}
	}
	if chains == 0 {
		t.Errorf("no ServiceTemplateChain of version %s", to)
	}
}

// Release N-1 (an earlier commit, published by its own `make release`) installs from the registry with real Flux,
// converges, and upgrades to release N (this tree) as docs/upgrade.md says: `kof diff` first (changes, none that
// hurts), CRDs, then `helm upgrade` of the umbrella. Then `helm rollback` to N-1 with the same checks.
//
// Wall time: 100 s on two cores shared with other builds (up to 220 s at a load average above 20), of which 30 s
// (up to 80 s) are `make release` of the earlier commit for one platform (its packages that differ from this
// tree's compile anew) and the rest three Flux rollouts (install, upgrade, rollback) with their checks. It shares the package's control
// plane, and the registry and release N with TestReleaseInstallsFromTheRegistry (registry_test.go), so N is built
// once per run.
func TestUpgradeFromPreviousReleaseAndRollback(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	commit, how := previousCommit(t)
	t.Logf("release N-1 = commit %s (%s) as %s; release N = this tree as %s", commit, how, upgradeFromVersion,
		e2eVersion)
	cur, _ := currentRelease(t)
	prev := publish(t, worktree(t, commit), releaseRegistry(t), upgradeFromVersion)
	prevSrc := harness.Source{ChartsDir: pullCharts(t, prev), Umbrella: helmInstallOCI(t, prev.Chart(release.UmbrellaChart)),
		OperatorBinary: releasedOperator(t, ctx, prev)}
	curSrc := harness.Source{ChartsDir: pullCharts(t, cur), Umbrella: helmInstallOCI(t, cur.Chart(release.UmbrellaChart)),
		OperatorBinary: releasedOperator(t, ctx, cur)}
	t.Logf("releases built and pulled: %.1fs", time.Since(start).Seconds())

	sc, err := harness.LoadScenario(shared.scenariosDir, "01-regional-child")
	if err != nil {
		t.Fatal(err)
	}
	removeKeptTemplates(t, ctx, upgradeFromVersion, e2eVersion)
	extra := registryValues(prev)
	in, err := shared.session.InstallFrom(ctx, sc, extra, prevSrc)
	t.Cleanup(func() {
		if in != nil {
			if err := in.Stop(); err != nil {
				t.Errorf("stop operator: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("install %s: %v", upgradeFromVersion, err)
	}
	waitOperator(t, in)
	installed := in.Release.Version

	// Upgrade N-1 → N.
	r, text, code := kofDiff(t, in, prev, cur)
	if from := checkDiff(t, r, text, code, prev, cur); from != "" {
		suspendMovingHelmReleases(t, ctx, from)
	}
	before, beforeCreds := operatorState(t, ctx), vmUserCredentials(t, ctx)
	applyCRDs(t, ctx, curSrc.ChartsDir)
	rel, err := in.UpgradeFrom(ctx, extra, curSrc)
	if err != nil {
		t.Fatalf("upgrade to %s: %v", e2eVersion, err)
	}
	if rel.Chart.Metadata.Version != e2eVersion {
		t.Errorf("umbrella %s after the upgrade, want %s", rel.Chart.Metadata.Version, e2eVersion)
	}
	waitOperator(t, in)
	checkRollout(t, ctx, in, before, beforeCreds, r)
	checkChains(t, ctx, upgradeFromVersion, e2eVersion, true)
	t.Logf("upgrade %s → %s checked: %.1fs", upgradeFromVersion, e2eVersion, time.Since(start).Seconds())

	// Rollback N → N-1 (CRDs stay: docs/upgrade.md).
	r, text, code = kofDiff(t, in, cur, prev)
	if from := checkDiff(t, r, text, code, cur, prev); from != "" {
		suspendMovingHelmReleases(t, ctx, from)
	}
	before, beforeCreds = operatorState(t, ctx), vmUserCredentials(t, ctx)
	rollback := prevSrc
	rollback.Umbrella = helmRollback(t, installed)
	rel, err = in.UpgradeFrom(ctx, extra, rollback)
	if err != nil {
		t.Fatalf("rollback to %s: %v", upgradeFromVersion, err)
	}
	if rel.Chart.Metadata.Version != upgradeFromVersion {
		t.Errorf("umbrella %s after the rollback, want %s", rel.Chart.Metadata.Version, upgradeFromVersion)
	}
	waitOperator(t, in)
	checkRollout(t, ctx, in, before, beforeCreds, r)
	checkChains(t, ctx, e2eVersion, upgradeFromVersion, false)
	t.Logf("rollback %s → %s checked: %.1fs", e2eVersion, upgradeFromVersion, time.Since(start).Seconds())

	deleteClusters(t, in)
	uninstallLeavesCRDsAndNoOperatorObjects(t, in)
	t.Logf("upgrade and rollback e2e: %.1fs", time.Since(start).Seconds())
}

// templateAction matches one Sveltos template action of a propagation MultiClusterService's values (`{{ ... }}`,
// unquoted in the JSON line the operator writes).
var templateAction = regexp.MustCompile(`\{\{.*?\}\}`)

// vmUserCredentials returns every credential of the fleet the operator made, by `Kind namespace/name` (a VMUser
// carried to a regional by a propagation MultiClusterService: `VMUser name (MultiClusterService mcs)`), each as
// the string that must not change across an upgrade or rollback: a credentials Secret `kof-vmuser-creds-*`'s UID,
// username and password; a VMUser's username and password reference (Secret name and key). The VMUser of a child
// whose storage is on a regional cluster exists on the management cluster only inside the values of its
// propagation MultiClusterService (operator/outputs Bundle.Propagation), so both places are read.
func vmUserCredentials(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	out := map[string]string{}
	var secrets corev1.SecretList
	if err := c().List(ctx, &secrets, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Name, names.VMUserSecretPrefix) {
			out["Secret "+s.Namespace+"/"+s.Name] = fmt.Sprintf("uid=%s username=%s password=%s", s.UID,
				s.Data[outputs.UsernameKey], s.Data[outputs.PasswordKey])
		}
	}
	user := func(o map[string]any) string {
		name, _, _ := unstructured.NestedString(o, "spec", "username")
		ref, _, _ := unstructured.NestedString(o, "spec", "passwordRef", "name")
		key, _, _ := unstructured.NestedString(o, "spec", "passwordRef", "key")
		return fmt.Sprintf("username=%s passwordRef=%s/%s", name, ref, key)
	}
	users := &unstructured.UnstructuredList{}
	users.SetAPIVersion("operator.victoriametrics.com/v1beta1")
	users.SetKind("VMUserList")
	if err := c().List(ctx, users, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		t.Fatal(err)
	}
	for _, u := range users.Items {
		out["VMUser "+u.GetNamespace()+"/"+u.GetName()] = user(u.Object)
	}
	mcss := &unstructured.UnstructuredList{}
	mcss.SetAPIVersion("k0rdent.mirantis.com/v1beta1")
	mcss.SetKind("MultiClusterServiceList")
	if err := c().List(ctx, mcss, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		t.Fatal(err)
	}
	for _, m := range mcss.Items {
		services, _, _ := unstructured.NestedSlice(m.Object, "spec", "serviceSpec", "services")
		for _, sv := range services {
			values, _ := sv.(map[string]any)["values"].(string)
			if !strings.Contains(values, `"VMUser"`) {
				continue
			}
			var v struct {
				Propagation struct {
					Data []map[string]any `json:"data"`
				} `json:"propagation"`
			}
			if err := json.Unmarshal([]byte(templateAction.ReplaceAllString(values, "null")), &v); err != nil {
				t.Fatalf("values of MultiClusterService %s: %v", m.GetName(), err)
			}
			for _, o := range v.Propagation.Data {
				if o["kind"] == "VMUser" {
					name, _, _ := unstructured.NestedString(o, "metadata", "name")
					out["VMUser "+name+" (MultiClusterService "+m.GetName()+")"] = user(o)
				}
			}
		}
	}
	return out
}

// checkCredentials checks that every credential of before (vmUserCredentials) is in after, unchanged, that before
// holds at least one credentials Secret and one VMUser (else the check proves nothing), and that each VMUser's
// password reference names a credentials Secret of before. Messages never print a password.
func checkCredentials(t *testing.T, before, after map[string]string) {
	t.Helper()
	secrets, users := map[string]bool{}, 0
	for id := range before {
		if name, ok := strings.CutPrefix(id, "Secret "); ok {
			secrets[name[strings.Index(name, "/")+1:]] = true
		}
	}
	for id, b := range before {
		a, ok := after[id]
		switch {
		case !ok:
			t.Errorf("credential %s is gone after the rollout", id)
		case a != b && strings.HasPrefix(id, "Secret "):
			t.Errorf("credentials Secret %s changed across the rollout (UID or data)", id)
		case a != b:
			t.Errorf("%s changed across the rollout: %s → %s", id, b, a)
		}
		if strings.HasPrefix(id, "VMUser ") {
			users++
			ref := b[strings.Index(b, "passwordRef=")+len("passwordRef="):]
			if name := ref[:strings.Index(ref, "/")]; !secrets[name] {
				t.Errorf("%s reads its password from Secret %s, which is not a credentials Secret of the fleet", id, name)
			}
		}
	}
	if len(secrets) == 0 || users == 0 {
		t.Errorf("%d credentials Secrets and %d VMUsers before the rollout: the credential checks would prove nothing",
			len(secrets), users)
	}
}

// fluxOriginLabels are the labels helm-controller adds to every object of a release it installs (its post-renderer);
// a chart renders none of them, so the prediction of a release's objects has none.
var fluxOriginLabels = []string{"helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace"}

// fromClusterState reports whether the content of o (an object of a kof-mothership release) comes from the cluster
// through Helm's `lookup`, which an offline render cannot know: a ServiceTemplateChain lists the ServiceTemplates
// found on the cluster (checkChains checks them live), and the promxy config Secret and rules ConfigMap keep what
// the kof-operator wrote there.
func fromClusterState(k manifest.Key) bool {
	return k.Kind == "ServiceTemplateChain" ||
		(k.Kind == "Secret" && strings.HasSuffix(k.Name, "-promxy-config")) ||
		(k.Kind == "ConfigMap" && strings.HasSuffix(k.Name, "-promxy-rules"))
}

// assertReleasesMatchRender checks every KOF release Flux installed on the management cluster against `kof
// render`'s prediction for the installation's charts and values (harness Render): the objects Helm stored for the
// release (those helm-controller applied, less fluxOriginLabels) are the objects the fleet render gives that
// release, each equal field by field (diff.Fields; Secret values only as digests), but for the content of the
// objects that comes from the cluster (fromClusterState), whose presence alone is checked.
func assertReleasesMatchRender(t *testing.T, ctx context.Context, in *harness.Installation) {
	t.Helper()
	f, _, err := in.Render(ctx)
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]*fleet.Service{}
	for _, s := range f.Clusters[0].Services {
		services[s.Namespace+"/"+s.Name] = s
	}
	checked, objects := 0, 0
	for _, r := range in.Releases {
		if !r.Local {
			continue
		}
		id := r.Namespace + "/" + r.Name
		svc := services[id]
		if svc == nil || svc.Objects == nil {
			t.Errorf("release %s: kof render predicts no such release of the management cluster", id)
			continue
		}
		want := map[manifest.Key]*unstructured.Unstructured{}
		for _, o := range svc.Objects.Objects() {
			if o.GetNamespace() == "" && !clusterScoped(t, o) {
				o = o.DeepCopy()
				o.SetNamespace(r.Namespace)
			}
			want[manifest.KeyOf(o)] = o
		}
		got := releaseObjects(t, r.Name, r.Namespace)
		for k, w := range want {
			g, ok := got[k]
			if !ok {
				t.Errorf("release %s: %s is predicted but not installed", id, k)
				continue
			}
			labels := g.GetLabels()
			for _, l := range fluxOriginLabels {
				if labels[l] == "" {
					t.Errorf("release %s: %s lacks helm-controller's label %s", id, k, l)
				}
				delete(labels, l)
			}
			g.SetLabels(labels)
			if fromClusterState(k) {
				continue
			}
			if d := diff.Fields(w.Object, g.Object, k.Group == "" && k.Kind == "Secret"); len(d) > 0 {
				t.Errorf("release %s: %s differs from the prediction: %v", id, k, d)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("release %s: %s is installed but not predicted", id, k)
			}
		}
		checked++
		objects += len(want)
	}
	if checked == 0 {
		t.Error("no KOF release of the management cluster to compare with the prediction")
	}
	t.Logf("%d KOF releases of the management cluster (%d objects) equal kof render's prediction", checked, objects)
}

// removeKeptTemplates deletes the ServiceTemplates and ServiceTemplateChains of the given versions that earlier
// tests of the package left on the shared control plane (kof-mothership keeps them on uninstall,
// `helm.sh/resource-policy: keep`), so that the upgrade starts where every real upgrade from N-1 starts: on a
// cluster that never ran N. Helm adopts a kept object that a later release renders again without updating it (the
// adopted object is its own "original" in Helm's patch), so a chain of N kept from an install of N before N-1 would
// keep its old list of upgrade sources.
func removeKeptTemplates(t *testing.T, ctx context.Context, versions ...string) {
	t.Helper()
	var removed []string
	for _, kind := range []string{"ServiceTemplateChain", "ServiceTemplate"} {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("k0rdent.mirantis.com/v1beta1")
		l.SetKind(kind + "List")
		if err := c().List(ctx, l, client.InNamespace(harness.KCMNamespace)); err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			o := &l.Items[i]
			for _, v := range versions {
				if strings.HasSuffix(o.GetName(), "-"+strings.NewReplacer(".", "-", "+", "-").Replace(v)) {
					if err := c().Delete(ctx, o); client.IgnoreNotFound(err) != nil {
						t.Fatal(err)
					}
					removed = append(removed, kind+" "+o.GetName())
				}
			}
		}
	}
	if len(removed) > 0 {
		t.Logf("removed %d kept objects of versions %v left by earlier tests: %s", len(removed), versions,
			strings.Join(removed, ", "))
	}
}
