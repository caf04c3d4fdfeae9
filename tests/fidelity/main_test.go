package fidelity

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// env is what every test of the package shares (started in TestMain): the repositories and the proxy, which
// only serve or refuse. Each test starts the control planes and controllers it replays against (a cell).
type env struct {
	root, work string
	bin        string
	crds       []string
	// charts serves KOF's charts; kcmCharts stands in for KCM's template registry: it serves the charts of KCM's
	// components (harness.KCMStandInCharts), the source of the HelmRepository KCM makes for its templates.
	charts, kcmCharts *harness.ChartRepository
	proxy             *harness.Proxy
	// cells are the cells asked for, by name (goCell); queue holds the names of those not started yet, which one
	// goroutine starts one after the other from the front (runStarts; wake tells it of a new one); stopping makes
	// it start no more. stop stops every cell its test did not.
	mu       sync.Mutex
	cells    map[string]*pendingCell
	queue    []string
	wake     chan struct{}
	stopping bool
}

// pendingCell is a cell asked for (goCell); done is closed once it started or failed.
type pendingCell struct {
	managed bool
	done    chan struct{}
	c       *cell
	err     error
}

// cell is one management cluster with the programs that run against it, and the API servers that play its
// managed clusters: a scenario's replay has a cell of its own, so the scenarios run side by side.
type cell struct {
	work     string
	stopOnce sync.Once
	stopErr  error
	// mgmt is the management cluster; remotes are the API servers that play the managed clusters, by role (none
	// in a cell that only judges templates).
	mgmt    *harness.ControlPlane
	remotes map[string]*harness.ControlPlane
	// addon is Sveltos' addon-controller (nil in a cell that only judges templates); flux (source-controller,
	// helm-controller) and kcm, KCM's controller manager, run against the management cluster: KCM judges KOF's
	// ServiceTemplates from the charts source-controller fetches.
	addon *harness.Process
	flux  *harness.FluxControllers
	kcm   *harness.Process
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
		fmt.Fprintf(os.Stderr, "fidelity: kept %s (kubeconfigs, controller logs)\n", e.work)
	}
	return code
}

// start checks the binaries, serves KOF's charts and the stand-in of KCM's template registry, and starts the
// proxy that refuses every outside address.
func start() (*env, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "kof-fidelity-")
	if err != nil {
		return nil, err
	}
	e := &env{root: root, work: work, bin: filepath.Join(root, "bin")}
	for _, b := range []string{AddonController, harness.KCM} {
		if _, err := os.Stat(filepath.Join(e.bin, b)); err != nil {
			return e, fmt.Errorf("%s: %w; build it with `make tools`", b, err)
		}
	}
	if e.crds, err = harness.CRDDirs(root); err != nil {
		return e, err
	}
	// The registry serves the component stand-ins only (no chart folder of its own: noCharts is empty).
	repo, registry, noCharts := filepath.Join(work, "chart-repository"), filepath.Join(work, "kcm-templates"),
		filepath.Join(work, "kcm-templates-sources")
	for _, d := range []string{repo, registry, noCharts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return e, err
		}
	}
	if e.charts, err = harness.ServeCharts(filepath.Join(root, "charts"), repo); err != nil {
		return e, err
	}
	if e.kcmCharts, err = harness.ServeCharts(noCharts, registry, harness.KCMStandInCharts()...); err != nil {
		return e, err
	}
	if e.proxy, err = harness.StartProxy(); err != nil {
		return e, err
	}
	e.cells, e.wake = map[string]*pendingCell{}, make(chan struct{}, 1)
	go e.runStarts()
	return e, nil
}

// templatesCell names the cell TestKCMJudgesServiceTemplates judges templates in.
const templatesCell = "templates"

// goCell asks for the cell name (startCell) unless it was asked for already. Cells start one after the other, in
// the order asked for (first moves one not started yet to the front): a cell's start (three API servers installing
// every CRD) takes most of what two cores give, while a scenario's replay mostly waits for KCM's and Sveltos'
// requeues, so the next cell starts while the previous one replays.
func (e *env) goCell(name string, managed, first bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cells[name] == nil {
		e.cells[name] = &pendingCell{managed: managed, done: make(chan struct{})}
		e.queue = append(e.queue, name)
	}
	if i := slices.Index(e.queue, name); first && i > 0 {
		e.queue = append([]string{name}, slices.Delete(e.queue, i, i+1)...)
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// runStarts starts the cells of the queue from its front, one at a time, until stop; a cell asked for after stop
// began is not started (its error says so).
func (e *env) runStarts() {
	for range e.wake {
		for {
			e.mu.Lock()
			if len(e.queue) == 0 {
				e.mu.Unlock()
				break
			}
			name := e.queue[0]
			e.queue = e.queue[1:]
			p, stopping := e.cells[name], e.stopping
			e.mu.Unlock()
			if stopping {
				p.err = errors.New("the package's tests ended before the cell started")
			} else {
				p.c, p.err = e.startCell(name, p.managed)
			}
			close(p.done)
		}
	}
}

// stop stops every cell still running, the proxy and the repositories. It returns every stop error.
func (e *env) stop() error {
	var errs []error
	e.mu.Lock()
	e.stopping = true
	pending := maps.Clone(e.cells)
	if e.wake != nil {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
	e.mu.Unlock()
	for _, p := range pending {
		<-p.done
		if p.c != nil {
			errs = append(errs, p.c.stop())
		}
	}
	if e.proxy != nil {
		errs = append(errs, e.proxy.Stop())
	}
	for _, r := range []*harness.ChartRepository{e.charts, e.kcmCharts} {
		if r != nil {
			errs = append(errs, r.Stop())
		}
	}
	return errors.Join(errs...)
}

// useCell returns the cell name for t, asked for by goCell (now, unless asked for before; first in the queue
// unless it started), and stops it when t ends (the control planes are thrown away with everything the test
// created in them). With managed, the cell has one remote API server per managed-cluster role (regional, child),
// addon-controller, and KCM's components deployed (harness.WaitKCM: KCM then runs its
// MultiClusterService controller); without, it is the management cluster with Flux and KCM, whose template
// controllers run from KCM's start. The management API server starts first, the remote ones beside it; as soon
// as it is up the objects KCM's controllers wait for (harness.KCMBootstrap), Flux, KCM and addon-controller start
// against it, and KCM installs its components while the remote API servers start. It fails t on any error.
func useCell(t *testing.T, name string, managed bool) *cell {
	t.Helper()
	shared.goCell(name, managed, true)
	shared.mu.Lock()
	p := shared.cells[name]
	shared.mu.Unlock()
	<-p.done
	if p.c == nil {
		t.Fatalf("cell %s: %v", name, p.err)
	}
	t.Cleanup(func() {
		if err := p.c.stop(); err != nil {
			t.Errorf("stop cell %s: %v", name, err)
		}
	})
	if p.err != nil {
		t.Fatalf("cell %s: %v (kept in %s)", name, p.err, p.c.work)
	}
	return p.c
}

// startCell starts the cell useCell describes in a folder of its own; the cell returned with an error holds what
// started, for stop.
func (e *env) startCell(name string, managed bool) (*cell, error) {
	c := &cell{work: filepath.Join(e.work, name), remotes: map[string]*harness.ControlPlane{}}
	names := []string{"mgmt"}
	if managed {
		names = append(names, "regional", "child")
	}
	type started struct {
		cp  *harness.ControlPlane
		err error
	}
	results := make([]chan started, len(names))
	for i, n := range names {
		results[i] = make(chan started, 1)
		go func() {
			dir := filepath.Join(c.work, n)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				results[i] <- started{err: err}
				return
			}
			crds := e.crds
			if n != "mgmt" {
				crds = withoutFlux(e.crds)
			}
			cp, err := harness.StartControlPlane(harness.ControlPlaneOptions{AssetsDir: e.bin, CRDDirs: crds,
				WorkDir: dir})
			results[i] <- started{cp, err}
		}()
	}
	var errs []error
	collect := func(i int) {
		r := <-results[i]
		if r.err != nil {
			errs = append(errs, fmt.Errorf("%s API server: %w", names[i], r.err))
			return
		}
		if names[i] == "mgmt" {
			c.mgmt = r.cp
		} else {
			c.remotes[names[i]] = r.cp
		}
	}
	// remotes collects the remote API servers, so that stop finds every one that started.
	remotes := func() error {
		for i := 1; i < len(names); i++ {
			collect(i)
		}
		return errors.Join(errs...)
	}
	if collect(0); c.mgmt == nil {
		return c, remotes()
	}
	if err := c.startControllers(e, managed); err != nil {
		return c, errors.Join(err, remotes())
	}
	if err := remotes(); err != nil || !managed {
		return c, err
	}
	// KCM installs its stand-in components through Flux one after the other before it starts its
	// MultiClusterService controller.
	return c, harness.WaitKCM(context.Background(), c.mgmt.Client, kcmWait, c.kcm)
}

// startControllers starts, against the cell's management cluster, the objects KCM's controllers wait for, Flux's
// controllers, KCM and, with managed, addon-controller.
func (c *cell) startControllers(e *env, managed bool) error {
	var err error
	if err := harness.KCMBootstrap(context.Background(), c.mgmt.Client); err != nil {
		return err
	}
	if c.flux, err = harness.StartFlux(e.bin, c.mgmt.Kubeconfig, c.work, e.proxy); err != nil {
		return err
	}
	if c.kcm, err = harness.StartKCM(e.bin, c.mgmt.Kubeconfig, c.work, e.kcmCharts.URL, e.proxy); err != nil {
		return err
	}
	if !managed {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sveltosNamespace}}
	if err := c.mgmt.Client.Create(context.Background(), ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", sveltosNamespace, err)
	}
	webhook, err := proc.LoopbackAddr()
	if err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(webhook)
	c.addon, err = harness.StartProcess(AddonController, filepath.Join(e.bin, AddonController), c.mgmt.Kubeconfig,
		[]string{"--disable-telemetry", "--diagnostics-address=0", "--insecure-diagnostics", "--health-addr=0",
			"--webhook-port=" + port, "--concurrent-reconciles=4", "--worker-number=4", "--agent-in-mgmt-cluster=false",
			"--conflict-retry-time=5s", "--health-error-retry-time=5s"},
		e.proxy.Env(), filepath.Join(c.work, AddonController+".log"))
	return err
}

// kcmWait bounds the wait for KCM's Management to report its components deployed.
const kcmWait = 3 * time.Minute

// stop stops KCM, the Flux controllers, addon-controller and every API server of the cell that runs, once (later
// calls return the first call's result). It returns every stop error.
func (c *cell) stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stopAll() })
	return c.stopErr
}

func (c *cell) stopAll() error {
	var errs []error
	if c.kcm != nil {
		errs = append(errs, c.kcm.Stop())
	}
	if c.flux != nil {
		errs = append(errs, c.flux.Stop())
	}
	if c.addon != nil {
		errs = append(errs, c.addon.Stop())
	}
	for _, cp := range append([]*harness.ControlPlane{c.mgmt}, c.remotes["regional"], c.remotes["child"]) {
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
