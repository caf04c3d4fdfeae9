package proc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// startSeeded starts a control plane with the CRDs of crdDir through StartEnvtest, after each of configure has
// changed its Environment, and stops it at the end of t.
func startSeeded(t *testing.T, crdDir string, configure ...func(*envtest.Environment)) (*envtest.Environment, *rest.Config) {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "..", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	for _, c := range configure {
		c(env)
	}
	cfg, err := StartEnvtest(env, bin, t.TempDir())
	t.Cleanup(func() { _ = env.Stop() })
	if err != nil {
		t.Fatal(err)
	}
	return env, cfg
}

// seeds lists the ready seeds of SeedsDir.
func seeds(t *testing.T) []string {
	t.Helper()
	ready, err := filepath.Glob(filepath.Join(SeedsDir(), "*", "ready"))
	if err != nil {
		t.Fatal(err)
	}
	return ready
}

// The CRDs a control plane asks for come with etcd's data: the first start builds the seed, the next one reuses it
// and serves the same CRDs (custom resources of them can be written), a changed CRD gets a seed of its own, and a
// seed a killed process left half-built is built again.
func TestStartEnvtestSeedsTheCRDs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
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

	// The second start comes from a process of its own that moved TMPDIR into a scratch folder (UseScratch, as every
	// test package does): it finds the seed the first one built (regression: the seeds were under TMPDIR, so every
	// test process built its own, 16 s and about 20 s of CPU each, and removed it with its scratch folder).
	_, endScratch, err := UseScratch("seed-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { endScratch(0) })
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
	root := SeedsDir()
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

// A seeded control plane is handed out with the OpenAPI v3 document of every group version built (Helm's first
// install reads those of the kinds it installs, within the discovery client's 32 s) and its OpenAPI v2 document not
// built (no client reads it; building it cost kube-apiserver about 6 s of CPU and 400 MiB per start): the API
// server's audit log shows a GET of each v3 document and none of v2.
func TestStartEnvtestWarmsOpenAPIV3NotV2(t *testing.T) {
	dir := t.TempDir()
	policy, auditLog := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n"+
		"rules:\n- level: Metadata\n  nonResourceURLs: [/openapi/*]\n- level: None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cfg := startSeeded(t, filepath.Join("..", "..", "operator", "config", "crd", "bases"), func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Set("audit-policy-file", policy).Set("audit-log-path", auditLog)
	})
	// What the warm-up asked for, read before anything else asks the API server.
	data, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			RequestURI string `json:"requestURI"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit log line %q: %v", line, err)
		}
		path, _, _ := strings.Cut(e.RequestURI, "?")
		served[path]++
	}
	if n := served["/openapi/v2"]; n != 0 {
		t.Errorf("the OpenAPI v2 document was asked for %d times, want 0", n)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := paths["apis/kof.k0rdent.mirantis.com/v1beta1"]; !ok {
		t.Fatalf("the OpenAPI v3 index lists no KOF group version: %v", slices.Collect(maps.Keys(paths)))
	}
	for name := range paths {
		if served["/openapi/v3/"+name] == 0 {
			t.Errorf("the OpenAPI v3 document of %s was not asked for before the control plane was handed out", name)
		}
	}
}

// warmOpenAPI waits for the CRDs that kube-apiserver adds to the OpenAPI v3 documents in the background: it asks
// again for a document that lacks one, and after wait it names the resources still missing.
func TestWarmOpenAPIWaitsForEveryCRD(t *testing.T) {
	const gv = "apis/kof.k0rdent.mirantis.com/v1beta1"
	crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "kof.k0rdent.mirantis.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "promxyservergroups"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true}, {Name: "v1alpha1"}}}}
	for _, tc := range []struct {
		name     string
		complete int // the document lists the CRD from this request on (0: never)
		wantErr  string
	}{
		{name: "listed after three requests", complete: 4},
		{name: "never listed", wantErr: "/" + gv + "/promxyservergroups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var docs atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/openapi/v3":
					n := docs.Load()
					_, _ = fmt.Fprintf(w, `{"paths":{%q:{"serverRelativeURL":"/openapi/v3/%s?hash=%d"}}}`, gv, gv, n)
				case "/openapi/v3/" + gv:
					paths := `{"/apis/kof.k0rdent.mirantis.com/v1beta1/":{}}`
					if n := docs.Add(1); tc.complete > 0 && int(n) >= tc.complete {
						paths = `{"/apis/kof.k0rdent.mirantis.com/v1beta1/promxyservergroups":{}}`
					}
					_, _ = fmt.Fprintf(w, `{"openapi":"3.0.0","paths":%s}`, paths)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			err := warmOpenAPI(&rest.Config{Host: srv.URL}, []*apiextensionsv1.CustomResourceDefinition{crd},
				10*time.Millisecond, 500*time.Millisecond)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("warmOpenAPI: %v", err)
			case tc.wantErr == "" && docs.Load() != int32(tc.complete):
				t.Errorf("the document was asked for %d times, want %d (until it lists the CRD)", docs.Load(), tc.complete)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("warmOpenAPI error = %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

// The seeds and the port locks are the machine's, in the user's cache folder, whatever TMPDIR says (regression: they
// were under TMPDIR, which UseScratch points into a folder removed at the end of each test process).
func TestSeedsDirIgnoresTMPDIR(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	want := filepath.Join(cache, "kof-etcd-seeds")
	if got := SeedsDir(); got != want {
		t.Fatalf("SeedsDir() = %s, want %s", got, want)
	}
	dir, end, err := UseScratch("seeds-dir-test")
	if err != nil {
		t.Fatal(err)
	}
	defer end(0)
	if os.TempDir() != dir {
		t.Fatalf("os.TempDir() = %s under UseScratch, want %s", os.TempDir(), dir)
	}
	if got := SeedsDir(); got != want {
		t.Fatalf("SeedsDir() under UseScratch = %s, want %s", got, want)
	}
	// The port locks too: a lock under the scratch folder would exclude no other process.
	addr, err := LoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	if _, err := os.Stat(filepath.Join(cache, "kof-ports", port)); err != nil {
		t.Errorf("LoopbackAddr() = %s under UseScratch: no lock file in %s: %v", addr, filepath.Join(cache, "kof-ports"), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kof-ports")); !os.IsNotExist(err) {
		t.Errorf("LoopbackAddr() under UseScratch made %s (%v); want the locks in the machine's folder only", filepath.Join(dir, "kof-ports"), err)
	}
}
