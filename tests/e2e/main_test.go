// Package e2e installs KOF for real on one local control plane (kube-apiserver and etcd from bin/) shared by every
// test of the package: the umbrella chart through the Helm SDK, the components through Flux's real
// source-controller and helm-controller (from the repository's charts served on loopback), the kof-operator as a process reacting to real ClusterDeployments (internal/harness). The tests run one after the
// other on that control plane, each installing a scenario, asserting on the API server's contents, upgrading and
// uninstalling it again.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/proc"
)

// env is the control plane every test of the package uses (started in TestMain).
type env struct {
	session      *harness.Session
	scenariosDir string
}

// operatorWait bounds every wait for the kof-operator's objects.
const operatorWait = 90 * time.Second

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	flag.Parse() // testing.Verbose below needs the test flags
	// Every temporary folder of the run (envtest's too) lives in one scratch folder, removed at the end or, after a
	// killed run, by the next one.
	_, removeScratch, err := proc.UseScratch("e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { removeScratch(code) }()
	ctrllog.SetLogger(logr.Discard()) // the control plane helpers log through controller-runtime
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	work, err := os.MkdirTemp("", "kof-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)
	s, err := harness.StartSession(context.Background(), harness.SessionOptions{Root: root, WorkDir: work,
		Progress: func(format string, args ...any) {
			if testing.Verbose() {
				fmt.Printf("e2e: "+format+"\n", args...)
			}
		}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	shared = &env{session: s, scenariosDir: filepath.Join(root, "tests", "scenarios", "testdata")}
	code = m.Run()
	if err := stopReleases(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
