package promxyservergroup

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/internal/testenv"
)

// k8sClient talks directly (uncached) to the package's envtest API server.
var k8sClient client.Client

// env is the package's control plane.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run starts one real kube-apiserver + etcd for the whole package.
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
	k8sClient = env.Client
	return m.Run()
}
