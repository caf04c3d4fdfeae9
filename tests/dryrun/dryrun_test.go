// Package dryrun sends every object `kof render` produces for every scenario of tests/scenarios, and every object
// every chart renders with each of its ci values files, to a real kube-apiserver with every CRD KOF meets installed
// (operator/config/crd/bases and bin/crds, internal/harness), as a server-side apply with dryRun=All and strict field
// validation: what the offline validation (chartlib/validate) lacks, the API server finds, naming the object and
// the field. Nothing is stored; one control plane serves the package, and objects are sent concurrently.
package dryrun

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/proc"
)

// Where the inputs are, relative to this package.
var (
	root         = filepath.Join("..", "..")
	chartsDir    = filepath.Join(root, "charts")
	scenariosDir = filepath.Join(root, "tests", "scenarios", "testdata")
)

// failingScenarios are the scenarios whose render fails on purpose (tests/scenarios: 09 two storage modes, 14 a
// values typo); they have no objects to send.
var failingScenarios = []string{"09-m2m-and-m2r-conflict", "14-values-typo"}

// managementAPIs are the API versions the management cluster serves beyond Kubernetes' own, as the chart goldens
// render with them (tests/charts/mgmt).
var managementAPIs = []string{"helm.toolkit.fluxcd.io/v2", "source.toolkit.fluxcd.io/v1", "k0rdent.mirantis.com/v1beta1"}

// workers is how many objects are sent at once.
const workers = 8

// fieldManager is the field manager of the dry-run applies.
const fieldManager = "kof-dry-run"

// cp is the package's control plane (TestMain).
var cp *harness.ControlPlane

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run starts the control plane with every CRD, runs the tests and stops it. Starting it and installing about 120
// CRDs, and rendering the twelve scenario fleets, take this package's time (one to several minutes on two busy
// cores; the applies themselves, 8 at once, take seconds); every test shares the one control plane.
func run(m *testing.M) (code int) {
	_, removeScratch, err := proc.UseScratch("dryrun")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { removeScratch(code) }()
	ctrllog.SetLogger(logr.Discard())
	abs, err := filepath.Abs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	crds, err := harness.CRDDirs(abs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work, err := os.MkdirTemp("", "kof-dryrun-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	cp, err = harness.StartControlPlane(harness.ControlPlaneOptions{AssetsDir: filepath.Join(abs, "bin"), CRDDirs: crds,
		WorkDir: work})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code = m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

// object is one rendered object to send, with where it comes from and the namespace its release installs into.
type object struct {
	where     string
	namespace string
	obj       *unstructured.Unstructured
}

// scenarioObjects renders every scenario as `kof render` does and returns the objects of every cluster's services,
// each distinct object once. A scenario that fails to render must be one of failingScenarios.
func scenarioObjects(t *testing.T) []object {
	t.Helper()
	entries, err := os.ReadDir(scenariosDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []object
	seen := map[[32]byte]bool{}
	rendered := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "golden" {
			continue
		}
		f, err := fleet.Render(context.Background(), scenarioOptions(t, e.Name()))
		if err != nil {
			if !slices.Contains(failingScenarios, e.Name()) {
				t.Errorf("scenario %s: %v", e.Name(), err)
			}
			continue
		}
		if slices.Contains(failingScenarios, e.Name()) {
			t.Errorf("scenario %s renders now; remove it from failingScenarios", e.Name())
		}
		rendered++
		for _, c := range f.Clusters {
			for _, s := range c.Services {
				if s.Objects == nil {
					continue
				}
				for _, o := range s.Objects.Objects() {
					out = appendOnce(out, seen, object{where: e.Name() + "/" + c.Dir + "/" + s.Name, namespace: s.Namespace, obj: o})
				}
			}
		}
	}
	if rendered < 10 {
		t.Fatalf("%d scenarios rendered; the scenarios folder %s looks incomplete", rendered, scenariosDir)
	}
	return out
}

// scenarioOptions returns the fleet options of scenario name as tests/scenarios renders it: its values.yaml, its
// clusters.yaml (else clusters-standard.yaml) and its namespace.yaml when present.
func scenarioOptions(t *testing.T, name string) fleet.Options {
	t.Helper()
	dir := filepath.Join(scenariosDir, name)
	clusters := filepath.Join(dir, "clusters.yaml")
	if _, err := os.Stat(clusters); err != nil {
		clusters = filepath.Join(scenariosDir, "clusters-standard.yaml")
	}
	opts := fleet.Options{ChartsDir: chartsDir, ValuesFiles: []string{filepath.Join(dir, "values.yaml")},
		Clusters: load(t, clusters)}
	if ns := filepath.Join(dir, "namespace.yaml"); fileExists(ns) {
		opts.NamespaceObject = load(t, ns)[0]
	}
	return opts
}

// ciObjects renders every chart with each of its ci/*-values.yaml files (release name the chart's, namespace kof,
// the management cluster's APIs) and returns their objects, each distinct object once.
func ciObjects(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartsDir, "*", "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no chart ci files (%v)", err)
	}
	sort.Strings(files)
	var out []object
	seen := map[[32]byte]bool{}
	for _, file := range files {
		chart := filepath.Base(filepath.Dir(filepath.Dir(file)))
		set, err := render.Chart(context.Background(), render.Options{ChartDir: filepath.Join(chartsDir, chart),
			ReleaseName: chart, Namespace: "kof", ValuesFiles: []string{file}, APIVersions: managementAPIs, Strict: true})
		if err != nil {
			t.Errorf("render %s with %s: %v", chart, filepath.Base(file), err)
			continue
		}
		for _, o := range set.Objects() {
			out = appendOnce(out, seen, object{where: chart + "/ci/" + filepath.Base(file), namespace: "kof", obj: o})
		}
	}
	return out
}

// appendOnce appends o unless an identical object (same namespace to install into and same JSON) was seen.
func appendOnce(out []object, seen map[[32]byte]bool, o object) []object {
	data, err := json.Marshal(o.obj.Object)
	if err != nil {
		return append(out, o)
	}
	key := sha256.Sum256(append([]byte(o.namespace+"\n"), data...))
	if seen[key] {
		return out
	}
	seen[key] = true
	return append(out, o)
}

// TestScenariosDryRun: every object of every scenario's fleet is accepted by the API server.
func TestScenariosDryRun(t *testing.T) { dryRun(t, scenarioObjects(t)) }

// TestChartCIDryRun: every object every chart renders with each of its ci values files is accepted by the API
// server.
func TestChartCIDryRun(t *testing.T) { dryRun(t, ciObjects(t)) }

// dryRun creates the namespaces objs need, then applies every object with dryRun=All, at most workers at once, and
// fails the test with one line per object the API server refuses (what rendered it, the object and the server's
// message).
func dryRun(t *testing.T, objs []object) {
	t.Helper()
	ctx := context.Background()
	mapper := cp.Client.RESTMapper()
	namespaces := map[string]bool{}
	for i := range objs {
		o := &objs[i]
		o.obj = o.obj.DeepCopy()
		mapping, err := mapper.RESTMapping(o.obj.GroupVersionKind().GroupKind(), o.obj.GroupVersionKind().Version)
		if err != nil {
			continue // reported by the apply below
		}
		if mapping.Scope.Name() == apimeta.RESTScopeNameNamespace {
			if o.obj.GetNamespace() == "" {
				o.obj.SetNamespace(o.namespace)
			}
			namespaces[o.obj.GetNamespace()] = true
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(namespaces)) {
		err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
	}
	jobs := make(chan object)
	var (
		mu       sync.Mutex
		failures []string
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range jobs {
				if err := apply(ctx, o.obj); err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %s: %v", o.where, manifest.KeyOf(o.obj), err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, o := range objs {
		jobs <- o
	}
	close(jobs)
	wg.Wait()
	sort.Strings(failures)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d objects sent, %d refused", len(objs), len(failures))
}

// apply sends o as a server-side apply with dryRun=All and strict field validation.
func apply(ctx context.Context, o *unstructured.Unstructured) error {
	o.SetResourceVersion("")
	o.SetManagedFields(nil)
	delete(o.Object, "status")
	return cp.Client.Patch(ctx, o, client.Apply, client.DryRunAll, client.ForceOwnership,
		client.FieldOwner(fieldManager), client.FieldValidation("Strict"))
}

// load reads every object of a multi-document YAML file.
func load(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.Unstructured
	}
	return out
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
