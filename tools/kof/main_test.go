package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kof runs the CLI and returns its exit code, stdout and stderr.
func kof(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, streams{out: &out, err: &errOut})
	return code, out.String(), errOut.String()
}

func TestCheckValuesScenarioTypo(t *testing.T) {
	code, out, _ := kof(t, "check", "values", "--charts", "../../charts",
		"-f", "../../chartlib/values/testdata/14-values-typo.yaml")
	if code != exitFindings {
		t.Errorf("exit code %d, want %d", code, exitFindings)
	}
	want := "kof-child.values.fromManagement.toManagmentCluster: unknown key; did you mean toManagementCluster?\n"
	if out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
}

// From a folder without charts/, `kof check values` and `kof check names` read the charts built into kof
// (regression: they failed with "open charts/kof/values.schema.json: no such file or directory").
func TestChecksUseEmbeddedChartsOutsideACheckout(t *testing.T) {
	typo, err := filepath.Abs("../../chartlib/values/testdata/14-values-typo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, out, errOut := kof(t, "check", "values", "-f", typo)
	want := "kof-child.values.fromManagement.toManagmentCluster: unknown key; did you mean toManagementCluster?\n"
	if code != exitFindings || out != want {
		t.Errorf("check values: exit %d, stdout %q, stderr %q; want exit %d, stdout %q", code, out, errOut,
			exitFindings, want)
	}
	if code, out, errOut := kof(t, "check", "values"); code != exitClean || out != "ok: 1 files checked\n" {
		t.Errorf("check values of the defaults: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := kof(t, "check", "names"); code != exitClean || !strings.Contains(errOut, ", 0 mismatches") {
		t.Errorf("check names: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := kof(t, "check", "values", "--charts", "charts"); code == exitClean ||
		!strings.Contains(errOut, "--charts charts: no chart") {
		t.Errorf("check values with an explicit missing --charts: exit %d, stderr %q; want a failure naming it", code,
			errOut)
	}
}

func TestCheckValuesClean(t *testing.T) {
	if code, out, errOut := kof(t, "check", "values", "--charts", "../../charts"); code != exitClean ||
		out != "ok: 1 files checked\n" {
		t.Errorf("umbrella consistency and defaults: exit %d, stdout %q\n%s", code, out, errOut)
	}
	if code, out, _ := kof(t, "check", "values", "--charts", "../../charts", "-f", "../../charts/kof/values.yaml"); code != exitClean {
		t.Errorf("umbrella defaults as user values: exit %d\n%s", code, out)
	}
}

// Regression: an unknown --chart failed on a missing values.schema.json under a temporary folder, naming neither the
// flag nor the charts there are.
func TestCheckValuesUnknownChart(t *testing.T) {
	code, _, errOut := kof(t, "check", "values", "--charts", "../../charts", "--chart", "kof-nope")
	if code != exitUsage || !strings.Contains(errOut, "--chart kof-nope: no such chart in ../../charts; known charts: ") ||
		!strings.Contains(errOut, "kof-child") || strings.Contains(errOut, "kof-charts-") {
		t.Errorf("unknown --chart: exit %d, stderr %q; want %d naming the flag and listing the charts", code, errOut, exitUsage)
	}
}

func TestCheckNames(t *testing.T) {
	code, out, errOut := kof(t, "check", "names", "--charts", "../../chartlib/parity/testdata")
	if code != exitFindings {
		t.Errorf("exit code %d, want %d (testdata holds a wrong helper)", code, exitFindings)
	}
	if !strings.Contains(out, "bad: kof.names.childVMUserBase") || strings.Contains(out, "good:") {
		t.Errorf("stdout lacks the bad chart's mismatches or blames the good one:\n%s", out)
	}
	if !strings.Contains(errOut, "mismatches; charts: ") {
		t.Errorf("stderr summary missing: %q", errOut)
	}
	if code, _, errOut := kof(t, "check", "names", "--charts", t.TempDir()); code != exitFindings ||
		!strings.Contains(errOut, "no chart") {
		t.Errorf("no charts: exit %d, stderr %q", code, errOut)
	}
}

func TestRenderChart(t *testing.T) {
	fixtures := filepath.Join(t.TempDir(), "fixtures.yaml")
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: kof\ndata:\n  username: YWRtaW4=\n"
	if err := os.WriteFile(fixtures, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := kof(t, "render", "chart", "../../chartlib/render/testdata/basic", "-n", "kof",
		"--release", "r", "--set", "replicas=3", "--lookup", fixtures, "--validate")
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# Source: basic/templates/configmap.yaml", "name: r-config", "replicas: 3",
		"username: admin"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = kof(t, "render", "chart", "../../chartlib/render/testdata/strict", "--strict")
	if code != exitFindings || !strings.Contains(errOut, "strict/templates/configmap.yaml:7") {
		t.Errorf("strict: exit %d, stderr %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bogus"},
		{"render", "chart"},
		{"render", "chart", "a", "b"},
		{"check", "values", "--nope"},
	} {
		if code, _, _ := kof(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestSchemaGenerateVerify(t *testing.T) {
	charts := t.TempDir()
	dir := filepath.Join(charts, "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n", "values.yaml": "# -- Port.\nport: 80\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	schemas := filepath.Join(t.TempDir(), "schemas")
	flags := []string{"--charts", charts, "--schemas", schemas}
	if code, out, _ := kof(t, append([]string{"schema", "verify"}, flags...)...); code != exitFindings ||
		strings.Count(out, "\n") != 3 {
		t.Errorf("verify before generate: exit %d\n%s", code, out)
	}
	if code, _, errOut := kof(t, append([]string{"schema", "generate"}, flags...)...); code != exitClean {
		t.Errorf("generate: exit %d %s", code, errOut)
	}
	if code, out, _ := kof(t, append([]string{"schema", "verify"}, flags...)...); code != exitClean {
		t.Errorf("verify after generate: exit %d\n%s", code, out)
	}
}

// TestCheckValuesReportsStorageModeConflict checks that a values file whose keys and types are right but whose
// storage modes conflict (scenario 09: M2M and M2R together) is a finding naming both keys, not "ok".
func TestCheckValuesReportsStorageModeConflict(t *testing.T) {
	code, out, _ := kof(t, "check", "values", "--charts", "../../charts",
		"-f", "../../tests/scenarios/testdata/09-m2m-and-m2r-conflict/values.yaml")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFindings, out)
	}
	for _, want := range []string{
		"kof-child.values.fromManagement.toManagementCluster.enabled",
		"kof-child.values.fromManagement.toRegionalCluster.name",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "execution error") {
		t.Errorf("output keeps Helm's template position:\n%s", out)
	}
}

// A chart rule whose message already starts with the chart's name names the chart once (regression:
// "cold-storage-exporter: cold-storage-exporter: sources: ...").
func TestCheckValuesNamesChartOnce(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cold.yaml")
	if err := os.WriteFile(f, []byte("sources: metrics,logz\ns3: {bucket: b, existingSecret: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := kof(t, "check", "values", "--charts", "../../charts", "--chart", "cold-storage-exporter", "-f", f)
	want := `cold-storage-exporter: sources: unknown source "logz"; use a comma-separated list of metrics, logs, traces`
	if code != exitFindings || !strings.Contains(out, want) || strings.Contains(out, "cold-storage-exporter: cold-storage-exporter") {
		t.Errorf("exit %d, output:\n%s\nwant exit %d and %q once", code, out, exitFindings, want)
	}
}

func TestUIRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:8080", ":8080", "example.com:80", "nonsense"} {
		code, _, errOut := kof(t, "ui", "--addr", addr)
		if code != exitUsage || !strings.Contains(errOut, "--addr") {
			t.Errorf("kof ui --addr %s: exit %d, stderr %q; want a usage error naming --addr", addr, code, errOut)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.2:1"} {
		if _, err := loopbackHosts(addr); err != nil {
			t.Errorf("loopbackHosts(%s): %v", addr, err)
		}
	}
}

func TestDoctorUsage(t *testing.T) {
	code, _, errOut := kof(t, "doctor", "--output", "xml")
	if code != exitUsage || !strings.Contains(errOut, "--output") {
		t.Errorf("kof doctor --output xml: exit %d, stderr %q; want a usage error naming --output", code, errOut)
	}
	// No kubeconfig anywhere: the error names the flag to pass (regression: client-go's "no configuration has been
	// provided, try setting KUBERNETES_MASTER environment variable").
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	code, _, errOut = kof(t, "doctor")
	if want := "kof: no kubeconfig: none at --kubeconfig, $KUBECONFIG or ~/.kube/config; pass --kubeconfig FILE"; code != exitFindings ||
		!strings.HasPrefix(errOut, want) || strings.Contains(errOut, "KUBERNETES_MASTER") {
		t.Errorf("kof doctor without kubeconfig: exit %d, stderr %q; want exit %d and %q", code, errOut, exitFindings, want)
	}
	// A $KUBECONFIG naming a missing file (client-go skips it silently) is named in the error.
	t.Setenv("KUBECONFIG", "/nonexistent/kind.conf")
	code, _, errOut = kof(t, "doctor")
	if want := `($KUBECONFIG "/nonexistent/kind.conf": no such file; `; code != exitFindings || !strings.Contains(errOut, want) {
		t.Errorf("kof doctor with a missing $KUBECONFIG: exit %d, stderr %q; want exit %d and %q", code, errOut,
			exitFindings, want)
	}
	code, _, errOut = kof(t, "doctor", "a", "b")
	if code != exitUsage {
		t.Errorf("kof doctor a b: exit %d (%s), want %d", code, errOut, exitUsage)
	}
}

// kof support-bundle: bad flags are usage errors naming the flag; no kubeconfig is a failure naming the fix and
// writes no archive.
func TestSupportBundleUsage(t *testing.T) {
	for _, args := range [][]string{{"--log-lines", "0"}, {"--log-since", "-1h"}} {
		code, _, errOut := kof(t, append([]string{"support-bundle"}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, args[0]) {
			t.Errorf("kof support-bundle %v: exit %d, stderr %q; want a usage error naming %s", args, code, errOut, args[0])
		}
	}
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", dir)
	out := filepath.Join(dir, "b.tar.gz")
	code, _, errOut := kof(t, "support-bundle", "-o", out)
	if code != exitFindings || !strings.Contains(errOut, "no kubeconfig") {
		t.Errorf("kof support-bundle without kubeconfig: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("kof support-bundle without kubeconfig left %s (%v)", out, err)
	}
}

// `kof demo --keep` prints how to reach the kept control plane and returns when the context ends (Ctrl-C), so the
// demo then stops everything.
func TestHoldDemoPrintsKubeconfigAndReturns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- holdDemo(ctx, streams{out: &out, err: &out}, "/tmp/kof-demo-1/kubeconfig", "/src/kof/bin/kof")
	}()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("holdDemo: %v", err)
	}
	// Regression: it printed a bare `kof doctor`, which is not on PATH after `make demo` (it builds bin/kof).
	for _, want := range []string{"export KUBECONFIG=/tmp/kof-demo-1/kubeconfig\n", "  /src/kof/bin/kof doctor ",
		"/src/kof/bin/kof ui", "Ctrl-C stops it."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code, out, _ := kof(t, "demo", "--help"); code != exitClean || !strings.Contains(out, "--keep") {
		t.Errorf("kof demo --help: exit %d, no --keep flag:\n%s", code, out)
	}
}

// TestCheckValuesKnowsTheGuideParts checks that `kof check values` accepts the values of the Istio namespace
// bootstrap (kof-mothership istio.memberNamespace), external-dns and the regional Grafana (kof-regional
// external-dns and grafana, kof-storage grafana) through the umbrella, and names each misspelt one with the fix.
func TestCheckValuesKnowsTheGuideParts(t *testing.T) {
	write := func(text string) string {
		p := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write(`kof-mothership:
  values:
    istio:
      memberNamespace: kof
kof-regional:
  values:
    external-dns:
      enabled: true
      namespace: dns
      provider: cloudflare
      credentialsSecretName: cloudflare-token
      values:
        policy: sync
    grafana:
      enabled: true
      namespace: grafana-operator
kof-storage:
  values:
    grafana:
      enabled: true
      folder: Region
      disabledDashboards: [cost]
`)
	if code, out, errOut := kof(t, "check", "values", "--charts", "../../charts", "-f", good); code != exitClean ||
		out != "ok: 1 files checked\n" {
		t.Errorf("the guide's values: exit %d, stdout %q, stderr %q; want ok", code, out, errOut)
	}
	typos := write(`kof-mothership:
  values:
    istio:
      memberNamespaces: kof
kof-regional:
  values:
    external-dns:
      credentialSecretName: cloudflare-token
kof-storage:
  values:
    grafana:
      disabledDashboard: [cost]
`)
	code, out, _ := kof(t, "check", "values", "--charts", "../../charts", "-f", typos)
	if code != exitFindings {
		t.Errorf("misspelt values: exit %d, want %d:\n%s", code, exitFindings, out)
	}
	for _, want := range []string{
		"kof-mothership.values.istio.memberNamespaces: unknown key; did you mean memberNamespace?",
		"kof-regional.values.external-dns.credentialSecretName: unknown key; did you mean credentialsSecretName?",
		"kof-storage.values.grafana.disabledDashboard: unknown key; did you mean disabledDashboards?",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// `kof check values` prints warnings (a key given twice in one file, values of a third-party component no schema
// checks) and passes; --strict fails on them with exit 1.
func TestCheckValuesStrictFailsOnWarnings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "values.yaml")
	data := "kof-mothership:\n  values: {}\nvictoria-metrics-operator:\n  values:\n    operator: {}\n" +
		"kof-mothership:\n  enabled: true\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "warning: kof-mothership: given twice in " + file + " (lines 1 and 6): the later one wins and the " +
		"earlier is ignored; keep one\n" +
		"warning: victoria-metrics-operator.values: not checked: victoria-metrics-operator is a third-party chart " +
		"KOF does not hold, so no schema checks these values; compare them with that chart's own values\n"
	code, out, errOut := kof(t, "check", "values", "--charts", "../../charts", "-f", file)
	if code != exitClean || out != want+"ok: 1 files checked (2 warning(s))\n" {
		t.Errorf("without --strict: exit %d, stdout %q, stderr %q; want exit 0, stdout %q", code, out, errOut,
			want+"ok: 1 files checked (2 warning(s))\n")
	}
	code, out, errOut = kof(t, "check", "values", "--charts", "../../charts", "--strict", "-f", file)
	wantErr := "kof: 2 warning(s) and --strict: fix them (each is printed above as `warning: ...` with its fix), " +
		"or drop --strict to let warnings pass\n"
	if code != exitFindings || out != want || errOut != wantErr {
		t.Errorf("--strict: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q", code, out, errOut,
			exitFindings, want, wantErr)
	}
}

// `kof render chart` with a values typo names the fix as `kof render` does (regression: only Helm's "additional
// properties 'vmclustr' not allowed"); a chart name instead of its folder says what to give.
func TestRenderChartNamesTheFix(t *testing.T) {
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte("victoriametrics:\n  vmclustr: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := kof(t, "render", "chart", "../../charts/kof-storage", "-f", file)
	want := "fix the values (kof check values):\nvictoriametrics.vmclustr: unknown key; did you mean vmcluster?\n"
	if code != exitFindings || !strings.HasSuffix(errOut, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and it to end with %q", code, errOut, exitFindings, want)
	}
	t.Chdir(t.TempDir())
	code, _, errOut = kof(t, "render", "chart", "kof-storage")
	want = "kof: chart folder kof-storage: stat kof-storage: no such file or directory; give the folder of a chart, " +
		"e.g. charts/kof-storage in a checkout (charts built into kof: "
	if code != exitFindings || !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, " kof-storage)") {
		t.Errorf("exit %d, stderr %q; want exit %d and %q...", code, errOut, exitFindings, want)
	}
}

// Regression: kof doctor ended with "23 finding(s)" under its summary "24 findings: 23 errors, 1 warnings"; the line
// counts the errors, which set the exit status, and says so.
func TestFindingsErrorNamesWhatItCounts(t *testing.T) {
	if got := (findingsError{n: 23, severity: "error"}).Error(); got != "23 error finding(s)" {
		t.Errorf("doctor's count = %q, want %q", got, "23 error finding(s)")
	}
	if got := (findingsError{n: 2}).Error(); got != "2 finding(s)" {
		t.Errorf("count of every finding = %q, want %q", got, "2 finding(s)")
	}
}
