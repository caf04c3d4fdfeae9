package testenv

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"kof.dev/kof/internal/proc"
)

// Main runs a test package against one control plane: it discards controller logs, starts the control plane,
// stores it in *env, calls setup (when not nil; a non-nil cleanup it returns runs after the tests), runs the tests
// and stops everything. It returns the exit code for os.Exit; a failure to start or set up is printed to stderr and
// gives 1. Use it as `func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env, nil)) }`.
func Main(m *testing.M, env **Env, setup func(*Env) (cleanup func(), err error)) (code int) {
	ctrl.SetLogger(logr.Discard())
	// Every temporary folder of the run (envtest's too) lives in one scratch folder, removed at the end or, after a
	// killed run, by the next one.
	_, removeScratch, err := proc.UseScratch("testenv")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { removeScratch(code) }()
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	*env = e
	if setup != nil {
		cleanup, err := setup(e)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	code = m.Run()
	return code
}
