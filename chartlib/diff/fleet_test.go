package diff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
)

// chartsDir is the repository's charts folder.
const chartsDir = "../../charts"

// standardClusters returns the scenarios' standard ClusterDeployments (one regional, two children).
func standardClusters(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	path := "../../tests/scenarios/testdata/clusters-standard.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Unstructured)
	}
	return out
}

// writeValues writes an umbrella values file and returns its path.
func writeValues(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The same charts and values give no change (exit 0), over every object of the real charts.
func TestRealFleetNoChange(t *testing.T) {
	src := Source{Dir: chartsDir}
	r, err := Run(context.Background(), Options{Old: Side{Charts: src}, New: Side{Charts: src},
		Fleet: fleet.Options{Clusters: standardClusters(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode() != ExitNoChange || r.Summary.ChangedClusters != 0 {
		t.Errorf("exit %d, summary %+v; want no change\n%s", r.ExitCode(), r.Summary, text(t, r))
	}
	if r.Summary.Clusters != 4 || r.Summary.ObjectsUnchanged < 100 {
		t.Errorf("summary %+v: want 4 clusters and every object compared", r.Summary)
	}
}

// A third-party chart version bump in the umbrella values is a harmless change of that release on every cluster
// that gets it (exit 1), and the changed values of the management cluster's releases are listed.
func TestRealFleetValuesChange(t *testing.T) {
	src := Source{Dir: chartsDir}
	values := writeValues(t, "catalog:\n  cert-manager:\n    version: v1.19.2\n")
	r, err := Run(context.Background(), Options{Old: Side{Charts: src}, New: Side{Charts: src, ValuesFiles: []string{values}},
		Fleet: fleet.Options{Clusters: standardClusters(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode() != ExitChanges {
		t.Fatalf("exit %d, want %d\n%s", r.ExitCode(), ExitChanges, text(t, r))
	}
	out := text(t, r)
	for _, want := range []string{"cluster regional-1 (regional): changed", "release cert-manager/cert-manager",
		`version: "v1.19.1" → "v1.19.2"`, "catalog.cert-manager.version: \"v1.19.1\" → \"v1.19.2\""} {
		if !strings.Contains(out, want) {
			t.Errorf("the diff lacks %q:\n%s", want, out)
		}
	}
}

// A version of a CRD in a chart's crds/ folder (installed by Helm, never upgraded) made non-served hurts on the
// release that installs the chart.
func TestRealFleetCRDNotServed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts")
	if err := os.CopyFS(dir, os.DirFS(chartsDir)); err != nil {
		t.Fatal(err)
	}
	crd := filepath.Join(dir, "kof-mothership", "crds", "kof.k0rdent.mirantis.com_promxyservergroups.yaml")
	data, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "    served: true") {
		t.Fatalf("%s has no served version", crd)
	}
	if err := os.WriteFile(crd, []byte(strings.Replace(string(data), "    served: true", "    served: false", 1)),
		0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Options{Old: Side{Charts: Source{Dir: chartsDir}}, New: Side{Charts: Source{Dir: dir}},
		Fleet: fleet.Options{Clusters: standardClusters(t)}})
	if err != nil {
		t.Fatal(err)
	}
	hurts := r.Hurts()
	if len(hurts) != 1 || hurts[0].Reason != ReasonCRDVersionRemoved || hurts[0].Cluster != "mgmt" ||
		hurts[0].Release != "kof/kof-mothership" ||
		hurts[0].Object != "CustomResourceDefinition.apiextensions.k8s.io promxyservergroups.kof.k0rdent.mirantis.com" {
		t.Errorf("hurts %+v, want one %s of kof-mothership's PromxyServerGroup CRD on mgmt\n%s", hurts,
			ReasonCRDVersionRemoved, text(t, r))
	}
	if r.ExitCode() != ExitHurts {
		t.Errorf("exit %d, want %d", r.ExitCode(), ExitHurts)
	}
}

// benchSize returns the benchmark fleet besides the management cluster: 10 regional and 200 child clusters (the
// fleet benchmarks of chartlib/fleet), or 2 and 4 with -short.
func benchSize() (regionals, children int) {
	if testing.Short() {
		return 2, 4
	}
	return 10, 200
}

// benchClusters returns the benchmark fleet's ClusterDeployments: regionals r0… each in its own AWS region, and
// children c0… spread over them, half bound by region and half by the regional-cluster-name label.
func benchClusters(b *testing.B) []*unstructured.Unstructured {
	nr, nc := benchSize()
	var y strings.Builder
	y.WriteString(`apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterTemplate
metadata: {name: aws-standalone, namespace: kcm-system}
spec: {helm: {chartSpec: {chart: aws-standalone, version: 1.0.0}}}
status: {providers: [infrastructure-aws]}
`)
	cd := func(name, region, labels, annotations string) {
		fmt.Fprintf(&y, `---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata: {name: %s, namespace: kcm-system, labels: {%s}, annotations: {%s}}
spec: {template: aws-standalone, config: {region: %s}}
`, name, labels, annotations, region)
	}
	for i := range nr {
		cd(fmt.Sprintf("r%d", i), fmt.Sprintf("region-%d", i), "k0rdent.mirantis.com/kof-cluster-role: regional",
			fmt.Sprintf("k0rdent.mirantis.com/kof-regional-domain: r%d.example.com", i))
	}
	for i := range nc {
		labels := "k0rdent.mirantis.com/kof-cluster-role: child"
		if i%2 == 1 {
			labels += fmt.Sprintf(", k0rdent.mirantis.com/kof-regional-cluster-name: r%d", i%nr)
		}
		cd(fmt.Sprintf("c%d", i), fmt.Sprintf("region-%d", i%nr), labels, "")
	}
	objs, err := manifest.ParseDocuments("bench", []byte(y.String()))
	if err != nil {
		b.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Unstructured)
	}
	return out
}

// TestPrintValuesChange prints the text of TestRealFleetValuesChange's diff (go test -v -run TestPrintValuesChange).
func TestPrintValuesChange(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("prints only with -v")
	}
	src := Source{Dir: chartsDir}
	values := writeValues(t, benchValues)
	r, err := Run(context.Background(), Options{Old: Side{Charts: src}, New: Side{Charts: src, ValuesFiles: []string{values}},
		Fleet: fleet.Options{Clusters: standardClusters(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(text(t, r))
}

// liveCopy returns o as the API server and the controllers return it: status, server metadata, Flux's finalizer,
// Helm's ownership annotations, and every `10m`-style duration under spec written back as Go formats it (`10m0s`).
func liveCopy(t *testing.T, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	l := o.DeepCopy()
	l.SetUID("0b7f6c2e-live")
	l.SetResourceVersion("4242")
	l.SetGeneration(3)
	l.SetFinalizers([]string{"finalizers.fluxcd.io"})
	a := l.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a["meta.helm.sh/release-name"], a["meta.helm.sh/release-namespace"] = "kof", "kof"
	l.SetAnnotations(a)
	l.Object["status"] = map[string]any{"observedGeneration": int64(3)}
	for _, f := range []string{"interval", "timeout"} {
		if v, ok, _ := unstructured.NestedString(l.Object, "spec", f); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s spec.%s %q: %v", manifest.KeyOf(o), f, v, err)
			}
			if err := unstructured.SetNestedField(l.Object, d.String(), "spec", f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return l
}

// `kof diff --live` with the same charts and values: the umbrella's Flux objects read from the cluster (as
// liveCopy makes them) against the same objects rendered give no change, and the umbrella's values (unknown on
// the live side) are not compared; a real change of a live object (a HelmChart's version) is still reported.
func TestRealFleetLiveUmbrellaNoChange(t *testing.T) {
	ctx := context.Background()
	src := Source{Dir: chartsDir}
	f, err := fleet.Render(ctx, fleet.Options{ChartsDir: chartsDir, Clusters: standardClusters(t)})
	if err != nil {
		t.Fatal(err)
	}
	var layer1 []*unstructured.Unstructured
	var durations int
	for _, o := range f.Umbrella.Objects() {
		l := liveCopy(t, o)
		if fmt.Sprint(l.Object["spec"]) != fmt.Sprint(o.Object["spec"]) {
			durations++
		}
		layer1 = append(layer1, l)
	}
	if len(layer1) == 0 || durations == 0 {
		t.Fatalf("the umbrella renders %d objects, %d with a duration written differently live; want some of each",
			len(layer1), durations)
	}
	values := writeValues(t, "flux:\n  wait: true\n")
	run := func(layer1 []*unstructured.Unstructured) *Report {
		r, err := Run(ctx, Options{Old: Side{Charts: src, Layer1: layer1},
			New: Side{Charts: src, ValuesFiles: []string{values}}, Fleet: fleet.Options{Clusters: standardClusters(t)}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := run(layer1); r.ExitCode() != ExitNoChange {
		t.Errorf("live umbrella objects against their render: exit %d, want %d\n%s", r.ExitCode(), ExitNoChange,
			text(t, r))
	}

	var chart *unstructured.Unstructured
	for _, l := range layer1 {
		if l.GetKind() == "HelmChart" && l.GetName() == "kof-mothership" {
			chart = l
		}
	}
	if chart == nil {
		t.Fatal("the umbrella renders no HelmChart kof-mothership")
	}
	if err := unstructured.SetNestedField(chart.Object, "1.9.9", "spec", "version"); err != nil {
		t.Fatal(err)
	}
	r := run(layer1)
	out := text(t, r)
	if r.ExitCode() != ExitChanges || !strings.Contains(out, `spec.version: "1.9.9" →`) {
		t.Errorf("a live HelmChart at version 1.9.9: exit %d, want %d and the version change\n%s",
			r.ExitCode(), ExitChanges, out)
	}
}
