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
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/diff"
	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/internal/harness"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/release"
	"kof.dev/kof/release/image"
)

// upgradeFromVersion is the version release N-1 is published as: below e2eVersion (release N, this tree) in semver
// order, so N is an upgrade of N-1 and N-1 a downgrade of N.
const upgradeFromVersion = "2.0.1-e2e.0"

// upgradeBaseline is the commit release N-1 is built from while the history of charts/kof/Chart.yaml holds no
// earlier chart version (every commit so far is 2.0.0, set when the chart was added): the first commit whose
// ServiceTemplateChains list only lower versions as upgrade sources, so that a rollback to it is a fair test.
// previousCommit replaces it with the parent of the commit that sets a new version once one exists.
const upgradeBaseline = "0c43c11fa9ce5ed693f5212e3d4b88775abdfb48"

// releasePlatforms is the one platform the upgrade test builds its releases for (the control plane's).
const releasePlatforms = "linux/amd64"

// previousCommit returns the commit release N-1 is built from and how it was found: the parent of the newest
// commit that changed the `version:` of charts/kof/Chart.yaml to this tree's version, when that parent's version is
// another one; otherwise upgradeBaseline.
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

// publish runs `make release` in root (this tree or a worktree) for releasePlatforms and returns the manifest.
func publish(t *testing.T, root, registry, version string) *release.Manifest {
	t.Helper()
	out := filepath.Join(t.TempDir(), "release-"+version)
	start := time.Now()
	cmd := exec.Command("make", "--no-print-directory", "release", "REGISTRY="+registry, "VERSION="+version,
		"PLAIN_HTTP=true", "OUT="+out, "PLATFORMS="+releasePlatforms)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release VERSION=%s in %s: %v\n%s", version, root, err, b)
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

// operatorState returns every object of harness.OperatorOutputKinds labelled managed-by kof-operator, by the key kof diff prints
// (manifest.Key: `Kind[.group] namespace/name`).
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
func checkDiff(t *testing.T, r *diff.Report, text string, code int, from, to *release.Manifest) {
	t.Helper()
	t.Logf("kof diff %s → %s (exit %d):\n%s", from.Version, to.Version, code, text)
	if code != diff.ExitChanges {
		t.Errorf("kof diff %s → %s exits %d, want %d (changes, none that hurts)", from.Version, to.Version, code,
			diff.ExitChanges)
	}
	for _, h := range r.Hurts() {
		t.Errorf("kof diff %s → %s: a change hurts: %s %s %s: %s", from.Version, to.Version, h.Cluster, h.Release,
			h.Object, h.Hurt)
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
}

// checkRollout checks an upgrade or rollback from the state before: every credential Secret and VMUser and every
// other operator object is the same object (same UID; Secrets with the same data), the operator wrote only the
// objects whose prediction changed (changed, per the diff report) and then nothing, and the operator objects equal
// the prediction.
func checkRollout(t *testing.T, ctx context.Context, in *harness.Installation, before map[string]liveObject,
	r *diff.Report) {
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
	for _, cred := range []string{"Secret ", "VMUser "} {
		n := 0
		for id := range before {
			if strings.HasPrefix(id, cred) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no %sbefore the rollout: the credential checks would prove nothing", cred)
		}
	}
	time.Sleep(5 * time.Second) // then nothing: no write in the next seconds
	for id, a := range after {
		if now := operatorState(t, ctx)[id]; now.resourceVersion != a.resourceVersion {
			t.Errorf("%s is still being written after the rollout converged (resourceVersion %s → %s)", id,
				a.resourceVersion, now.resourceVersion)
		}
	}
	assertOfflineMatchesLive(t, in)
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
// Wall time: about 4 minutes on two busy cores (two `make release` for one platform, the earlier commit's a cold
// compile; four Flux rollouts on the package's shared control plane); it shares the control plane with the other
// e2e tests and needs its own registry and releases.
func TestUpgradeFromPreviousReleaseAndRollback(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	registry := startRegistry(t) + "/kof"
	commit, how := previousCommit(t)
	t.Logf("release N-1 = commit %s (%s) as %s; release N = this tree as %s", commit, how, upgradeFromVersion,
		e2eVersion)
	prev := publish(t, worktree(t, commit), registry, upgradeFromVersion)
	cur := publish(t, shared.session.Root, registry, e2eVersion)
	prevSrc := harness.Source{ChartsDir: pullCharts(t, prev), Umbrella: helmInstallOCI(t, prev.Chart(release.UmbrellaChart)),
		OperatorBinary: releasedOperator(t, ctx, prev)}
	curSrc := harness.Source{ChartsDir: pullCharts(t, cur), Umbrella: helmInstallOCI(t, cur.Chart(release.UmbrellaChart)),
		OperatorBinary: releasedOperator(t, ctx, cur)}
	t.Logf("releases built and pulled: %.1fs", time.Since(start).Seconds())

	sc, err := harness.LoadScenario(shared.scenariosDir, "01-regional-child")
	if err != nil {
		t.Fatal(err)
	}
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
	checkDiff(t, r, text, code, prev, cur)
	before := operatorState(t, ctx)
	applyCRDs(t, ctx, curSrc.ChartsDir)
	rel, err := in.UpgradeFrom(ctx, extra, curSrc)
	if err != nil {
		t.Fatalf("upgrade to %s: %v", e2eVersion, err)
	}
	if rel.Chart.Metadata.Version != e2eVersion {
		t.Errorf("umbrella %s after the upgrade, want %s", rel.Chart.Metadata.Version, e2eVersion)
	}
	waitOperator(t, in)
	checkRollout(t, ctx, in, before, r)
	checkChains(t, ctx, upgradeFromVersion, e2eVersion, true)
	t.Logf("upgrade %s → %s checked: %.1fs", upgradeFromVersion, e2eVersion, time.Since(start).Seconds())

	// Rollback N → N-1 (CRDs stay: docs/upgrade.md).
	r, text, code = kofDiff(t, in, cur, prev)
	checkDiff(t, r, text, code, cur, prev)
	before = operatorState(t, ctx)
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
	checkRollout(t, ctx, in, before, r)
	checkChains(t, ctx, e2eVersion, upgradeFromVersion, false)
	t.Logf("rollback %s → %s checked: %.1fs", e2eVersion, upgradeFromVersion, time.Since(start).Seconds())

	deleteClusters(t, in)
	uninstallLeavesCRDsAndNoOperatorObjects(t, in)
	t.Logf("upgrade and rollback e2e: %.1fs", time.Since(start).Seconds())
}
