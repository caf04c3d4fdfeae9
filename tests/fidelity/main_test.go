package fidelity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/proc"
)

// AddonController is the binary of Sveltos' addon-controller in bin/ (ci/tools/addon-controller.sh).
const AddonController = "addon-controller"

// sveltosNamespace is the namespace addon-controller keeps its own objects in.
const sveltosNamespace = "projectsveltos"

// env is what every test of the package shares (started in TestMain).
type env struct {
	root, work string
	// mgmt is the management cluster; remotes are the API servers that play the managed clusters, by role.
	mgmt    *harness.ControlPlane
	remotes map[string]*harness.ControlPlane
	charts  *harness.ChartRepository
	proxy   *harness.Proxy
	addon   *harness.Process
	// flux (source-controller, helm-controller) and kcm, KCM's controller manager, run against the management
	// cluster: KCM judges KOF's ServiceTemplates from the charts source-controller fetches.
	flux *harness.FluxControllers
	kcm  *harness.Process
}

var shared *env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	// Every temporary folder of the run (envtest's too) lives in one scratch folder, removed at the end or, after a
	// killed run, by the next one.
	_, removeScratch, err := proc.UseScratch("fidelity")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { removeScratch(code) }()
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	e, err := start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity: %v\n", err)
		if e != nil {
			_ = e.stop()
		}
		return 1
	}
	shared = e
	code = m.Run()
	if err := e.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "fidelity: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code == 0 {
		_ = os.RemoveAll(e.work)
	} else {
		fmt.Fprintf(os.Stderr, "fidelity: kept %s (kubeconfigs, addon-controller log)\n", e.work)
	}
	return code
}

// start starts the management API server and one remote API server per managed-cluster role (regional, child) at
// once, serves the charts, and starts addon-controller, Flux's source-controller and helm-controller and KCM
// against the management cluster (with the objects KCM's controllers wait for: harness.KCMBootstrap), and waits
// until KCM runs its MultiClusterService controller.
func start() (*env, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "kof-fidelity-")
	if err != nil {
		return nil, err
	}
	e := &env{root: root, work: work, remotes: map[string]*harness.ControlPlane{}}
	bin := filepath.Join(root, "bin")
	for _, b := range []string{AddonController, harness.KCM} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return e, fmt.Errorf("%s: %w; build it with `make tools`", b, err)
		}
	}
	dirs, err := harness.CRDDirs(root)
	if err != nil {
		return e, err
	}
	names := []string{"mgmt", "regional", "child"}
	type started struct {
		cp  *harness.ControlPlane
		err error
	}
	results := make([]chan started, len(names))
	for i, n := range names {
		results[i] = make(chan started, 1)
		go func() {
			dir := filepath.Join(work, n)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				results[i] <- started{err: err}
				return
			}
			crds := dirs
			if n != "mgmt" {
				crds = withoutFlux(dirs)
			}
			cp, err := harness.StartControlPlane(harness.ControlPlaneOptions{AssetsDir: bin, CRDDirs: crds, WorkDir: dir})
			results[i] <- started{cp, err}
		}()
	}
	var errs []error
	for i, n := range names {
		r := <-results[i]
		if r.err != nil {
			errs = append(errs, fmt.Errorf("%s API server: %w", n, r.err))
			continue
		}
		if n == "mgmt" {
			e.mgmt = r.cp
		} else {
			e.remotes[n] = r.cp
		}
	}
	if len(errs) > 0 {
		return e, errors.Join(errs...)
	}
	repoDir := filepath.Join(work, "chart-repository")
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		return e, err
	}
	if e.charts, err = harness.ServeCharts(filepath.Join(root, "charts"), repoDir, harness.KCMStandInCharts()...); err != nil {
		return e, err
	}
	if e.proxy, err = harness.StartProxy(); err != nil {
		return e, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sveltosNamespace}}
	if err := e.mgmt.Client.Create(context.Background(), ns); err != nil {
		return e, fmt.Errorf("create namespace %s: %w", sveltosNamespace, err)
	}
	webhook, err := harness.FreePort()
	if err != nil {
		return e, err
	}
	_, port, _ := net.SplitHostPort(webhook)
	e.addon, err = harness.StartProcess(AddonController, filepath.Join(bin, AddonController), e.mgmt.Kubeconfig,
		[]string{"--disable-telemetry", "--diagnostics-address=0", "--insecure-diagnostics", "--health-addr=0",
			"--webhook-port=" + port, "--concurrent-reconciles=4", "--worker-number=4", "--agent-in-mgmt-cluster=false",
			"--conflict-retry-time=5s", "--health-error-retry-time=5s"},
		e.proxy.Env(), filepath.Join(work, AddonController+".log"))
	if err != nil {
		return e, err
	}
	if err := harness.KCMBootstrap(context.Background(), e.mgmt.Client); err != nil {
		return e, err
	}
	if e.flux, err = harness.StartFlux(bin, e.mgmt.Kubeconfig, work, e.proxy); err != nil {
		return e, err
	}
	if e.kcm, err = harness.StartKCM(bin, e.mgmt.Kubeconfig, work, e.charts.URL, e.proxy); err != nil {
		return e, err
	}
	// KCM installs its stand-in components through Flux one after the other before it starts its
	// MultiClusterService controller.
	return e, harness.WaitKCM(context.Background(), e.mgmt.Client, kcmWait, e.kcm)
}

// kcmWait bounds the wait for KCM's Management to report its components deployed.
const kcmWait = 3 * time.Minute

// stop stops KCM, the Flux controllers, addon-controller, the servers and every API server that runs. It returns every stop error.
func (e *env) stop() error {
	var errs []error
	if e.kcm != nil {
		errs = append(errs, e.kcm.Stop())
	}
	if e.flux != nil {
		errs = append(errs, e.flux.Stop())
	}
	if e.addon != nil {
		errs = append(errs, e.addon.Stop())
	}
	if e.proxy != nil {
		errs = append(errs, e.proxy.Stop())
	}
	if e.charts != nil {
		errs = append(errs, e.charts.Stop())
	}
	for _, cp := range append([]*harness.ControlPlane{e.mgmt}, e.remotes["regional"], e.remotes["child"]) {
		if cp != nil {
			errs = append(errs, cp.Stop())
		}
	}
	return errors.Join(errs...)
}

// withoutFlux returns dirs without the Flux CRD folders: a managed cluster runs no Flux, and charts that render
// Flux objects when the cluster serves helm.toolkit.fluxcd.io/v2 (kof-operators' `auto` mode) must see it as a
// real managed cluster does.
func withoutFlux(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !strings.Contains(filepath.Base(d), "fluxcd") {
			out = append(out, d)
		}
	}
	return out
}
