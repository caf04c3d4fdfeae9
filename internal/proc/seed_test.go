package proc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startSeeded starts a control plane with the CRDs of crdDir through StartEnvtest and stops it at the end of t.
func startSeeded(t *testing.T, crdDir string) (*envtest.Environment, *rest.Config) {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	cfg, err := StartEnvtest(env, bin, t.TempDir())
	t.Cleanup(func() { _ = env.Stop() })
	if err != nil {
		t.Fatal(err)
	}
	return env, cfg
}

// seeds lists the ready seeds under the temporary folder.
func seeds(t *testing.T) []string {
	t.Helper()
	ready, err := filepath.Glob(filepath.Join(os.TempDir(), seedsFolder, "*", "ready"))
	if err != nil {
		t.Fatal(err)
	}
	return ready
}

// The CRDs a control plane asks for come with etcd's data: the first start builds the seed, the next one reuses it
// and serves the same CRDs (custom resources of them can be written), a changed CRD gets a seed of its own, and a
// seed a killed process left half-built is built again.
func TestStartEnvtestSeedsTheCRDs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	crds := t.TempDir()
	src := filepath.Join("..", "..", "operator", "config", "crd", "bases")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crds, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	env, _ := startSeeded(t, crds)
	if len(env.CRDs) != len(entries) {
		t.Fatalf("env.CRDs has %d CRDs, want %d", len(env.CRDs), len(entries))
	}
	first := seeds(t)
	if len(first) != 1 {
		t.Fatalf("seeds after the first start: %v, want one", first)
	}
	_ = env.Stop()

	env, cfg := startSeeded(t, crds)
	if got := seeds(t); len(got) != 1 || got[0] != first[0] {
		t.Fatalf("seeds after the second start: %v, want %v reused", got, first)
	}
	c, err := client.New(cfg, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range env.CRDs {
		var live apiextensionsv1.CustomResourceDefinition
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.k8s.io/v1")
		u.SetKind("CustomResourceDefinition")
		if err := c.Get(context.Background(), client.ObjectKey{Name: crd.Name}, u); err != nil {
			t.Fatalf("CRD %s not stored: %v", crd.Name, err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &live); err != nil {
			t.Fatal(err)
		}
		if live.Spec.Names.Kind != crd.Spec.Names.Kind {
			t.Errorf("CRD %s kind %s, want %s", crd.Name, live.Spec.Names.Kind, crd.Spec.Names.Kind)
		}
	}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("kof.k0rdent.mirantis.com/v1beta1")
	obj.SetKind("PromxyServerGroup")
	obj.SetNamespace("default")
	obj.SetName("seeded")
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create a custom resource of a seeded CRD: %v", err)
	}
	_ = env.Stop()

	// A changed CRD set is a seed of its own; what a killed build left (a build folder, a seed without its ready
	// mark) is removed and built again.
	extra := filepath.Join(crds, "zz-extra.yaml")
	if err := os.WriteFile(extra, []byte(extraCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := envtest.CRDInstallOptions{Paths: []string{crds}}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		t.Fatal(err)
	}
	bin, _ := filepath.Abs(filepath.Join("..", "..", "bin"))
	key, err := seedKey(bin, opts.CRDs)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(os.TempDir(), seedsFolder)
	for _, d := range []string{filepath.Join(root, key+".build-1234", "data"), filepath.Join(root, key, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env, _ = startSeeded(t, crds)
	got := seeds(t)
	if len(got) != 2 || !strings.Contains(strings.Join(got, " "), key) {
		t.Fatalf("seeds after a changed CRD: %v, want two, one of them %s", got, key)
	}
	if left, _ := filepath.Glob(filepath.Join(root, key+".build-*")); len(left) != 0 {
		t.Errorf("build folders left: %v", left)
	}
	if len(env.CRDs) != len(entries)+1 {
		t.Errorf("env.CRDs has %d CRDs, want %d", len(env.CRDs), len(entries)+1)
	}
}

const extraCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.seed.kof.dev
spec:
  group: seed.kof.dev
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`
