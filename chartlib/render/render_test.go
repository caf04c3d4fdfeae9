package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// secret returns a fixture Secret with a base64 username.
func secret(namespace, name, usernameB64 string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"data":     map[string]any{"username": usernameB64},
	}}
}

// namespace returns a fixture Namespace with labels.
func namespace(name string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "labels": labels},
	}}
}

func configData(t *testing.T, opts Options) map[string]string {
	t.Helper()
	set, err := Chart(context.Background(), opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	cm := set.Get("ConfigMap", firstNonEmpty(opts.Namespace, DefaultNamespace), firstNonEmpty(opts.ReleaseName, "basic")+"-config")
	if cm == nil {
		t.Fatalf("no ConfigMap rendered; kinds %v", set.KindSummary())
	}
	data, _, err := unstructured.NestedStringMap(cm.Object, "data")
	if err != nil {
		t.Fatalf("configmap data: %v", err)
	}
	return data
}

func TestChartDefaults(t *testing.T) {
	set, err := Chart(context.Background(), Options{ChartDir: "testdata/basic", Namespace: "kof", ReleaseName: "rel"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"ConfigMap": 1, "Deployment": 1}, set.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	// Install order: ConfigMap before Deployment.
	objs := set.Objects()
	if objs[0].GetKind() != "ConfigMap" || objs[1].GetKind() != "Deployment" {
		t.Errorf("order: got %s, %s", objs[0].GetKind(), objs[1].GetKind())
	}
	dep := set.Get("Deployment.apps", "kof", "rel")
	if dep == nil {
		t.Fatal("Deployment.apps kof/rel not found")
	}
	replicas, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	if replicas != 1 {
		t.Errorf("replicas = %d, want 1", replicas)
	}
	data := configData(t, Options{ChartDir: "testdata/basic", Namespace: "kof", ReleaseName: "rel"})
	want := map[string]string{
		"message": "hello", "secretFound": "false", "istio": "", "kube": DefaultKubeVersion,
		"hasMonitoring": "false", "secretCount": "0",
	}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

func TestValuesPrecedence(t *testing.T) {
	data := configData(t, Options{
		ChartDir:    "testdata/basic",
		ValuesFiles: []string{"testdata/values-a.yaml", "testdata/values-b.yaml"},
	})
	if data["message"] != "from-b" {
		t.Errorf("files: message = %q, want from-b", data["message"])
	}
	data = configData(t, Options{
		ChartDir:    "testdata/basic",
		ValuesFiles: []string{"testdata/values-a.yaml"},
		Values:      map[string]any{"message": "from-map"},
	})
	if data["message"] != "from-map" {
		t.Errorf("map over file: message = %q, want from-map", data["message"])
	}
	data = configData(t, Options{
		ChartDir: "testdata/basic", Values: map[string]any{"message": "from-map"}, Set: []string{"message=from-set"},
	})
	if data["message"] != "from-set" {
		t.Errorf("set over map: message = %q, want from-set", data["message"])
	}
}

func TestLookupFixturesChangeOutput(t *testing.T) {
	opts := Options{
		ChartDir: "testdata/basic", Namespace: "kof",
		Lookup: []*unstructured.Unstructured{
			secret("kof", "creds", "YWRtaW4="), // admin
			secret("kof", "other", "eA=="),
			secret("elsewhere", "creds", "bm8="),
			namespace("kof", map[string]any{"istio-injection": "enabled"}),
		},
	}
	data := configData(t, opts)
	want := map[string]string{"secretFound": "true", "username": "admin", "istio": "enabled", "secretCount": "2"}
	got := map[string]string{}
	for k := range want {
		got[k] = data[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookup data (-want +got):\n%s", diff)
	}
}

func TestCapabilitiesPinned(t *testing.T) {
	data := configData(t, Options{
		ChartDir: "testdata/basic", KubeVersion: "v1.31.4", APIVersions: []string{"monitoring.coreos.com/v1"},
	})
	if data["kube"] != "v1.31.4" || data["hasMonitoring"] != "true" {
		t.Errorf("capabilities: kube=%q hasMonitoring=%q", data["kube"], data["hasMonitoring"])
	}
	_, err := Chart(context.Background(), Options{ChartDir: "testdata/basic", KubeVersion: "v1.29.0"})
	if err == nil || !strings.Contains(err.Error(), "requires kubeVersion >=1.30.0-0") {
		t.Errorf("kubeVersion constraint: got %v", err)
	}
}

func TestStrictCatchesMissingKey(t *testing.T) {
	set, err := Chart(context.Background(), Options{ChartDir: "testdata/strict"})
	if err != nil {
		t.Fatalf("non-strict render: %v", err)
	}
	cm := set.Get("ConfigMap", DefaultNamespace, "strict")
	if cm == nil {
		// The template sets no namespace.
		cm = set.Get("ConfigMap", "", "strict")
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "size"); got != "small" {
		t.Errorf("size = %q, want small", got)
	}
	_, err = Chart(context.Background(), Options{ChartDir: "testdata/strict", Strict: true})
	if err == nil {
		t.Fatal("strict render succeeded; want missing key error")
	}
	for _, want := range []string{"strict/templates/configmap.yaml:7", `map has no entry for key "color"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("strict error %q lacks %q", err, want)
		}
	}
}

func TestSchemaViolationNamesPath(t *testing.T) {
	_, err := Chart(context.Background(), Options{ChartDir: "testdata/basic", Set: []string{"replicas=-3"}})
	if err == nil {
		t.Fatal("render succeeded; want schema error")
	}
	if !strings.Contains(err.Error(), "replicas") || !strings.Contains(err.Error(), "basic") {
		t.Errorf("schema error %q does not name chart and path", err)
	}
	_, err = Chart(context.Background(), Options{ChartDir: "testdata/basic", Set: []string{"mesage=typo"}})
	if err == nil || !strings.Contains(err.Error(), "mesage") {
		t.Errorf("unknown key: got %v, want an error naming mesage", err)
	}
	if _, err := Chart(context.Background(), Options{
		ChartDir: "testdata/basic", Set: []string{"mesage=typo"}, SkipSchemaValidation: true,
	}); err != nil {
		t.Errorf("SkipSchemaValidation: %v", err)
	}
}

func TestTemplateErrorKeepsFileAndLine(t *testing.T) {
	_, err := Chart(context.Background(), Options{ChartDir: "testdata/basic", Set: []string{"failWith=stop here"}})
	if err == nil {
		t.Fatal("render succeeded; want fail()")
	}
	for _, want := range []string{"basic/templates/fail.yaml:2", "stop here"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestDuplicateKeyFails(t *testing.T) {
	_, err := Chart(context.Background(), Options{ChartDir: "testdata/dupkey"})
	if err == nil {
		t.Fatal("render succeeded; want duplicate key error")
	}
	for _, want := range []string{"dupkey/templates/configmap.yaml", `"key"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestLoadedChartReused(t *testing.T) {
	c, err := Load("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"one", "two"} {
		data := configData(t, Options{Chart: c, Set: []string{"message=" + msg}})
		if data["message"] != msg {
			t.Errorf("message = %q, want %q", data["message"], msg)
		}
	}
	if _, err := Load("testdata/nonexistent"); err == nil || !strings.Contains(err.Error(), "testdata/nonexistent") {
		t.Errorf("Load of missing dir: %v", err)
	}
}

func BenchmarkChart(b *testing.B) {
	c, err := Load("testdata/basic")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Chart(context.Background(), Options{Chart: c, Namespace: "kof"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRepositoryChart renders the kof-mothership chart (the largest KOF chart) with its defaults, loading it
// once; compare with `helm template` of the same directory (make bench).
func BenchmarkRepositoryChart(b *testing.B) {
	c, err := Load("../../charts/kof-mothership")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		set, err := Chart(context.Background(), Options{Chart: c, Namespace: "kof", ReleaseName: "kof-mothership"})
		if err != nil {
			b.Fatal(err)
		}
		if set.Len() == 0 {
			b.Fatal("no objects rendered")
		}
	}
}

// BenchmarkRepositoryChartFromDisk is BenchmarkRepositoryChart including loading the chart directory, as one
// `helm template` invocation does.
func BenchmarkRepositoryChartFromDisk(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Chart(context.Background(), Options{ChartDir: "../../charts/kof-mothership", Namespace: "kof",
			ReleaseName: "kof-mothership"}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLookupCustomResourceFixtures(t *testing.T) {
	vm := func(ns, name, retention string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operator.victoriametrics.com/v1beta1", "kind": "VMCluster",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"retentionPeriod": retention},
		}}
	}
	set, err := Chart(context.Background(), Options{ChartDir: "testdata/crlookup", Namespace: "kof",
		Lookup: []*unstructured.Unstructured{vm("kof", "cluster", "30d"), vm("other", "cluster", "1y"), vm("kof", "b", "1d")}})
	if err != nil {
		t.Fatal(err)
	}
	cm := set.Get("ConfigMap", "kof", "crlookup")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if diff := cmp.Diff(map[string]string{"retention": "30d", "clusters": "3"}, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	// A kind the fixtures do not serve fails like an API the cluster does not serve.
	_, err = Chart(context.Background(), Options{ChartDir: "testdata/crlookup", Namespace: "kof",
		Lookup: []*unstructured.Unstructured{secret("kof", "creds", "eA==")}})
	if err == nil || !strings.Contains(err.Error(), "operator.victoriametrics.com/v1beta1") {
		t.Errorf("unserved kind: %v", err)
	}
}

func TestLoadedChartWithDependenciesIsNotModified(t *testing.T) {
	c, err := Load("testdata/parent")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set   []string
		kinds map[string]int
	}{
		{[]string{"child.enabled=false"}, map[string]int{"ConfigMap": 1}},
		{nil, map[string]int{"ConfigMap": 2}},
		{[]string{"child.enabled=false"}, map[string]int{"ConfigMap": 1}},
	} {
		set, err := Chart(context.Background(), Options{Chart: c, Set: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.kinds, set.Kinds()); diff != "" {
			t.Errorf("%v: kinds (-want +got):\n%s", tc.set, diff)
		}
		if child := set.Get("ConfigMap", "", "child"); child != nil {
			if g, _, _ := unstructured.NestedString(child.Object, "data", "greeting"); g != "hello" {
				t.Errorf("parent value for the subchart: greeting = %q, want hello", g)
			}
		}
	}
	if len(c.Dependencies()) != 1 {
		t.Errorf("loaded chart lost its dependency: %d", len(c.Dependencies()))
	}
}

func TestConcurrentRendersShareOneChart(t *testing.T) {
	c, err := Load("testdata/basic")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			msg := fmt.Sprintf("m%d", i)
			set, err := Chart(context.Background(), Options{Chart: c, Set: []string{"message=" + msg},
				Lookup: []*unstructured.Unstructured{secret("default", "creds", "eA==")}})
			if err == nil {
				got, _, _ := unstructured.NestedString(set.Get("ConfigMap", DefaultNamespace, "basic-config").Object,
					"data", "message")
				if got != msg {
					err = fmt.Errorf("render %d: message %q", i, got)
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestLookupKnownCustomKindWithoutFixtures checks that lookups of KCM kinds answer like an API server with the KCM
// CRDs installed when no fixture has the kind: an empty list, and nothing for a get, instead of an unserved API.
func TestLookupKnownCustomKindWithoutFixtures(t *testing.T) {
	set, err := Chart(context.Background(), Options{ChartDir: "testdata/kcmlookup", Namespace: "kof",
		Lookup: []*unstructured.Unstructured{secret("kof", "creds", "eA==")}})
	if err != nil {
		t.Fatalf("lookup of KCM kinds with no fixtures of them: %v", err)
	}
	cm := set.Get("ConfigMap", "kof", "kcmlookup")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if diff := cmp.Diff(map[string]string{"serviceTemplates": "0", "clusterDeployments": "0", "child": "true"}, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

// TestValuesFileNotAMapping: a values file whose top level is a list or a scalar is refused with a message naming the
// file and saying it is not a mapping (issue: `json: cannot unmarshal array into Go value of type chartutil.Values`);
// an empty file, comments only or `null` are an empty mapping, as for Helm.
func TestValuesFileNotAMapping(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, text, want string }{
		{"list.yaml", "- regionless\n- enabled\n", "the top level is a list, not a mapping"},
		{"string.yaml", "regionless.enabled=true\n", "the top level is a string, not a mapping"},
		{"number.yaml", "3\n", "the top level is a number, not a mapping"},
		{"empty.yaml", "", ""},
		{"comments.yaml", "# nothing\n", ""},
		{"null.yaml", "null\n", ""},
		{"map.yaml", "regionless: {enabled: true}\n", ""},
	} {
		file := filepath.Join(dir, tt.name)
		if err := os.WriteFile(file, []byte(tt.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := UserValues(Options{ValuesFiles: []string{file}})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) ||
			!strings.Contains(err.Error(), file) || strings.Contains(err.Error(), "unmarshal")):
			t.Errorf("%s: error %v, want one naming the file and containing %q", tt.name, err, tt.want)
		}
	}
}
