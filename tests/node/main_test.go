// Package node runs KOF's pods on a real single-node Kubernetes cluster (internal/harness Node): kubelet on
// containerd, kube-controller-manager, kube-scheduler, kube-proxy, kube-apiserver with Pod Security admission,
// inside namespaces of the test's own. One node serves every test of the package (started in TestMain); its start
// takes about 20 s warm on two busy cores, so the package's tests share it rather than start their own.
package node

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
)

// shared is the node every test uses.
var shared struct {
	node *harness.Node
	root string
}

func TestMain(m *testing.M) {
	os.Exit(harness.RunInNode("node", func() int { return run(m) }))
}

func run(m *testing.M) int {
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dirs, err := harness.CRDDirs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, err := harness.StartNode(context.Background(), harness.NodeOptions{Root: root, CRDDirs: dirs,
		Progress: func(format string, args ...any) {
			if testing.Verbose() {
				fmt.Printf(format+"\n", args...)
			}
		}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
		return 1
	}
	fmt.Printf("node: kube-apiserver ready %.1fs, node Ready %.1fs, CRDs served and pause image pushed %.1fs after "+
		"start\n", n.APIReady.Seconds(), n.Ready.Seconds(), time.Since(n.Started).Seconds())
	shared.node, shared.root = n, root
	tests := time.Now()
	code := m.Run()
	stop := time.Now()
	if err := n.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "node: stop: %v\n", err)
	}
	fmt.Printf("node: tests ran %.1fs, the node stopped in %.1fs\n", stop.Sub(tests).Seconds(),
		time.Since(stop).Seconds())
	return code
}
