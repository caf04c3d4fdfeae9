package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scenarioDir is where the scenario inputs live.
const scenarioDir = "../../tests/scenarios/testdata"

func TestRenderFleetWritesEveryCluster(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := kof(t, "render", "--charts", "../../charts",
		"-f", filepath.Join(scenarioDir, "01-regional-child", "values.yaml"),
		"--clusters", filepath.Join(scenarioDir, "clusters-standard.yaml"), "--out", out)
	if code != exitClean {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitClean, stdout, stderr)
	}
	for _, line := range []string{"CLUSTER", "mgmt ", "regional-1 ", "child-1 ", "child-2 "} {
		if !strings.Contains(stdout, "\n"+line) && !strings.HasPrefix(stdout, line) {
			t.Errorf("summary lacks a line starting %q:\n%s", line, stdout)
		}
	}
	for _, f := range []string{"regional-1/kof-storage/manifest.yaml", "regional-1/kof-storage/values.yaml",
		"regional-1/cert-manager/chart.yaml", "child-1/kof-collectors/manifest.yaml", "mgmt/kof/manifest.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "regional-1", "cert-manager", "manifest.yaml")); err == nil {
		t.Errorf("third-party cert-manager was rendered; want only its reference")
	}
}

func TestRenderFleetBadClusterFailsAlone(t *testing.T) {
	dir := filepath.Join(scenarioDir, "11-annotation-overrides")
	code, stdout, stderr := kof(t, "render", "--charts", "../../charts", "-f", filepath.Join(dir, "values.yaml"),
		"--clusters", filepath.Join(dir, "clusters.yaml"), "--mode", "single-pass")
	if code != exitFindings {
		t.Errorf("exit %d, want %d", code, exitFindings)
	}
	if !strings.Contains(stderr, "1 of 4 clusters failed") {
		t.Errorf("stderr %q does not count the failed cluster", stderr)
	}
	var bad []string
	for _, line := range strings.Split(stdout, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 5 && fields[4] != "0" && fields[4] != "ERRORS" {
			bad = append(bad, fields[0])
		}
	}
	if len(bad) != 1 || bad[0] != "child-bad" {
		t.Errorf("clusters with errors = %v, want [child-bad]\n%s", bad, stdout)
	}
	if !strings.Contains(stdout, "child-bad: service kof-collectors:") ||
		!strings.Contains(stdout, "k0rdent.mirantis.com/kof-collectors-values") {
		t.Errorf("summary does not explain child-bad's error:\n%s", stdout)
	}
}

func TestRenderFleetUsage(t *testing.T) {
	if code, _, stderr := kof(t, "render", "--mode", "triple", "-f", "x.yaml"); code != exitUsage ||
		!strings.Contains(stderr, "double-pass") {
		t.Errorf("bad --mode: exit %d, stderr %q; want %d naming the modes", code, stderr, exitUsage)
	}
	// Regressions: a missing --clusters file was "read lookup fixtures: open nope.yaml", naming no flag; a negative
	// --workers was accepted; a namespace that is no DNS label surfaced as an invalid URL of an environment variable.
	if code, _, stderr := kof(t, "render", "--charts", "../../charts", "--clusters", "nope.yaml"); code != exitFindings ||
		!strings.Contains(stderr, "--clusters nope.yaml: open nope.yaml") {
		t.Errorf("missing --clusters file: exit %d, stderr %q; want %d naming the flag and the file", code, stderr, exitFindings)
	}
	if code, _, stderr := kof(t, "render", "--workers", "-1", "-f", "x.yaml"); code != exitUsage || !strings.Contains(stderr, "--workers -1") {
		t.Errorf("--workers -1: exit %d, stderr %q; want %d naming the flag", code, stderr, exitUsage)
	}
	if code, _, stderr := kof(t, "diff", "--workers", "-2"); code != exitUsage || !strings.Contains(stderr, "--workers -2") {
		t.Errorf("kof diff --workers -2: exit %d, stderr %q; want %d naming the flag", code, stderr, exitUsage)
	}
	if code, _, stderr := kof(t, "render", "--charts", "../../charts", "-n", "Bad NS",
		"-f", "../../tests/scenarios/testdata/01-regional-child/values.yaml"); code != exitFindings ||
		!strings.Contains(stderr, `release namespace "Bad NS" is not a valid namespace name`) {
		t.Errorf("-n 'Bad NS': exit %d, stderr %q; want %d naming the namespace", code, stderr, exitFindings)
	}
	if code, _, stderr := kof(t, "render"); code != exitUsage || !strings.Contains(stderr, "--clusters") {
		t.Errorf("no flags: exit %d, want %d with an error naming --clusters:\n%s", code, exitUsage, stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := kof(t, "render", "--charts", "../../charts", "-f",
		filepath.Join(scenarioDir, "09-m2m-and-m2r-conflict", "values.yaml"),
		"--clusters", filepath.Join(scenarioDir, "clusters-standard.yaml"), "--out", out)
	if code != exitFindings || !strings.Contains(stderr, "storage modes conflict") {
		t.Errorf("conflicting modes: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("conflicting modes wrote %s (stat: %v); want nothing rendered", out, err)
	}
}

func TestRenderFleetWarnsAboutMisspelledKeys(t *testing.T) {
	dir := t.TempDir()
	clusters := filepath.Join(dir, "clusters.yaml")
	data := `apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata:
  name: typo
  namespace: kcm-system
  labels:
    k0rdent.mirantis.com/kof-cluster-role: chlid
  annotations:
    k0rdent.mirantis.com/kof-collector-values: '{}'
spec:
  template: aws-standalone-cp-1-0-0
`
	if err := os.WriteFile(clusters, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kof(t, "render", "--charts", "../../charts",
		"-f", filepath.Join(scenarioDir, "01-regional-child", "values.yaml"), "--clusters", clusters)
	if code != exitClean {
		t.Fatalf("exit %d, want %d: warnings fail nothing\n%s%s", code, exitClean, stdout, stderr)
	}
	for _, want := range []string{
		"warning: ClusterDeployment kcm-system/typo: annotation k0rdent.mirantis.com/kof-collector-values is not a KOF key and is ignored; did you mean k0rdent.mirantis.com/kof-collectors-values?",
		`warning: ClusterDeployment kcm-system/typo: label k0rdent.mirantis.com/kof-cluster-role: value "chlid" is neither "regional" nor "child", so KOF ignores the cluster; did you mean "child"?`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	// --strict makes the same warnings fail the render, saying how many and how to pass.
	code, stdout, stderr = kof(t, "render", "--charts", "../../charts", "--strict",
		"-f", filepath.Join(scenarioDir, "01-regional-child", "values.yaml"), "--clusters", clusters)
	want := "kof: 2 warning(s) and --strict: fix them (each is printed above as `warning: ...` with its fix), or " +
		"drop --strict to let warnings pass\n"
	if code != exitFindings || stderr != want {
		t.Errorf("--strict: exit %d, stderr %q; want exit %d, stderr %q\n%s", code, stderr, exitFindings, want, stdout)
	}
}

// A --namespace-object file that is not one Namespace says what it holds and how to get the right one.
func TestRenderFleetNamespaceObjectNamesWhatItFound(t *testing.T) {
	clusters := filepath.Join(scenarioDir, "clusters-standard.yaml")
	code, _, stderr := kof(t, "render", "--charts", "../../charts", "-f", filepath.Join(scenarioDir,
		"01-regional-child", "values.yaml"), "--clusters", clusters, "--namespace-object", clusters)
	want := "kof: --namespace-object " + clusters + ": want exactly one Namespace object, found 4 object(s): " +
		"ClusterDeployment regional-1, ClusterDeployment child-1, ClusterDeployment child-2, ClusterTemplate " +
		"aws-standalone-cp-1-0-0; give the kof Namespace as `kubectl get namespace kof -o yaml` prints it\n"
	if code != exitFindings || stderr != want {
		t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, exitFindings, want)
	}
}

// A --clusters file without any ClusterDeployment (empty, or objects of other kinds only) renders the management
// cluster alone: a warning says so, and --strict fails on it.
func TestRenderFleetWarnsWithoutClusterDeployments(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want := "warning: --clusters " + empty + ": no ClusterDeployment (apiVersion k0rdent.mirantis.com/v1beta1, kind " +
		"ClusterDeployment) in the files, so only the management cluster is rendered; export them with " +
		"`kubectl get clusterdeployments,clustertemplates -A -o yaml`\n"
	args := []string{"render", "--charts", "../../charts", "-f", filepath.Join(scenarioDir, "01-regional-child",
		"values.yaml"), "--clusters", empty}
	if code, stdout, stderr := kof(t, args...); code != exitClean || !strings.HasSuffix(stdout, want) {
		t.Errorf("exit %d, stdout %q, want exit 0 and it to end with %q\n%s", code, stdout, want, stderr)
	}
	if code, _, stderr := kof(t, append(args, "--strict")...); code != exitFindings ||
		!strings.HasPrefix(stderr, "kof: 1 warning(s) and --strict") {
		t.Errorf("--strict: exit %d, stderr %q; want exit %d", code, stderr, exitFindings)
	}
}

// A values typo that fails the umbrella's schema is named with its did-you-mean fix, with the embedded charts and
// with --charts (regression: only Helm's "additional properties 'toManagmentCluster' not allowed" was printed).
func TestRenderFleetValuesTypoNamesTheFix(t *testing.T) {
	typo := "../../chartlib/values/testdata/14-values-typo.yaml"
	want := "fix the values (kof check values):\n" +
		"kof-child.values.fromManagement.toManagmentCluster: unknown key; did you mean toManagementCluster?"
	for _, args := range [][]string{
		{"render", "-f", typo, "--clusters", filepath.Join(scenarioDir, "clusters-standard.yaml")},
		{"render", "--charts", "../../charts", "-f", typo, "--clusters", filepath.Join(scenarioDir, "clusters-standard.yaml")},
	} {
		code, stdout, stderr := kof(t, args...)
		if code != exitFindings || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q\n%s", args, code, stderr, exitFindings, want, stdout)
		}
	}
}

func TestRenderFleetClustersWithoutKCMObjects(t *testing.T) {
	clusters := filepath.Join(t.TempDir(), "clusters.yaml")
	data := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: kof}\ndata: {a: b}\n"
	if err := os.WriteFile(clusters, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kof(t, "render", "--charts", "../../charts",
		"-f", filepath.Join(scenarioDir, "01-regional-child", "values.yaml"), "--clusters", clusters)
	if code != exitClean || strings.Contains(stderr, "not served") {
		t.Fatalf("exit %d, want %d: lookups of KCM kinds without fixtures answer empty lists\n%s%s",
			code, exitClean, stdout, stderr)
	}
}

// TestRenderFleetEmbeddedCharts renders scenario 01 from an empty folder with the charts built into kof and checks
// that every file equals the render of the repository's charts folder; --charts still overrides the embedded charts.
func TestRenderFleetEmbeddedCharts(t *testing.T) {
	src, err := filepath.Abs(filepath.Join(scenarioDir, "01-regional-child"))
	if err != nil {
		t.Fatal(err)
	}
	chartsDir, err := filepath.Abs("../../charts")
	if err != nil {
		t.Fatal(err)
	}
	clusters := filepath.Join(filepath.Dir(src), "clusters-standard.yaml")
	fromDir := t.TempDir()
	if code, stdout, stderr := kof(t, "render", "--charts", chartsDir, "-f", filepath.Join(src, "values.yaml"),
		"--clusters", clusters, "--out", fromDir); code != exitClean {
		t.Fatalf("render with --charts: exit %d\n%s%s", code, stdout, stderr)
	}
	work := t.TempDir()
	for name, from := range map[string]string{"v.yaml": filepath.Join(src, "values.yaml"), "c.yaml": clusters} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	code, stdout, stderr := kof(t, "render", "-f", "v.yaml", "--clusters", "c.yaml", "--out", "out")
	if code != exitClean {
		t.Fatalf("render with the embedded charts: exit %d\n%s%s", code, stdout, stderr)
	}
	want, got := tree(t, fromDir), tree(t, filepath.Join(work, "out"))
	if len(got) < 20 {
		t.Fatalf("embedded render wrote %d files; want the whole fleet", len(got))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embedded charts render differently from %s (-folder +embedded):\n%s", chartsDir, diff)
	}
	empty := t.TempDir()
	if code, _, stderr := kof(t, "render", "--charts", empty, "-f", "v.yaml", "--clusters", "c.yaml"); code == exitClean ||
		!strings.Contains(stderr, empty) {
		t.Errorf("--charts %s (no charts): exit %d, stderr %q; want a failure naming the folder", empty, code, stderr)
	}
}

// tree returns every file under root by slash-separated relative path.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRenderFleetPrintsCheckFindings: a fleet that violates a generic check (kof-mothership's Gateway names a
// GatewayClass nothing creates) exits 1 and prints the finding on the management cluster's line, with the check,
// the service, the object and the fix.
func TestRenderFleetPrintsCheckFindings(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	data := "kof-mothership:\n  values:\n    gateway:\n      enabled: true\n      createClass: false\n"
	if err := os.WriteFile(values, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kof(t, "render", "--charts", "../../charts",
		"-f", filepath.Join(scenarioDir, "01-regional-child", "values.yaml"), "-f", values,
		"--clusters", filepath.Join(scenarioDir, "clusters-standard.yaml"))
	if code != exitFindings {
		t.Errorf("exit %d, want %d\n%s%s", code, exitFindings, stdout, stderr)
	}
	want := "mgmt: check installable: service kof-mothership: Gateway.gateway.networking.k8s.io kof/kof-gateway: " +
		"spec.gatewayClassName names GatewayClass envoy-gateway, which nothing creates on this cluster; fix: create GatewayClass envoy-gateway"
	if !strings.Contains(stdout, want) {
		t.Errorf("summary lacks the finding %q:\n%s", want, stdout)
	}
	if !strings.Contains(stderr, "1 of 4 clusters failed") {
		t.Errorf("stderr %q does not count the failed cluster", stderr)
	}
}
