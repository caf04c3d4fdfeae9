package promxyservergroup

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/internal/testenv"
)

// k8sClient talks directly (uncached) to the package's envtest API server.
var k8sClient client.Client

// env is the package's control plane.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, func(e *testenv.Env) (func(), error) {
		k8sClient = e.Client
		return nil, nil
	}))
}
