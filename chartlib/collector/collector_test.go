package collector

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// chartsDir is the repository's charts folder.
var chartsDir = filepath.Join("..", "..", "charts")

// validator is the Validator of the repository's bin/otelcol (built by `make tools`).
var validator = sync.OnceValues(func() (*Validator, error) {
	return NewValidator(context.Background(), filepath.Join("..", "..", "bin", "otelcol"))
})

func mustValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := validator()
	if err != nil {
		t.Fatalf("the KOF collector distribution: %v", err)
	}
	return v
}

func parse(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOnNodeMovesMountedPathsAndMakesNamedFiles(t *testing.T) {
	root := t.TempDir()
	body := parse(t, `receivers:
  filelog: {include: [/var/log/pods/*/*/*.log, /elsewhere/x.log]}
  prometheus: {config: {scrape_configs: [{tls_config: {ca_file: "/hostfs/${env:PKI_PATH}/ca.crt"}}]}}`)
	got, err := OnNode(body, []string{"/hostfs", "/var/log/pods"}, map[string]string{"PKI_PATH": "var/lib/k0s"}, root)
	if err != nil {
		t.Fatal(err)
	}
	inc := got["receivers"].(map[string]any)["filelog"].(map[string]any)["include"].([]any)
	if inc[0] != root+"/var/log/pods/*/*/*.log" || inc[1] != "/elsewhere/x.log" {
		t.Errorf("include = %v", inc)
	}
	if _, err := os.Stat(filepath.Join(root, "hostfs", "var", "lib", "k0s", "ca.crt")); err != nil {
		t.Errorf("the named file was not made: %v", err)
	}
	if body["receivers"].(map[string]any)["filelog"].(map[string]any)["include"].([]any)[0] != "/var/log/pods/*/*/*.log" {
		t.Errorf("OnNode modified its input")
	}
}

func TestUsedCollectsTypesPerKind(t *testing.T) {
	u, err := Used([]Config{
		{Source: "a", Body: parse(t, "receivers: {otlp: {}, filelog/audit: {}}\nexporters: {otlphttp/logs: {}, otlphttp/traces: {}}")},
		{Source: "b", Body: parse(t, "receivers: {filelog: {}}\nprocessors: {batch: {}}\nservice: {}")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Receivers: {"filelog", "otlp"}, Exporters: {"otlphttp"}, Processors: {"batch"}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("Used (-want +got):\n%s", diff)
	}
	if u.Count() != 4 {
		t.Errorf("Count = %d, want 4", u.Count())
	}
	if _, err := Used([]Config{{Source: "bad", Body: parse(t, "receivers: [otlp]")}}); err == nil ||
		!strings.Contains(err.Error(), "bad: receivers is a []interface {}") {
		t.Errorf("a list section: err = %v, want one naming the config and the section", err)
	}
}

func TestResolveNamesEveryTypeWithoutModule(t *testing.T) {
	_, err := Resolve(Usage{Receivers: {"otlp", "nosuch"}, Exporters: {"alsonot"}})
	if err == nil || !strings.Contains(err.Error(), "[receivers/nosuch exporters/alsonot]") {
		t.Fatalf("err = %v, want both unknown types named", err)
	}
}

func TestManifestListsServedModulesAndNamesTheOthers(t *testing.T) {
	mods, err := Resolve(Usage{Receivers: {"otlp"}, Exporters: {"awscloudwatchlogs", "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Manifest("0.145.0", mods)
	if err != nil {
		t.Fatal(err)
	}
	text := string(got)
	for _, want := range []string{
		"#   exporters/awscloudwatchlogs: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/awscloudwatchlogsexporter v0.145.0\n",
		"  version: 0.145.0\n",
		"receivers:\n  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v0.145.0\n",
		"exporters:\n  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v0.145.0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("manifest lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/awscloudwatchlogsexporter") {
		t.Errorf("manifest builds a module that is not served:\n%s", text)
	}
	if _, err := Manifest("latest", mods); err == nil {
		t.Errorf("release latest: no error")
	}
}

// TestCommittedManifestMatchesCharts: ci/otelcol/manifest.yaml is what the charts need now (make verify also
// regenerates it), and its release is the collector image's.
func TestCommittedManifestMatchesCharts(t *testing.T) {
	got, err := ChartManifest(context.Background(), chartsDir)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "ci", "otelcol", "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(committed), string(got)); diff != "" {
		t.Errorf("ci/otelcol/manifest.yaml is stale; run make generate (-committed +charts):\n%s", diff)
	}
}

func TestReleaseRejectsMixedOrUntaggedImages(t *testing.T) {
	cases, err := RenderChartCases(context.Background(), chartsDir)
	if err != nil {
		t.Fatal(err)
	}
	objs := cases[0].Objects
	if _, err := Release(objs); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for i, o := range objs {
		if o.GetKind() != CollectorKind {
			continue
		}
		c := o.DeepCopy()
		if err := setImage(c.Object, "ghcr.io/x/y:0.1.0"); err != nil {
			t.Fatal(err)
		}
		bad := append(append(objs[:i:i], c), objs[i+1:]...)
		if _, err := Release(append(bad, objs...)); err == nil || !strings.Contains(err.Error(), "one release") {
			t.Errorf("two releases: err = %v", err)
		}
		if err := setImage(c.Object, "ghcr.io/x/y"); err != nil {
			t.Fatal(err)
		}
		if _, err := Release(bad); err == nil || !strings.Contains(err.Error(), "images.collector.tag") {
			t.Errorf("untagged image: err = %v", err)
		}
		break
	}
}

// TestChartCasesValidate runs otelcol validate on every collector config of kof-collectors' defaults and ci/
// values files; a component the distribution cannot build is reported, never dropped.
func TestChartCasesValidate(t *testing.T) {
	v := mustValidator(t)
	cases, err := RenderChartCases(context.Background(), chartsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 4 {
		t.Fatalf("%d chart cases, want the defaults and at least 3 ci/ files", len(cases))
	}
	n := 0
	var all []Config
	unverified := map[string]bool{}
	for _, c := range cases {
		cfgs, err := FromObjects(c.Name(), c.Objects)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cfgs...)
		for _, cfg := range cfgs {
			res, err := v.Validate(context.Background(), cfg)
			if err != nil {
				t.Errorf("%v", err)
				continue
			}
			n++
			for _, u := range res.Unverified {
				t.Logf("UNVERIFIED %s: %s (its module is not served at %s)", cfg.Source, u, v.Release)
				unverified[Kind(u[:strings.Index(u, "/")]).id(TypeOf(u[strings.Index(u, "/")+1:]))] = true
			}
		}
	}
	used, err := Used(all)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := Resolve(used)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, m := range mods {
		if !m.ServedAt(v.Release) {
			want[m.ID()] = true
		}
	}
	if diff := cmp.Diff(want, unverified); diff != "" {
		t.Errorf("unverified component types differ from the not-served modules the configs use (-want +got):\n%s", diff)
	}
	t.Logf("%d collector configs of %d chart cases validated by otelcol %s", n, len(cases), v.Release)
}

// TestPlantedErrorsFailValidation: an unknown component, a bad field and a broken pipeline reference each fail.
func TestPlantedErrorsFailValidation(t *testing.T) {
	v := mustValidator(t)
	cases, err := RenderChartCases(context.Background(), chartsDir)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := FromObjects("defaults", cases[0].Objects)
	if err != nil || len(cfgs) == 0 {
		t.Fatalf("no collector config in the defaults (err %v)", err)
	}
	base := cfgs[0]
	if _, err := v.Validate(context.Background(), base); err != nil {
		t.Fatalf("the unchanged config fails: %v", err)
	}
	plant := map[string]struct {
		edit func(m map[string]any)
		want string
	}{
		"unknown component": {func(m map[string]any) {
			m["exporters"].(map[string]any)["nosuchexporter"] = map[string]any{}
		}, "nosuchexporter"},
		"bad field": {func(m map[string]any) {
			m["processors"].(map[string]any)["batch"] = map[string]any{"send_batch_sise": 10}
		}, "send_batch_sise"},
		"broken pipeline reference": {func(m map[string]any) {
			p := m["service"].(map[string]any)["pipelines"].(map[string]any)["metrics"].(map[string]any)
			p["exporters"] = []any{"otlphttp/nowhere"}
		}, "otlphttp/nowhere"},
		"unknown component in a not-served type's place": {func(m map[string]any) {
			m["exporters"].(map[string]any)["awscloudwatchlogs"] = map[string]any{"region": "x"}
			p := m["service"].(map[string]any)["pipelines"].(map[string]any)["logs"].(map[string]any)
			p["exporters"] = []any{"awscloudwatchlogs", "nosuch"}
		}, "nosuch"},
	}
	for name, p := range plant {
		t.Run(name, func(t *testing.T) {
			body := parse(t, mustYAML(t, base.Body))
			p.edit(body)
			_, err := v.Validate(context.Background(), Config{Source: name, Body: body})
			if err == nil || !strings.Contains(err.Error(), p.want) {
				t.Errorf("err = %v, want otelcol validate to fail naming %q", err, p.want)
			}
		})
	}
}

// TestStandInReplacesOnlyNotServedComponents: a not-served component is renamed in its section and every
// pipeline, the rest is untouched, and the input is not modified.
func TestStandInReplacesOnlyNotServedComponents(t *testing.T) {
	v := &Validator{Release: "0.145.0", built: map[Kind]map[string]bool{Exporters: {"debug": true}}}
	body := parse(t, `exporters: {awscloudwatchlogs: {region: us-east-2}, debug: {verbosity: basic}}
service:
  extensions: [health_check]
  pipelines: {logs: {receivers: [otlp], exporters: [awscloudwatchlogs, debug]}}`)
	before := mustYAML(t, body)
	got, unverified, err := v.standIn(Config{Source: "s", Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if mustYAML(t, body) != before {
		t.Errorf("standIn modified its input")
	}
	if diff := cmp.Diff([]string{"exporters/awscloudwatchlogs"}, unverified); diff != "" {
		t.Errorf("unverified (-want +got):\n%s", diff)
	}
	want := parse(t, `exporters: {debug/unverified-awscloudwatchlogs: {}, debug: {verbosity: basic}}
service:
  extensions: [health_check]
  pipelines: {logs: {receivers: [otlp], exporters: [debug/unverified-awscloudwatchlogs, debug]}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("standIn (-want +got):\n%s", diff)
	}
}

func (k Kind) id(typ string) string { return string(k) + "/" + typ }

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func setImage(obj map[string]any, image string) error {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return os.ErrInvalid
	}
	spec["image"] = image
	return nil
}
