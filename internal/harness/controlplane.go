// Package harness installs KOF for real on a local control plane, with nothing but Go: a kube-apiserver and etcd
// from bin/ (controller-runtime envtest), the CRDs KOF uses, the repository's charts served as a Helm repository on
// loopback, Flux's real source-controller and helm-controller (bin/, built by ci/tools.sh) installing every KOF
// HelmRelease from it, a Helm SDK install of the umbrella chart, the kof-operator as a process reacting to real
// ClusterDeployments, and the fleet render fed with the operator's live objects. Demo runs the whole flow behind
// `make demo`; the pieces serve the end-to-end tests (tests/e2e).
//
// Sources: docs/design.md ("The system in one picture", "Data flow of kof render"); envtest facts (no
// controller-manager, strict field validation) in docs/design.md, "Testing against a real API server".
package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"kof.dev/kof/internal/proc"
)

// crdWait bounds the wait until the API server serves every installed CRD (about a hundred on a busy machine).
const crdWait = 3 * time.Minute

// ControlPlane is a running kube-apiserver and etcd with the KOF CRDs installed.
type ControlPlane struct {
	// Config reaches the API server with admin rights.
	Config *rest.Config
	// Client is a direct (uncached) client with the built-in kinds and CRDs in its scheme; other kinds are used as
	// unstructured objects.
	Client client.Client
	// Kubeconfig is the path of a kubeconfig file for the API server (for Helm and the operator process).
	Kubeconfig string
	// CRDs is the number of CRDs installed.
	CRDs int

	env *envtest.Environment
}

// ControlPlaneOptions says where the binaries and CRDs are.
type ControlPlaneOptions struct {
	// AssetsDir holds kube-apiserver and etcd (the repository's bin/, built by `make tools`).
	AssetsDir string
	// CRDDirs are folders of CRD YAML files (searched one level deep): operator/config/crd/bases and the
	// third-party CRDs generated into bin/crds/ by ci/crds.sh.
	CRDDirs []string
	// WorkDir receives the kubeconfig file; it must exist.
	WorkDir string
}

// CRDDirs returns the CRD folders of the repository at root: operator/config/crd/bases and every folder of
// bin/crds/ (generated from the upstream Go API types by `make crds`). It returns an error naming the folder and the
// fix when one is missing.
func CRDDirs(root string) ([]string, error) {
	ours := filepath.Join(root, "operator", "config", "crd", "bases")
	if _, err := os.Stat(ours); err != nil {
		return nil, fmt.Errorf("KOF CRDs %q: %w", ours, err)
	}
	third := filepath.Join(root, "bin", "crds")
	entries, err := os.ReadDir(third)
	if err != nil {
		return nil, fmt.Errorf("third-party CRDs %q: %w; generate them with `make crds`", third, err)
	}
	dirs := []string{ours}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(third, e.Name()))
		}
	}
	sort.Strings(dirs[1:])
	if len(dirs) == 1 {
		return nil, fmt.Errorf("third-party CRDs %q: empty; generate them with `make crds`", third)
	}
	return dirs, nil
}

// Scheme returns the scheme of ControlPlane.Client: client-go's built-in kinds, apiextensions/v1 and KCM v1beta1
// (what the harness makes and reads for KCM's controller manager; every other kind, Flux's too, is read as
// unstructured). It returns an error if a group cannot be registered.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("add built-in kinds to scheme: %w", err)
	}
	adders := map[string]func(*runtime.Scheme) error{
		"apiextensions/v1": apiextensionsv1.AddToScheme,
		"KCM v1beta1":      kcmv1.AddToScheme,
	}
	for gv, add := range adders {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("add %s to scheme: %w", gv, err)
		}
	}
	return s, nil
}

// StartControlPlane starts kube-apiserver and etcd from opts.AssetsDir on loopback (each dies with this process:
// proc.Envtest), with every CRD of opts.CRDDirs stored (installed once per machine into an etcd seed that each start
// copies: proc.StartEnvtest) and served, and writes a kubeconfig into opts.WorkDir. On any error
// the half-started control plane is stopped again; the error names the assets folder and the fix.
func StartControlPlane(opts ControlPlaneOptions) (*ControlPlane, error) {
	s, err := Scheme()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:        opts.CRDDirs,
			Scheme:       s,
			MaxTime:      crdWait,
			PollInterval: 250 * time.Millisecond,
		},
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
	}
	assets := filepath.Join(opts.WorkDir, "control-plane-bin")
	cfg, err := proc.StartEnvtest(env, opts.AssetsDir, assets)
	if err != nil {
		_ = env.Stop() // a half-started etcd or kube-apiserver would keep running
		return nil, fmt.Errorf("start kube-apiserver and etcd from %q (run `make tools crds`): %w\n%s", opts.AssetsDir, err,
			proc.EnvtestLogs(assets, 20))
	}
	cp := &ControlPlane{Config: cfg, CRDs: len(env.CRDs), env: env}
	if err := cp.finish(s, opts.WorkDir); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func (cp *ControlPlane) finish(s *runtime.Scheme, workDir string) error {
	// Installs write a few hundred objects in bursts; client-side throttling would dominate the run time.
	cp.Config.QPS, cp.Config.Burst = 500, 1000
	c, err := client.New(cp.Config, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	cp.Client = c
	cp.Kubeconfig = filepath.Join(workDir, "kubeconfig")
	if err := os.WriteFile(cp.Kubeconfig, cp.env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// Stop stops kube-apiserver and etcd (nothing for the control plane of a Node, which the node stops). It returns
// the error of the stop, if any.
func (cp *ControlPlane) Stop() error {
	if cp.env == nil {
		return nil
	}
	if err := cp.env.Stop(); err != nil {
		return fmt.Errorf("stop control plane: %w", err)
	}
	return nil
}
