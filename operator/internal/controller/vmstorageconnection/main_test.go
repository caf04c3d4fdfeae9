package vmstorageconnection

import (
	"os"
	"testing"

	"kof.dev/kof/operator/internal/testenv"
)

// env is the package's real kube-apiserver + etcd with the KOF and VictoriaMetrics CRDs.
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env, nil)) }
