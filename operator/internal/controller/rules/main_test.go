package rules

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"kof.dev/kof/operator/internal/testenv"
)

// env is the package's real kube-apiserver + etcd with the KOF and VictoriaMetrics CRDs.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run starts one control plane for the whole package.
func run(m *testing.M) int {
	ctrl.SetLogger(logr.Discard())
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return m.Run()
}
