package scenarios

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/internal/golden"
)

// chartsDir is the repository's charts directory.
var chartsDir = filepath.Join("..", "..", "charts")

// validator returns one shared Validator (building the scheme is the slow part).
var validator = sync.OnceValues(validate.New)

// loadObjects reads every object of a multi-document YAML file.
func loadObjects(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	objs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Unstructured)
	}
	return out
}

// options returns the fleet options of scenario name: its values.yaml, its clusters.yaml (else
// clusters-standard.yaml) and its namespace.yaml when present.
func options(t testing.TB, name string) fleet.Options {
	t.Helper()
	dir := filepath.Join("testdata", name)
	clusters := filepath.Join(dir, "clusters.yaml")
	if _, err := os.Stat(clusters); err != nil {
		clusters = filepath.Join("testdata", "clusters-standard.yaml")
	}
	v, err := validator()
	if err != nil {
		t.Fatalf("validator: %v", err)
	}
	opts := fleet.Options{
		ChartsDir:   chartsDir,
		ValuesFiles: []string{filepath.Join(dir, "values.yaml")},
		Clusters:    loadObjects(t, clusters),
		Validator:   v,
	}
	if ns := filepath.Join(dir, "namespace.yaml"); exists(ns) {
		opts.NamespaceObject = loadObjects(t, ns)[0]
	}
	return opts
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// renderScenario renders scenario name and returns the fleet and the render error.
func renderScenario(t testing.TB, name string) (*fleet.Fleet, error) {
	t.Helper()
	return fleet.Render(context.Background(), options(t, name))
}

// mustRender renders scenario name, failing the test when the render fails.
func mustRender(t testing.TB, name string) *fleet.Fleet {
	t.Helper()
	f, err := renderScenario(t, name)
	if err != nil {
		t.Fatalf("render scenario %s: %v", name, err)
	}
	return f
}

// goldens collects the `kof render` tree of every scenario; TestMain compares them with the store under
// testdata/golden once all tests ran (internal/golden: each distinct object stored once; `-update` rewrites it).
var goldens = golden.NewTree(filepath.Join("testdata", "golden"))

// TestMain runs the tests, then checks the golden store.
func TestMain(m *testing.M) { os.Exit(goldens.Run(m, nil)) }

// checkGoldenTree writes f as `kof render` does (plus summary.txt) and records every file as the golden file
// `<name>/<path>`, compared with the store after the tests.
func checkGoldenTree(t *testing.T, name string, f *fleet.Fleet) {
	t.Helper()
	got := t.TempDir()
	if err := fleet.Write(got, f); err != nil {
		t.Fatalf("write fleet: %v", err)
	}
	var summary bytes.Buffer
	if err := fleet.Summary(&summary, f); err != nil {
		t.Fatalf("summary: %v", err)
	}
	if err := os.WriteFile(filepath.Join(got, "summary.txt"), summary.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	files := readTree(t, got)
	if len(files) == 0 {
		t.Fatalf("scenario %s: kof render wrote no files", name)
	}
	for p, content := range files {
		goldens.Add(name+"/"+p, []byte(content))
	}
}

// readTree returns every regular file under root, keyed by slash-separated relative path.
func readTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatalf("read tree %s: %v", root, err)
	}
	return out
}

// cluster returns the named cluster of f, failing the test when absent.
func cluster(t testing.TB, f *fleet.Fleet, name string) *fleet.Cluster {
	t.Helper()
	c := f.Cluster(name)
	if c == nil {
		t.Fatalf("no cluster %s in the fleet", name)
	}
	return c
}

// service returns the named service of a cluster, failing the test when the cluster does not receive it.
func service(t testing.TB, f *fleet.Fleet, clusterName, name string) *fleet.Service {
	t.Helper()
	s := cluster(t, f, clusterName).Service(name)
	if s == nil {
		t.Fatalf("cluster %s does not receive service %s (it receives %v)", clusterName, name, serviceNames(cluster(t, f, clusterName)))
	}
	return s
}

// serviceNames returns the release names a cluster receives, in order.
func serviceNames(c *fleet.Cluster) []string {
	var out []string
	for _, s := range c.Services {
		out = append(out, s.Name)
	}
	return out
}

// mcsServices returns the services of c delivered by a MultiClusterService.
func mcsServices(c *fleet.Cluster) []*fleet.Service {
	var out []*fleet.Service
	for _, s := range c.Services {
		if strings.HasPrefix(s.Via, "MultiClusterService ") {
			out = append(out, s)
		}
	}
	return out
}

// object returns kind/ns/name from a rendered service, failing the test when absent.
func object(t testing.TB, s *fleet.Service, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	if s.Objects == nil {
		t.Fatalf("service %s rendered no objects (error: %v)", s.Name, s.Err)
	}
	o, err := s.Objects.MustGet(kind, ns, name)
	if err != nil {
		t.Fatalf("service %s: %v", s.Name, err)
	}
	return o
}

// value returns the value at path of m, failing the test when absent.
func value(t testing.TB, m map[string]any, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(m, path...)
	if err != nil || !ok {
		t.Fatalf("no value at %s (err %v)", strings.Join(path, "."), err)
	}
	return v
}

// wantValue fails the test unless the value at path of m equals want.
func wantValue(t testing.TB, what string, m map[string]any, want any, path ...string) {
	t.Helper()
	if got := value(t, m, path...); !cmp.Equal(got, want) {
		t.Errorf("%s: %s = %v, want %v", what, strings.Join(path, "."), got, want)
	}
}

// noProblems fails the test for every problem of every cluster: its own errors, failed services and validation
// findings.
func noProblems(t testing.TB, f *fleet.Fleet) {
	t.Helper()
	for _, c := range f.Clusters {
		for _, p := range c.Problems() {
			t.Errorf("cluster %s: %s", c.Name, p)
		}
	}
}
