package promxyservergroup

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// k8sClient talks directly (uncached) to the package's envtest API server.
var k8sClient client.Client

// repoRoot returns the repository root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run starts one real kube-apiserver + etcd (binaries from bin/) with the KOF CRDs for the whole package.
func run(m *testing.M) int {
	root := repoRoot()
	env := &envtest.Environment{
		BinaryAssetsDirectory: filepath.Join(root, "bin"),
		CRDDirectoryPaths:     []string{filepath.Join(root, "operator", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop envtest:", err)
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start envtest (run ci/tools.sh for bin/kube-apiserver and bin/etcd):", err)
		return 1
	}
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := kofv1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	return m.Run()
}
