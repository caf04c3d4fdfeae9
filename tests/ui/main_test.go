// Package ui tests `kof doctor`, `kof ui` and the in-cluster kof-ui against the demo control plane: KOF installed
// from scenario 01 plus a child without a regional cluster (internal/harness), read by the real binaries, the UI
// driven by a real browser (Debian's chromium through chromedp).
package ui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/proc"
)

// operatorWait bounds the wait for the kof-operator's objects.
const operatorWait = 90 * time.Second

// env is what every test of the package shares (set by TestMain).
type env struct {
	root, work string
	session    *harness.Session
	install    *harness.Installation
	// kof and kofUI are the built binaries.
	kof, kofUI string
}

var shared *env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	// Every temporary folder of the run (envtest's too) lives in one scratch folder, removed at the end or, after a
	// killed run, by the next one.
	_, removeScratch, err := proc.UseScratch("ui")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { removeScratch(code) }()
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	e, err := setup()
	if e != nil && e.work != "" {
		defer os.RemoveAll(e.work)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ui:", err)
		if e != nil {
			teardown(e)
		}
		return 1
	}
	shared = e
	code = m.Run()
	if err := teardown(e); err != nil {
		fmt.Fprintln(os.Stderr, "ui:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// setup starts the control plane, builds the binaries, installs scenario 01 with the broken child and waits for
// the operator's objects.
func setup() (*env, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	e := &env{root: root}
	if e.work, err = os.MkdirTemp("", "kof-ui-test-"); err != nil {
		return nil, err
	}
	ctx := context.Background()
	built := make(chan error, 1)
	go func() { built <- e.build(ctx) }()
	e.session, err = harness.StartSession(ctx, harness.SessionOptions{Root: root, WorkDir: e.work, Progress: progress})
	if err != nil {
		return e, errors.Join(err, <-built)
	}
	if err := <-built; err != nil {
		return e, err
	}
	progress("built kof and kof-ui")
	if err := e.installScenario(ctx, "01-regional-child", filepath.Join("testdata", "child-3.yaml")); err != nil {
		return e, err
	}
	progress("scenario 01 installed with child-3")
	return e, nil
}

// installScenario installs scenario name (uninstalling the one before), waits for every object the operator must
// make, then creates the objects of the extra files.
func (e *env) installScenario(ctx context.Context, name string, extra ...string) error {
	if e.install != nil {
		if err := e.install.Uninstall(ctx); err != nil {
			return fmt.Errorf("uninstall %s: %w", e.install.Scenario.Name, err)
		}
		e.install = nil
	}
	sc, err := harness.LoadScenario(filepath.Join(e.root, "tests", "scenarios", "testdata"), name)
	if err != nil {
		return err
	}
	in, err := e.session.Install(ctx, sc, nil)
	e.install = in
	if err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	waited, err := in.WaitOperator(ctx, operatorWait)
	if err != nil {
		return err
	}
	for _, w := range waited {
		if !w.Found {
			return fmt.Errorf("scenario %s: the kof-operator made no %s within %s", name, w, operatorWait)
		}
	}
	for _, f := range extra {
		if err := e.create(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// create creates every object of the YAML file path with strict field validation.
func (e *env) create(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	docs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := e.session.ControlPlane.Client.Create(ctx, d.Unstructured, client.FieldValidation("Strict")); err != nil {
			return fmt.Errorf("create %s from %s: %w", d.GetName(), path, err)
		}
	}
	return nil
}

// build builds kof and kof-ui into the work folder (proc.BuildProgram: each linked once per machine and change), the
// two at once.
func (e *env) build(ctx context.Context) error {
	var g errgroup.Group
	g.Go(func() (err error) { e.kof, err = proc.BuildProgram(ctx, e.root, "./tools/kof", e.work); return err })
	g.Go(func() (err error) { e.kofUI, err = proc.BuildProgram(ctx, e.root, "./cmd/kof-ui", e.work); return err })
	return g.Wait()
}

func teardown(e *env) error {
	var errs []error
	if e.install != nil {
		errs = append(errs, e.install.Stop())
	}
	if e.session != nil {
		errs = append(errs, e.session.Close())
	}
	return errors.Join(errs...)
}

// started is when the package's tests started, for the progress lines.
var started = time.Now()

func progress(format string, args ...any) {
	if testing.Verbose() {
		fmt.Printf("ui: [%5.1fs] "+format+"\n", append([]any{time.Since(started).Seconds()}, args...)...)
	}
}
