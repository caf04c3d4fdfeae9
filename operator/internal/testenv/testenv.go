// Package testenv starts one real kube-apiserver and etcd (controller-runtime envtest) for a test package, with the
// KOF CRDs from operator/config/crd/bases and the third-party CRDs generated into bin/crds/ (KCM, VictoriaMetrics,
// Sveltos, prometheus-operator, Flux, cert-manager, ...). Call Start from TestMain and Stop when the tests end.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"kof.dev/kof/internal/proc"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/scheme"
)

// Env is a running test control plane.
type Env struct {
	// Config reaches the apiserver with admin rights.
	Config *rest.Config
	// Scheme is the operator's scheme (scheme.New).
	Scheme *runtime.Scheme
	// Client is a direct (uncached) client of the apiserver.
	Client client.Client

	env    *envtest.Environment
	assets string
}

// RepoRoot returns the directory holding go.mod, searching upwards from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("get working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// thirdPartyGroups are the bin/crds/ folders (Go import paths with '/' and '.' as '_') whose CRDs the operator
// reads or writes: KCM, VictoriaMetrics operator, Sveltos and prometheus-operator.
func thirdPartyGroups() []string {
	return []string{
		"github_com_K0rdent_kcm_api_v1beta1",
		"github_com_VictoriaMetrics_operator_api_operator_v1",
		"github_com_VictoriaMetrics_operator_api_operator_v1beta1",
		"github_com_projectsveltos_libsveltos_api_v1beta1",
		"github_com_projectsveltos_addon-controller_api_v1beta1",
		"github_com_prometheus-operator_prometheus-operator_pkg_apis_monitoring_v1",
	}
}

// crdDirs returns operator/config/crd/bases and the bin/crds/ folders of thirdPartyGroups.
func crdDirs(root string) ([]string, error) {
	dirs := []string{filepath.Join(root, "operator", "config", "crd", "bases")}
	third := filepath.Join(root, "bin", "crds")
	if _, err := os.Stat(third); err != nil {
		return nil, fmt.Errorf("third-party CRDs %s: %w; generate them with `make crds` (ci/crds.sh)", third, err)
	}
	for _, g := range thirdPartyGroups() {
		d := filepath.Join(third, g)
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("third-party CRDs %s: %w; generate them with `make crds` (ci/crds.sh)", d, err)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// CRDWait bounds the wait until the API server serves every installed CRD.
const CRDWait = 3 * time.Minute

// Start starts kube-apiserver and etcd from KUBEBUILDER_ASSETS (default: the repository's bin/) and installs the
// CRDs. It returns an error when the shipped operator configuration (OperatorConfig) does not load, the binaries or
// CRDs are missing or the control plane does not start; the control plane is stopped again in that case.
func Start() (*Env, error) {
	if _, err := config.Shipped(); err != nil {
		return nil, fmt.Errorf("the shipped operator configuration the tests run with: %w", err)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if err := os.Setenv("KUBEBUILDER_ASSETS", filepath.Join(root, "bin")); err != nil {
			return nil, fmt.Errorf("set KUBEBUILDER_ASSETS: %w", err)
		}
	}
	dirs, err := crdDirs(root)
	if err != nil {
		return nil, err
	}
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	assets, err := os.MkdirTemp("", "kof-testenv-bin-")
	if err != nil {
		return nil, fmt.Errorf("create the control plane's program folder: %w", err)
	}
	e := &envtest.Environment{
		CRDDirectoryPaths: dirs,
		// envtest's default wait for the CRDs to be served (10 s) is too short on a busy machine; a CRD not served
		// yet is still pending, so the wait is as long as the harness's.
		CRDInstallOptions:     envtest.CRDInstallOptions{MaxTime: CRDWait, PollInterval: 250 * time.Millisecond},
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
	}
	// etcd and kube-apiserver die with the test binary; the CRDs come with etcd's data (proc.StartEnvtest).
	cfg, err := proc.StartEnvtest(e, "", assets)
	if err != nil {
		_ = e.Stop() // always stop: a half-started etcd or apiserver would keep running
		logs := proc.EnvtestLogs(assets, 20)
		_ = os.RemoveAll(assets)
		return nil, fmt.Errorf("start envtest (KUBEBUILDER_ASSETS=%s): %w\n%s", os.Getenv("KUBEBUILDER_ASSETS"), err, logs)
	}
	// The benchmark and large tests write thousands of objects; the default client limits would dominate timings.
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = e.Stop()
		_ = os.RemoveAll(assets)
		return nil, fmt.Errorf("create client: %w", err)
	}
	return &Env{Config: cfg, Scheme: s, Client: c, env: e, assets: assets}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	defer os.RemoveAll(e.assets)
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("stop envtest: %w", err)
	}
	return nil
}

// KubeConfig returns a kubeconfig file's bytes reaching the apiserver with admin rights, for a process of its own.
func (e *Env) KubeConfig() []byte { return e.env.KubeConfig }
