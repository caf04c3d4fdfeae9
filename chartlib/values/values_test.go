package values

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/schema"
)

// charts copies testdata/charts into a temporary directory and generates each chart's values.schema.json there.
func charts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("testdata/charts")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src := filepath.Join("testdata/charts", e.Name())
		dst := filepath.Join(dir, e.Name())
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(src, "values.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "values.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := schema.GenerateChart(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "values.schema.json"), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheckReportsEveryProblemWithPath(t *testing.T) {
	c := &Checker{ChartsDir: charts(t), Handoffs: map[string]map[string]string{
		"top":    {"*.values": "*"},
		"comp-a": {"nested.b": "comp-b"},
	}}
	got, err := c.CheckFiles("top", []string{"testdata/user.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{"comp-a.values.nested.b.levle", "unknown key; did you mean level?"},
		// The umbrella's own schema types comp-a.values.server with port only, so helm install rejects host too.
		{"comp-a.values.server.host", "unknown key; did you mean port?"},
		{"comp-a.values.server.host", "wrong type: got integer, want string"},
		{"comp-a.values.server.prot", "unknown key; did you mean port?"},
		{"comp-z", "unknown key; did you mean comp-a?"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestCheckCleanValues(t *testing.T) {
	c := &Checker{ChartsDir: charts(t), Handoffs: map[string]map[string]string{"top": {"*.values": "*"}}}
	got, err := c.CheckFiles("top", []string{"testdata/charts/top/values.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("defaults of top: %v", got)
	}
	if _, err := c.Check("nochart", map[string]any{}); err == nil {
		t.Error("missing chart schema: no error")
	}
}

func TestConsistency(t *testing.T) {
	dir := charts(t)
	got, err := Consistency(dir, "top", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("top is consistent, got %v", got)
	}
	got, err = Consistency(dir, "bad", map[string]string{"comp-a.values.thirdParty": "third-party chart values"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
	}
	want := []string{"comp-a.values.missing", "comp-a.values.server.port", "comp-a.values.tags"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s\n%v", diff, got)
	}
	got, err = Consistency(dir, "bad", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[3].Path != "comp-a.values.thirdParty.free" {
		t.Errorf("without allow-list: %v", got)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"toManagementCluster", "toRegionalCluster", "collectors"}
	for key, want := range map[string]string{
		"toManagmentCluster": "toManagementCluster",
		"toregionalcluster":  "toRegionalCluster",
		"colectors":          "collectors",
		"somethingElse":      "",
		"":                   "",
	} {
		if got := Suggest(key, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
	// Another chart's name for the same field: the known key it starts with (regression: replicaCount gave only the
	// list of known keys); a short key such as image is no stem of imagePullSecrets.
	known = []string{"image", "replicas", "storageClass", "resources"}
	for key, want := range map[string]string{
		"replicaCount":     "replicas",
		"storageClassName": "storageClass",
		"imagePullSecrets": "",
		"replicas":         "replicas",
	} {
		if got := Suggest(key, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestScenarioTypo runs the user-guide typo scenario against the repository's charts once they define kof-child.
func TestScenarioTypo(t *testing.T) {
	if _, err := os.Stat("../../charts/kof-child/values.schema.json"); err != nil {
		t.Fatalf("charts/kof-child has no schema: %v", err)
	}
	got, err := NewChecker("../../charts").CheckFiles("kof", []string{"testdata/14-values-typo.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{{"kof-child.values.fromManagement.toManagmentCluster",
		"unknown key; did you mean toManagementCluster?"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// A rule finding (a pattern here) names what the field is for, from the schema's description, so a user reads the
// fix and not only the regular expression: an e-mail address in tenantProxy.adminGroups (docs/tenancy.md).
func TestRuleFindingCarriesFieldDescription(t *testing.T) {
	got, err := NewChecker("../../charts").CheckFiles("kof", []string{"testdata/tenant-admin-email.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{{"kof-mothership.values.tenantProxy.adminGroups.0",
		"Does not match pattern '^[^@]*$' (Groups whose members see every tenant. Groups only, never e-mail addresses.)"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestUmbrellaMatchesComponents(t *testing.T) {
	got, err := Consistency("../../charts", "kof", PassThroughAllowList())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		t.Errorf("%s", f)
	}
}

// TestNestedHandoffsReachComponentCharts checks a typo two charts deep: umbrella → kof-child → kof-storage.
func TestNestedHandoffsReachComponentCharts(t *testing.T) {
	vals := map[string]any{"kof-child": map[string]any{"values": map[string]any{
		"storage":    map[string]any{"victoriametricz": map[string]any{}},
		"collectors": map[string]any{"not-a-collectors-key": true},
	}}}
	got, err := NewChecker("../../charts").Check("kof", vals)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"kof-child.values.storage.victoriametricz":         false,
		"kof-child.values.collectors.not-a-collectors-key": false,
	}
	for _, f := range got {
		if _, ok := want[f.Path]; ok {
			want[f.Path] = true
		}
	}
	for path, found := range want {
		if !found {
			t.Errorf("%s not reported; findings: %v", path, got)
		}
	}
}

// A key of a component chart given where the umbrella does not take it (at the top, or beside `values`) names the
// component values path it belongs under; a key a component hands on (kof-child's `storage`) is reported once, with
// the path below the handoff.
func TestUnknownKeyNamesTheComponentItBelongsTo(t *testing.T) {
	vals := map[string]any{
		"grafana":        map[string]any{"enabled": true},
		"kof-mothership": map[string]any{"promxy": map[string]any{}},
		"kof-child":      map[string]any{"values": map[string]any{"victoriametrics": map[string]any{}}},
		"kof-collectors": map[string]any{"values": map[string]any{"kof": map[string]any{"credentialz": 1}}},
	}
	got, err := NewChecker("../../charts").Check("kof", vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{"grafana", "unknown key here; it is a key of charts kof-dashboards, kof-mothership, kof-regional, " +
			"kof-storage: set it under kof-dashboards.values.grafana or kof-mothership.values.grafana or " +
			"kof-regional.values.grafana or kof-storage.values.grafana"},
		{"kof-child.values.victoriametrics", "unknown key here; it is a key of chart kof-storage: set it under " +
			"kof-child.values.storage.victoriametrics"},
		{"kof-collectors.values.kof.credentialz", "unknown key; did you mean credentials?"},
		{"kof-mothership.promxy", "unknown key here; it is a key of chart kof-mothership: set it under " +
			"kof-mothership.values.promxy"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// A credential given as a value is not a typo: KOF takes secrets only by reference, so the finding names the key
// that references a Secret, with its description.
func TestSecretValueNamesTheSecretReference(t *testing.T) {
	vals := map[string]any{"s3": map[string]any{"bucket": "b", "secretAccessKey": "x"},
		"signing": map[string]any{"existingSecret": "k", "privateKey": "pem"}}
	got, err := NewChecker("../../charts").Check("audit-logs-exporter", vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{"s3.secretAccessKey", "unknown key: KOF takes secrets only by reference, never as values " +
			"(docs/security.md); put the value in a Secret and name it in s3.existingSecret (Secret with keys " +
			"`S3_ACCESS_KEY` and `S3_SECRET_KEY`; \"\" = the default AWS credential chain (IRSA).)"},
		{"signing.privateKey", "unknown key: KOF takes secrets only by reference, never as values " +
			"(docs/security.md); put the value in a Secret and name it in signing.existingSecret (Secret holding " +
			"the signing key (required), mounted as a file: an Ed25519 private key in PEM (PKCS #8, `openssl " +
			"genpkey -algorithm ed25519`) or, for hmac-sha256, at least 32 random bytes.)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for key, want := range map[string]bool{"secretAccessKey": true, "password": true, "apiToken": true,
		"existingSecret": false, "adminSecretName": false, "secretRef": false, "bucket": false} {
		if got := looksSecret(key); got != want {
			t.Errorf("looksSecret(%q) = %v, want %v", key, got, want)
		}
	}
}

// A switch given as the object itself (`regionless: true`) names the object's enabled key.
func TestBooleanForAnObjectNamesItsSwitch(t *testing.T) {
	got, err := NewChecker("../../charts").Check("kof", map[string]any{"regionless": true,
		"kof-child": map[string]any{"values": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{"kof-child.values", "wrong type: got array, want object"},
		{"regionless", "wrong type: got boolean, want object; did you mean regionless.enabled: true?"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
