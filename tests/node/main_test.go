// Package node runs KOF's pods on a real single-node Kubernetes cluster (internal/harness Node): kubelet on
// containerd, kube-controller-manager, kube-scheduler, kube-proxy, kube-apiserver with Pod Security admission,
// inside namespaces of the test's own. One node serves every test of the package (started in TestMain), and one
// Flux session the umbrella's test: starting either per test would cost more than the tests. Where the time goes,
// on two cores shared with other runs: the node is Ready in about 10 s and its 125 CRDs are served about a minute
// later (kube-apiserver's CPU), installed in the background while the tests that need none run (the exporters);
// the package's five images are built meanwhile (go build and the collector's 150 MB binary packed); the umbrella's
// install through Flux and the fleet's reconcile take most of the rest.
package node

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/internal/harness"
	"kof.dev/kof/release/image"
)

// shared is the node every test uses.
var shared struct {
	node *harness.Node
	root string
	// images are the images of the package's pods (nodeImages), built and pushed in the background.
	images map[string]*nodeImage
}

// imageVersion is the version (and tag) of every image the package builds.
const imageVersion = "0.0.0-node"

// nodeImages are the images of the package's pods, in the order they are built (the first test's first): KOF's
// binaries (cmd/<name>) built by the release code, and the programs of packedImages packed by it.
var nodeImages = []string{"cold-storage-exporter", "audit-logs-exporter", "victoria-metrics", "victoria-logs",
	"minio", "kof-operator", "kof-ui", "otelcol"}

// packedImages are the third-party programs ci/tools.sh builds into bin/ that the package runs in pods: KOF's
// OpenTelemetry Collector distribution, VictoriaMetrics, VictoriaLogs and MinIO.
var packedImages = map[string]bool{"otelcol": true, "victoria-metrics": true, "victoria-logs": true, "minio": true}

// nodeImage is one image of nodeImages: its reference `<registry>/kof/<name>:<imageVersion>@<digest>` once pushed
// to the node's registry, or the error of its build or push.
type nodeImage struct {
	done chan struct{}
	ref  string
	err  error
	took time.Duration // its build
}

// buildImages builds nodeImages one after the other (go build uses both cores by itself) while the node starts, and
// pushes each to the node's registry once the node is up (node receives it). It returns at once.
func buildImages(root string, node <-chan *harness.Node) map[string]*nodeImage {
	out := map[string]*nodeImage{}
	for _, name := range nodeImages {
		out[name] = &nodeImage{done: make(chan struct{})}
	}
	go func() {
		ctx := context.Background()
		var n *harness.Node
		for _, name := range nodeImages {
			ni := out[name]
			start := time.Now()
			var img *image.Image
			if packedImages[name] {
				img, ni.err = harness.BinaryImage(name, filepath.Join(root, "bin", name), imageVersion)
			} else {
				img, ni.err = harness.NodeImage(ctx, root, name, image.PackageOf(name), imageVersion)
			}
			ni.took = time.Since(start)
			if n == nil {
				n = <-node
			}
			if ni.err == nil && n != nil {
				var ref string
				ref, ni.err = n.Push(ctx, img)
				repo, digest, _ := strings.Cut(ref, "@")
				ni.ref = repo + ":" + imageVersion + "@" + digest
			} else if n == nil {
				ni.err = errors.New("the node did not start")
			}
			close(ni.done)
		}
	}()
	return out
}

// imageRef waits for the image name of nodeImages and returns its reference; a failed build or push fails the test.
func imageRef(t *testing.T, name string) string {
	t.Helper()
	ni, ok := shared.images[name]
	if !ok {
		t.Fatalf("no image %s among the node's images %v", name, nodeImages)
	}
	<-ni.done
	if ni.err != nil {
		t.Fatalf("image %s: %v", name, ni.err)
	}
	return ni.ref
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
	// The images are built while the node starts and pushed once it is up.
	started := make(chan *harness.Node, 1)
	shared.images = buildImages(root, started)
	imagesStart := time.Now()
	n, err := harness.StartNode(context.Background(), harness.NodeOptions{Root: root, CRDDirs: dirs,
		Progress: func(format string, args ...any) {
			if testing.Verbose() {
				fmt.Printf(format+"\n", args...)
			}
		}})
	started <- n
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
		return 1
	}
	fmt.Printf("node: kube-apiserver ready %.1fs, node Ready %.1fs, pause image pushed %.1fs after start (the "+
		"CRDs are installed in the background)\n", n.APIReady.Seconds(), n.Ready.Seconds(),
		time.Since(n.Started).Seconds())
	shared.node, shared.root = n, root
	go func() {
		var each []string
		for _, name := range nodeImages {
			<-shared.images[name].done
			each = append(each, fmt.Sprintf("%s %.1fs", name, shared.images[name].took.Seconds()))
		}
		fmt.Printf("node: %d images built and pushed %.1fs after the start of their build (builds: %s)\n", len(nodeImages),
			time.Since(imagesStart).Seconds(), strings.Join(each, ", "))
	}()
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

// TestPackedImagesAreStaticTools fails when a program of packedImages is not marked STATIC=1 in its ci/tools/
// script: ci/tools.sh then builds it without cgo and checks its build settings, so a tool moved into a cgo build
// (VictoriaLogs once was, and its image then needed the machine's C library) fails when it is built, not here.
func TestPackedImagesAreStaticTools(t *testing.T) {
	for name := range packedImages {
		b, err := os.ReadFile(filepath.Join(shared.root, "ci", "tools", name+".sh"))
		if err != nil {
			t.Fatalf("image %s: %v", name, err)
		}
		if !strings.Contains("\n"+string(b), "\nSTATIC=1\n") {
			t.Errorf("ci/tools/%s.sh lacks a STATIC=1 line: the tests pack %s into an image, so it must be built without cgo", name, name)
		}
	}
}
