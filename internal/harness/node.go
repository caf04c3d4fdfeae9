package harness

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"kof.dev/kof/release/image"
)

// Facts of the node's control plane and programs.
const (
	// NodeName is the node's name (its kubelet's --hostname-override).
	NodeName = "kof-node"
	// apiServerPort is kube-apiserver's secure port on the node IP.
	apiServerPort = 6443
	// NodeRegistry is the CNCF distribution registry inside the node's network namespace, plain HTTP on loopback:
	// images are pushed to it and containerd pulls them from it.
	NodeRegistry = "127.0.0.1:5000"
	// NodePauseImage is the sandbox image containerd starts first in every pod (internal/harness/pause).
	NodePauseImage = NodeRegistry + "/kof/pause:node"
	// pausePackage is its Go package, relative to the module root.
	pausePackage = "./internal/harness/pause"
	// nodeStartWait bounds the start of the node (kube-apiserver ready, the node Ready).
	nodeStartWait = 3 * time.Minute
)

// NodePrograms are the programs of bin/ the node starts (ci/tools.sh builds them; targets.tsv rows of `test`).
var NodePrograms = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy",
	"kubelet", "registry"}

// nodeSystemPrograms are the node's programs Debian is the only source of here (ci/node.sh installs them).
var nodeSystemPrograms = []string{"containerd", "containerd-shim-runc-v2", "runc", "iptables-restore"}

// cniDir is Debian's folder of the CNI plugins (containernetworking-plugins).
const cniDir = "/usr/lib/cni"

// Node is a single-node Kubernetes cluster running inside the namespaces of RunInNode: etcd, kube-apiserver (with
// the Node and RBAC authorizers and Pod Security admission), kube-controller-manager, kube-scheduler, kube-proxy
// (iptables mode) and a kubelet on Debian's containerd and runc, pods on a CNI bridge, and a registry the node pulls
// its images from. Every program is a child of this process (proc.DieWithParent) and every file lives in the scratch
// folder of RunInNode.
type Node struct {
	// Config reaches the API server with admin rights (system:masters).
	Config *rest.Config
	// Client is a direct client with the built-in kinds and CRDs (Scheme).
	Client client.Client
	// Kubeconfig is the admin kubeconfig file (for Helm and kubectl inside the namespaces).
	Kubeconfig string
	// Dir is the node's scratch folder.
	Dir string
	// CRDs is the number of CRDs installed from NodeOptions.CRDDirs.
	CRDs int
	// Started is when StartNode began; APIReady, Ready and CRDsServed how long after that kube-apiserver answered
	// /readyz, the node reported Ready and the CRDs were served (WaitCRDs).
	Started                     time.Time
	APIReady, Ready, CRDsServed time.Duration
	procs                       []*Process
	root, binDir, pki           string
	crds                        chan struct{} // closed when the CRD install has ended
	crdErr                      error
}

// NodeOptions configures StartNode.
type NodeOptions struct {
	// Root is the module root (the pause image is built from it).
	Root string
	// BinDir holds NodePrograms; empty means Root/bin.
	BinDir string
	// CRDDirs are folders of CRDs to install once the API server is up (CRDDirs(Root) for KOF's), in the
	// background (Node.WaitCRDs); nil installs none.
	CRDDirs []string
	// Progress receives one line per step; nil discards them.
	Progress func(format string, args ...any)
}

// StartNode starts the node inside the namespaces of RunInNode and returns once kube-apiserver is ready, the node
// Ready without its not-ready taint, the `default` ServiceAccount made and the pause image pushed; opts.CRDDirs are
// installed after that, in the background (Node.WaitCRDs). Errors name the program (with the tail of its
// log) or the step and the fix (`bash ci/node.sh`, `make tools`); whatever started is stopped again then.
func StartNode(ctx context.Context, opts NodeOptions) (*Node, error) {
	dir, ok := InNode()
	if !ok {
		return nil, errors.New("StartNode runs inside the node's namespaces: call it under harness.RunInNode")
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	n := &Node{Dir: dir, Started: time.Now(), root: opts.Root, binDir: opts.BinDir, pki: filepath.Join(dir, "pki")}
	if n.binDir == "" {
		n.binDir = filepath.Join(opts.Root, "bin")
	}
	if err := n.check(); err != nil {
		return nil, err
	}
	if err := n.start(ctx, opts.CRDDirs, progress); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

// check returns an error naming every missing program and its fix.
func (n *Node) check() error {
	var errs []error
	for _, p := range NodePrograms {
		if _, err := os.Stat(filepath.Join(n.binDir, p)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w; build it with `bash ci/tools.sh --for test` (ci/tools/%s.sh)",
				filepath.Join(n.binDir, p), err, p))
		}
	}
	for _, p := range nodeSystemPrograms {
		if _, err := exec.LookPath(p); err != nil {
			errs = append(errs, fmt.Errorf("%s not found: install the node's Debian packages with `bash ci/node.sh`", p))
		}
	}
	for _, p := range []string{"bridge", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniDir, p)); err != nil {
			errs = append(errs, fmt.Errorf("CNI plugin %s: %w; install it with `bash ci/node.sh`", p, err))
		}
	}
	return errors.Join(errs...)
}

func (n *Node) path(parts ...string) string {
	return filepath.Join(append([]string{n.Dir}, parts...)...)
}

func (n *Node) start(ctx context.Context, crdDirs []string, progress func(string, ...any)) error {
	if err := writeNodePKI(n.pki); err != nil {
		return fmt.Errorf("node certificates: %w", err)
	}
	if err := n.writeConfigs(); err != nil {
		return err
	}
	// containerd, etcd, the registry and kube-apiserver first; the pause image is built meanwhile and pushed once
	// the registry answers.
	pause := make(chan error, 1)
	go func() {
		err := n.buildPause(ctx)
		progress("node: pause image pushed %.1fs after start", time.Since(n.Started).Seconds())
		pause <- err
	}()
	if _, err := n.run("containerd", "containerd", "--config", n.path("containerd", "config.toml")); err != nil {
		return err
	}
	if _, err := n.run("etcd", filepath.Join(n.binDir, "etcd"), "--data-dir", n.path("etcd"),
		"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
		"--listen-peer-urls", "http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return err
	}
	reg, err := n.run("registry", filepath.Join(n.binDir, "registry"), "serve", n.path("registry.yml"))
	if err != nil {
		return err
	}
	if _, err := n.run("kube-apiserver", filepath.Join(n.binDir, "kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379", "--bind-address=0.0.0.0",
		"--secure-port="+strconv.Itoa(apiServerPort), "--advertise-address="+NodeIP,
		"--service-cluster-ip-range="+ServiceSubnet, "--allow-privileged=false",
		"--client-ca-file="+n.pkiFile("ca.crt"), "--tls-cert-file="+n.pkiFile("apiserver.crt"),
		"--tls-private-key-file="+n.pkiFile("apiserver.key"),
		"--kubelet-client-certificate="+n.pkiFile("apiserver-kubelet-client.crt"),
		"--kubelet-client-key="+n.pkiFile("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+n.pkiFile("sa.pub"),
		"--service-account-signing-key-file="+n.pkiFile("sa.key"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction,PodSecurity",
		"--cert-dir="+n.path("apiserver"), "--profiling=false"); err != nil {
		return err
	}
	if err := waitHTTP(ctx, "registry", "http://"+NodeRegistry+"/v2/", http.DefaultClient, reg, 30*time.Second); err != nil {
		return err
	}
	progress("node: containerd, etcd, the registry and kube-apiserver started")
	if err := n.connect(ctx); err != nil {
		return err
	}
	n.APIReady = time.Since(n.Started)
	progress("node: kube-apiserver ready after %.1fs", n.APIReady.Seconds())
	for _, p := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{"--kubeconfig=" + n.path("controller-manager.kubeconfig"),
			"--bind-address=127.0.0.1", "--cert-dir=" + n.path("controller-manager"), "--leader-elect=false",
			"--service-account-private-key-file=" + n.pkiFile("sa.key"), "--root-ca-file=" + n.pkiFile("ca.crt"),
			"--use-service-account-credentials=true", "--profiling=false"}},
		{"kube-scheduler", []string{"--kubeconfig=" + n.path("scheduler.kubeconfig"), "--bind-address=127.0.0.1",
			"--cert-dir=" + n.path("scheduler"), "--leader-elect=false", "--profiling=false"}},
		{"kube-proxy", []string{"--config=" + n.path("kube-proxy.yaml")}},
		{"kubelet", []string{"--config=" + n.path("kubelet.yaml"), "--kubeconfig=" + n.path("kubelet.kubeconfig"),
			"--root-dir=" + n.path("kubelet", "root"), "--cert-dir=" + n.path("kubelet", "pki"),
			"--hostname-override=" + NodeName, "--node-ip=" + NodeIP}},
	} {
		if _, err := n.run(p.name, filepath.Join(n.binDir, p.name), p.args...); err != nil {
			return err
		}
	}
	// The CRDs once the node is schedulable: while kube-apiserver serves them, kube-controller-manager starts slowly
	// (its controllers wait for discovery), and with it the removal of the node's not-ready taint.
	if err := n.waitReady(ctx); err != nil {
		return errors.Join(err, <-pause)
	}
	n.crds = make(chan struct{})
	go func() {
		defer close(n.crds)
		if len(crdDirs) == 0 {
			return
		}
		s, err := Scheme()
		if err != nil {
			n.crdErr = err
			return
		}
		crds, err := installCRDs(func() (int, error) {
			crds, err := envtest.InstallCRDs(n.Config, envtest.CRDInstallOptions{Paths: crdDirs, Scheme: s,
				ErrorIfPathMissing: true, MaxTime: crdWait, PollInterval: 250 * time.Millisecond})
			return len(crds), err
		}, time.Now().Add(crdWait), progress)
		if err != nil {
			n.crdErr = fmt.Errorf("install the CRDs of %v on the node: %w", crdDirs, err)
			return
		}
		n.CRDs = crds
		n.CRDsServed = time.Since(n.Started)
		progress("node: %d CRDs served %.1fs after start", crds, n.CRDsServed.Seconds())
	}()
	// the first pod needs the pause image; the node is Ready without it
	return <-pause
}

// installCRDs calls install (an envtest.InstallCRDs of the node's CRDs, which creates the missing ones and updates
// the others) and returns its CRD count, again while it fails with an API server timeout and deadline has not passed:
// on a loaded machine the node's kube-apiserver answers a large CRD's create with a timeout ("request did not
// complete within requested timeout", HTTP 504) whether or not it stored it, and the next install completes the set.
// Other errors are returned at once; progress logs each retry.
func installCRDs(install func() (int, error), deadline time.Time, progress func(string, ...any)) (int, error) {
	for attempt := 1; ; attempt++ {
		n, err := install()
		if err == nil || !(apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)) || !time.Now().Before(deadline) {
			if err != nil && attempt > 1 {
				err = fmt.Errorf("attempt %d: %w", attempt, err)
			}
			return n, err
		}
		progress("node: the API server timed out installing CRDs (attempt %d), installing again: %v", attempt, err)
	}
}

// WaitCRDs waits until the CRDs of NodeOptions.CRDDirs are served (StartNode installs them in the background, so
// pods that need none may start meanwhile) and returns the install's error, naming the folders.
func (n *Node) WaitCRDs() error {
	if n.crds == nil {
		return errors.New("the node was not started (StartNode)")
	}
	<-n.crds
	return n.crdErr
}

func (n *Node) pkiFile(name string) string { return filepath.Join(n.pki, name) }

// run starts one program of the node with its log in the scratch folder.
func (n *Node) run(name, bin string, args ...string) (*Process, error) {
	p, err := StartProcess(name, bin, n.path("admin.kubeconfig"), args, []string{
		// the registry exports traces through OpenTelemetry's environment; nothing listens for them here
		"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none"}, n.path("logs", name+".log"))
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	return p, nil
}

// connect waits for kube-apiserver's /readyz and makes Config and Client.
func (n *Node) connect(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", n.Kubeconfig)
	if err != nil {
		return fmt.Errorf("node admin kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	var api *Process
	for _, p := range n.procs {
		if p.Name == "kube-apiserver" {
			api = p
		}
	}
	if err := waitHTTP(ctx, "kube-apiserver", cfg.Host+"/readyz", hc, api, nodeStartWait); err != nil {
		return err
	}
	s, err := Scheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("node client: %w", err)
	}
	n.Config, n.Client = cfg, c
	return nil
}

// waitHTTP polls url until it answers 200, failing early when p has ended, with the tail of its log.
func waitHTTP(ctx context.Context, name, url string, hc *http.Client, p *Process, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		if p != nil {
			if perr, ended := p.Exited(); ended {
				return fmt.Errorf("%s ended: %v; last lines of %s:\n%s", name, perr, p.LogPath, tail(p.LogPath, 25))
			}
		}
		if time.Now().After(deadline) {
			lines := ""
			if p != nil {
				lines = fmt.Sprintf("; last lines of %s:\n%s", p.LogPath, tail(p.LogPath, 25))
			}
			return fmt.Errorf("%s did not answer %s within %s: %v%s", name, url, limit, last, lines)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady waits until the node is Ready and the `default` ServiceAccount of namespace default exists (made by
// kube-controller-manager), failing early when a program of the node has ended.
func (n *Node) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(nodeStartWait)
	for {
		var node corev1.Node
		ready := false
		if err := n.Client.Get(ctx, client.ObjectKey{Name: NodeName}, &node); err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
		}
		if ready && n.Ready == 0 {
			n.Ready = time.Since(n.Started)
		}
		// The kubelet registers the node with the not-ready taint, which kube-controller-manager's node lifecycle
		// controller removes once the node is Ready: until then the scheduler places no pod.
		tainted := false
		for _, taint := range node.Spec.Taints {
			tainted = tainted || taint.Effect == corev1.TaintEffectNoSchedule || taint.Effect == corev1.TaintEffectNoExecute
		}
		var sa corev1.ServiceAccount
		if ready && !tainted && n.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &sa) == nil {
			return nil
		}
		for _, p := range n.procs {
			if err, ended := p.Exited(); ended {
				return fmt.Errorf("%s ended: %v; last lines of %s:\n%s", p.Name, err, p.LogPath, tail(p.LogPath, 25))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not Ready, still tainted %v or no default ServiceAccount within %s; kubelet "+
				"log %s:\n%s", NodeName, node.Spec.Taints, nodeStartWait, n.path("logs", "kubelet.log"), tail(n.path("logs", "kubelet.log"), 25))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop kills the node's programs, all at once (Process.Kill: the node's state is thrown away, and a graceful stop
// of kube-apiserver and the kubelet takes 10 s), and returns the error of a program that had ended on its own. The
// pods' containers and containerd's shims end with the namespaces (RunInNode).
func (n *Node) Stop() error {
	errs := make([]error, len(n.procs))
	var wg sync.WaitGroup
	for i, p := range n.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Kill()
		}()
	}
	wg.Wait()
	n.procs = nil
	return errors.Join(errs...)
}

// Process returns the running program name of the node, nil when there is none.
func (n *Node) Process(name string) *Process {
	for _, p := range n.procs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// ProgramMemory is the resident memory of one kind of the node's processes.
type ProgramMemory struct {
	// Name is the program (its /proc comm, 15 bytes at most).
	Name string
	// Count is how many processes run it; RSS their resident memory together, in bytes.
	Count int
	RSS   int64
}

// Memory returns the resident memory of every process of the node's PID namespace except this program and its
// build tools, by program name, largest first: the control plane, the kubelet, containerd, its shims and the pods'
// processes. It returns an error when /proc cannot be read.
func (n *Node) Memory() ([]ProgramMemory, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	by := map[string]*ProgramMemory{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == 1 {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var name string
		var rss int64
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				rss = kb * 1024
			}
		}
		if rss == 0 || name == "go" || name == "sh" || name == "sleep" {
			continue
		}
		m := by[name]
		if m == nil {
			m = &ProgramMemory{Name: name}
			by[name] = m
		}
		m.Count++
		m.RSS += rss
	}
	out := make([]ProgramMemory, 0, len(by))
	for _, m := range by {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RSS > out[j].RSS })
	return out, nil
}

// nodeImageCreated is the timestamp of the node's test-only images (the pause image): fixed, so equal sources give
// equal digests.
var nodeImageCreated = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// PushImage builds the image name from the main package pkg of the module at root (NodeImage) and pushes it to
// NodeRegistry (Push). It returns the pinned reference `<registry>/kof/<name>@sha256:...` that pods name; errors
// name the image and step.
func (n *Node) PushImage(ctx context.Context, root, name, pkg, version string) (string, error) {
	img, err := NodeImage(ctx, root, name, pkg, version)
	if err != nil {
		return "", err
	}
	return n.Push(ctx, img)
}

// NodeImage builds the image name of a node's pod from the main package pkg of the module at root with the
// release's code (release/image.Build, for this machine's architecture; a temporary folder holds the binary). It
// needs no running node, so a test may build its images while the node starts; errors name the image and step.
func NodeImage(ctx context.Context, root, name, pkg, version string) (*image.Image, error) {
	work, err := os.MkdirTemp("", "image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	return image.Build(ctx, root, work, image.Spec{Name: name, Package: pkg,
		Platforms: []image.Platform{{OS: "linux", Arch: runtime.GOARCH}}, Version: version, Revision: "node",
		Source: "https://github.com/k0rdent/kof", Created: nodeImageCreated})
}

// BinaryImage packs the static binary at bin (a program ci/tools.sh builds into bin/, such as otelcol or minio)
// into the image name with the release's code (release/image.Pack), for this machine's architecture. Errors name
// the image and the fix.
func BinaryImage(name, bin, version string) (*image.Image, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w; build it with `bash ci/tools.sh --for test`", name, err)
	}
	return image.Pack(image.Spec{Name: name, Package: info.Path, Version: version, Revision: "node",
		Source: "https://" + info.Main.Path, Created: nodeImageCreated},
		image.Platform{OS: "linux", Arch: runtime.GOARCH}, bin)
}

// Push pushes img to NodeRegistry as kof/<name>:<version> (its Spec's) and returns the pinned reference
// `<registry>/kof/<name>@sha256:...`; errors name the image.
func (n *Node) Push(ctx context.Context, img *image.Image) (string, error) {
	name := img.Spec.Name
	if err := waitHTTP(ctx, "registry", "http://"+NodeRegistry+"/v2/", http.DefaultClient, nil, 30*time.Second); err != nil {
		return "", err
	}
	repo := NodeRegistry + "/kof/" + name
	if _, err := (image.Remote{PlainHTTP: true}).Push(ctx, repo, img); err != nil {
		return "", fmt.Errorf("push image %s: %w", name, err)
	}
	return repo + "@" + img.Digest.String(), nil
}

// buildPause builds and pushes the pause image under the tag containerd's sandbox_image names.
func (n *Node) buildPause(ctx context.Context) error {
	if _, err := n.PushImage(ctx, n.root, "pause", pausePackage, "node"); err != nil {
		return fmt.Errorf("the node's pause image: %w", err)
	}
	return nil
}

// WaitDeploymentAvailable waits up to limit until the one Deployment of ns with labels has observed its generation
// and has every replica updated and available, and returns it. Errors: no or several such Deployments, or the
// limit reached (with the Deployment's status and the events of ns).
func WaitDeploymentAvailable(ctx context.Context, c client.Client, ns string, labels map[string]string,
	limit time.Duration) (*appsv1.Deployment, error) {
	deadline := time.Now().Add(limit)
	for {
		var list appsv1.DeploymentList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return nil, fmt.Errorf("list Deployments of %s: %w", ns, err)
		}
		if len(list.Items) == 1 {
			d := &list.Items[0]
			want := int32(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == want &&
				d.Status.AvailableReplicas == want && d.Status.Replicas == want {
				return d, nil
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("Deployment %s/%s not available within %s: %+v; events of %s:\n%s", ns,
					d.Name, limit, d.Status, ns, Events(ctx, c, ns))
			}
		} else if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d Deployments with labels %v in %s, want one", len(list.Items), labels, ns)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Events returns the events of namespace ns, one line each (type, object, reason, message), or the list error.
func Events(ctx context.Context, c client.Client, ns string) string {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range list.Items {
		fmt.Fprintf(&b, "%s %s/%s: %s %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}
