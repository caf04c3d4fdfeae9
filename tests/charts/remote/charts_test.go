package remote

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/sveltos"
)

// remoteCharts are the charts this package covers.
var remoteCharts = []string{"kof-storage", "kof-collectors", "kof-regional", "kof-child"}

// TestChartGoldens renders every chart with its defaults and with each ci/ file, compares the objects with the
// goldens, checks the invariants every render must keep and runs the case's semantic assertions.
func TestChartGoldens(t *testing.T) {
	seen := map[string]bool{}
	for _, chart := range remoteCharts {
		cases := map[string][]string{"00-defaults": nil}
		for _, f := range ciFiles(t, chart) {
			cases[caseName(f)] = []string{f}
		}
		for name, files := range cases {
			key := chart + "/" + name
			seen[key] = true
			t.Run(key, func(t *testing.T) {
				res := renderChart(t, renderSpec{chart: chart, files: files})
				checkGolden(t, key+".yaml", manifestYAML(t, res))
				checkInvariants(t, res)
				check, ok := semantic[key]
				if !ok {
					t.Fatalf("no semantic assertions for %s: add them to the semantic table", key)
				}
				check(t, res)
			})
		}
	}
	for key := range semantic {
		if !seen[key] {
			t.Errorf("semantic assertions for %s but no such chart or ci file", key)
		}
	}
}

// checkInvariants asserts what holds for every render: no two objects share kind, namespace and name; every
// MultiClusterService has a non-empty clusterSelector; every workload has resources and a restricted security
// context.
func checkInvariants(t *testing.T, res *render.Result) {
	t.Helper()
	if d := res.Duplicates(); len(d) > 0 {
		t.Errorf("objects rendered twice: %v", d)
	}
	for _, mcs := range res.OfKind("MultiClusterService") {
		sel, _, _ := unstructured.NestedMap(mcs.Object, "spec", "clusterSelector")
		if len(sel) == 0 {
			t.Errorf("MCS %s: empty clusterSelector selects every cluster", mcs.GetName())
		}
	}
	for _, w := range workloads(res) {
		checkRestricted(t, w.where, w.securityContext)
		if len(w.resources) == 0 {
			t.Errorf("%s: no resources", w.where)
		}
	}
}

// workload is one container-running part of a rendered custom resource.
type workload struct {
	where           string
	securityContext map[string]any
	resources       map[string]any
	image           string
}

// workloads returns every workload the VictoriaMetrics and OpenTelemetry operators will run for res.
func workloads(res *render.Result) []workload {
	var out []workload
	parts := map[string][][]string{
		"VMCluster":              {{"spec", "vmstorage"}, {"spec", "vmselect"}, {"spec", "vminsert"}},
		"VMAuth":                 {{"spec"}},
		"VMAlert":                {{"spec"}},
		"VLCluster":              {{"spec", "vlinsert"}, {"spec", "vlselect"}, {"spec", "vlstorage"}},
		"VTCluster":              {{"spec", "insert"}, {"spec", "select"}, {"spec", "storage"}},
		"OpenTelemetryCollector": {{"spec"}},
	}
	for kind, paths := range parts {
		for _, obj := range res.OfKind(kind) {
			for _, p := range paths {
				m, ok, _ := unstructured.NestedMap(obj.Object, p...)
				if !ok {
					continue
				}
				sc, _, _ := unstructured.NestedMap(m, "securityContext")
				rs, _, _ := unstructured.NestedMap(m, "resources")
				img := ""
				switch v := m["image"].(type) {
				case string:
					img = v
				case map[string]any:
					img = fmt.Sprintf("%v:%v", v["repository"], v["tag"])
				}
				out = append(out, workload{
					where:           fmt.Sprintf("%s %s %s", kind, obj.GetName(), strings.Join(p, ".")),
					securityContext: sc, resources: rs, image: img,
				})
			}
		}
	}
	return out
}

// checkRestricted asserts a restricted security context: runAsNonRoot, readOnlyRootFilesystem,
// allowPrivilegeEscalation false, seccomp RuntimeDefault, capabilities drop ALL.
func checkRestricted(t *testing.T, where string, sc map[string]any) {
	t.Helper()
	if sc["runAsNonRoot"] != true || sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false {
		t.Errorf("%s: security context not restricted: %v", where, sc)
	}
	if typ, _, _ := unstructured.NestedString(sc, "seccompProfile", "type"); typ != "RuntimeDefault" {
		t.Errorf("%s: seccompProfile %q, want RuntimeDefault", where, typ)
	}
	drop, _, _ := unstructured.NestedStringSlice(sc, "capabilities", "drop")
	if len(drop) != 1 || drop[0] != "ALL" {
		t.Errorf("%s: capabilities.drop %v, want [ALL]", where, drop)
	}
}

// TestGlobalRegistryPrefixesOnce renders the remote workloads with global.registry and checks that every image
// starts with the registry exactly once.
func TestGlobalRegistryPrefixesOnce(t *testing.T) {
	const registry = "registry.example.com"
	for _, chart := range []string{"kof-storage", "kof-collectors"} {
		values := map[string]any{"global": map[string]any{"registry": registry}}
		if chart == "kof-collectors" {
			values["kcm"] = map[string]any{"monitoring": true}
		}
		res := renderChart(t, renderSpec{chart: chart, values: values})
		ws := workloads(res)
		if len(ws) == 0 {
			t.Fatalf("%s: no workloads", chart)
		}
		images := []string{}
		for _, w := range ws {
			images = append(images, w.image)
		}
		for _, obj := range res.OfKind("OpenTelemetryCollector") {
			if img, ok, _ := unstructured.NestedString(obj.Object, "spec", "targetAllocator", "image"); ok {
				images = append(images, img)
			}
		}
		for _, img := range images {
			if !strings.HasPrefix(img, registry+"/") || strings.Count(img, registry) != 1 {
				t.Errorf("%s: image %q does not start with %s/ exactly once", chart, img, registry)
			}
		}
	}
}

// TestLayer2TextsLint lints every service's values text of every MultiClusterService of every kof-regional and
// kof-child case (defaults, ci files, Istio by namespace label) for the hazards of Sveltos' double pass.
func TestLayer2TextsLint(t *testing.T) {
	istioNS := loadObjects(t, "clusters/namespace-istio.yaml")
	for _, chart := range []string{"kof-regional", "kof-child"} {
		specs := []renderSpec{{chart: chart}, {chart: chart, lookup: istioNS}}
		for _, f := range ciFiles(t, chart) {
			specs = append(specs, renderSpec{chart: chart, files: []string{f}})
		}
		for _, s := range specs {
			res := renderChart(t, s)
			mcss := res.OfKind("MultiClusterService")
			if len(mcss) == 0 {
				t.Errorf("%s %v: no MultiClusterService", chart, s.files)
			}
			for _, mcs := range mcss {
				for _, svc := range specOf(t, mcs).ServiceSpec.Services {
					if findings := sveltos.Lint(svc.Values); len(findings) > 0 {
						t.Errorf("%s %v: MCS %s service %s: %v", chart, s.files, mcs.GetName(), svc.Name, findings)
					}
				}
			}
		}
	}
}

// base64Run finds a run of base64 characters long enough to be an encoded blob rather than a word or a name.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/=]{64,}`)

// TestLayer2HandOffIsReadable is the regression test of the base64 hand-off (layer-1 values passed into the Sveltos
// templates as `fromJson (b64dec "...")`): every service's values text of every kof-regional and kof-child case
// opens with a comment and `$kof := (dict` on its second line, holds no b64dec and no base64 blob, and carries the
// chart's values as literals a reader finds (ci/03's storage retention `"retentionPeriod" "30d"`).
func TestLayer2HandOffIsReadable(t *testing.T) {
	texts := 0
	for _, chart := range []string{"kof-regional", "kof-child"} {
		specs := []renderSpec{{chart: chart}}
		for _, f := range ciFiles(t, chart) {
			specs = append(specs, renderSpec{chart: chart, files: []string{f}})
		}
		for _, s := range specs {
			for _, mcs := range renderChart(t, s).OfKind("MultiClusterService") {
				for _, svc := range specOf(t, mcs).ServiceSpec.Services {
					if svc.Values == "" {
						continue // a resources service: no values
					}
					texts++
					where := fmt.Sprintf("%s %v MCS %s service %s", chart, s.files, mcs.GetName(), svc.Name)
					lines := strings.Split(svc.Values, "\n")
					if len(lines) < 3 || !strings.HasPrefix(lines[0], "{{/* ") || !strings.HasPrefix(lines[1], "{{- $kof := (dict") {
						t.Errorf("%s: the text does not open with a comment and `$kof := (dict`: %q", where, lines[:min(3, len(lines))])
					}
					if strings.Contains(svc.Values, "b64dec") || base64Run.MatchString(svc.Values) {
						t.Errorf("%s: the hand-off holds base64: %s", where, base64Run.FindString(svc.Values))
					}
				}
			}
		}
	}
	res := renderChart(t, renderSpec{chart: "kof-regional", files: []string{chartDir("kof-regional") + "/ci/03-ingress-storage-values.yaml"}})
	for _, svc := range specOf(t, mcsNamed(t, res, "kof-regional-cluster")).ServiceSpec.Services {
		if svc.Name == "kof-storage" && !strings.Contains(svc.Values, `"retentionPeriod" "30d"`) {
			t.Errorf("kof-storage hand-off does not show the storage retention as a literal:\n%s", svc.Values)
		}
	}
	if texts == 0 {
		t.Fatal("no values text checked")
	}
	t.Logf("%d values texts checked", texts)
}
