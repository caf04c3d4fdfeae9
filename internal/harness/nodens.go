package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kof.dev/kof/internal/proc"
)

// The node's namespaces: RunInNode creates a mount, a PID and a network namespace (unshare(1)) whose first process
// is a small shell script (nodeInit), and runs the caller's program again inside all three (nsenter(1)). Everything
// the node starts then lives in them: its ports never meet another run's, its mounts, veth, bridge and iptables rules
// vanish with the namespaces, and when their first process ends the kernel kills every process left in them
// (pid_namespaces(7)).
const (
	// nodeDirEnv names, in the program RunInNode runs inside the namespaces, the node's scratch folder.
	nodeDirEnv = "KOF_NODE_DIR"
	// nodeCgroupEnv names there the node's cgroup parent (the kubelet's cgroupRoot).
	nodeCgroupEnv = "KOF_NODE_CGROUP"
	// cgroupPrefix starts the name of the node's cgroup folder at the root of every hierarchy:
	// kof-node-<pid of the process that ran RunInNode>.
	cgroupPrefix = "kof-node-"
	// cgroupFS is where the hierarchies are mounted.
	cgroupFS = "/sys/fs/cgroup"
)

// The node's network inside its namespace (no address of the machine's own network is used).
const (
	// NodeIP is the node's InternalIP, one end of a veth pair (the kubelet refuses a loopback node IP).
	NodeIP = "10.77.0.2"
	// PodSubnet is the pods' range (CNI bridge and host-local).
	PodSubnet = "10.88.0.0/24"
	// ServiceSubnet is the Services' ClusterIP range; its first address is the `kubernetes` Service.
	ServiceSubnet = "10.96.0.0/24"
	// kubernetesServiceIP is the ClusterIP of the `kubernetes` Service.
	kubernetesServiceIP = "10.96.0.1"
)

// kernelTunables are the /proc/sys entries the kubelet sets at start (vm.overcommit_memory, vm.panic_on_oom,
// kernel.panic, kernel.panic_on_oops, kernel.keys.root_maxkeys, kernel.keys.root_maxbytes; kubelet
// pkg/kubelet/cm/container_manager_linux.go, setupKernelTunables). They are machine-wide, not per namespace, so
// nodeInit shadows each with a file of the scratch folder bind-mounted over it inside the node's mount namespace.
var kernelTunables = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"}

// hostDirs are the machine's folders the node's programs write into whatever their settings say (the kubelet's
// /var/log/containers links and device-plugin socket under /var/lib/kubelet, libcni's cache under /var/lib/cni,
// containerd's shim sockets and runc's state under /run/containerd and /run/runc): nodeInit bind-mounts a folder
// of the scratch folder over each, inside the node's mount namespace only.
var hostDirs = []string{"/run", "/var/lib", "/var/log"}

// nodeInit is the first process of the node's namespaces: it brings up loopback and the node's veth, allows IP
// forwarding (a per-namespace setting), shadows kernelTunables and hostDirs, reports readiness with a file and then
// reaps orphans until it is killed. %[1]s is the scratch folder.
const nodeInit = `#!/bin/sh
set -eu
d=%[1]s
ip link set lo up
ip link add node0 type veth peer name node0p
ip addr add %[2]s/24 dev node0
ip link set node0 up
ip link set node0p up
ip route add default dev node0
echo 1 > /proc/sys/net/ipv4/ip_forward
mkdir -p "$d/sysctl"
for s in %[3]s; do
  f="$d/sysctl/$(echo "$s" | tr / .)"
  cat "/proc/sys/$s" > "$f"
  mount --bind "$f" "/proc/sys/$s"
done
for h in %[4]s; do
  mkdir -p "$d/host$h"
  mount --bind "$d/host$h" "$h"
done
touch "$d/namespaces-ready"
trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $! || true; done
`

// nodeNamespacesWait bounds the set-up of the namespaces.
const nodeNamespacesWait = 30 * time.Second

// InNode reports whether this process runs inside the namespaces of RunInNode, and returns the node's scratch
// folder then.
func InNode() (string, bool) {
	d := os.Getenv(nodeDirEnv)
	return d, d != ""
}

// RunInNode runs run inside the node's namespaces and returns its exit status, for a TestMain
// (`os.Exit(harness.RunInNode("node", func() int { ...; return m.Run() }))`). Called outside them, it creates a
// scratch folder (proc.Scratch, named after name; also removing the cgroups of killed earlier runs), the mount, PID
// and network namespaces with nodeInit as their first process, and the node's cgroup folder in every hierarchy;
// runs this program again, with the same arguments and environment, inside the namespaces; waits for it; and then
// kills the namespaces' first process (the kernel ends every process left in them), removes the cgroup folders and
// the scratch folder. Called inside (InNode), it just returns run(). SIGINT and SIGTERM are passed to the program
// inside and the clean-up still runs; a SIGKILL of this process ends the namespaces too (parent-death signals on
// unshare and its child), and the next run removes what was left. Errors are printed to standard error and
// returned as status 1.
func RunInNode(name string, run func() int) int {
	if _, ok := InNode(); ok {
		return run()
	}
	code, err := runInNode(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func runInNode(name string) (code int, err error) {
	began := time.Now()
	var inAt, outAt time.Time // the run inside the namespaces: start and end
	dir, err := proc.Scratch(name)
	if dir == "" {
		return 1, err
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
	}
	defer func() {
		if rmErr := removeAllRetry(dir); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
		if !inAt.IsZero() && !outAt.IsZero() {
			fmt.Printf("node: namespaces set up in %.1fs, the run inside took %.1fs, their clean-up %.1fs\n",
				inAt.Sub(began).Seconds(), outAt.Sub(inAt).Seconds(), time.Since(outAt).Seconds())
		}
	}()
	if err := SweepCgroups(); err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
	}
	cgroup, err := makeNodeCgroup()
	defer func() { err = errors.Join(err, removeCgroup(cgroup)) }()
	if err != nil {
		return 1, err
	}
	for _, tool := range []string{"unshare", "nsenter", "ip", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return 1, fmt.Errorf("%s (util-linux, iproute2) not found: the node runs in namespaces it makes: %w", tool, err)
		}
	}
	script := filepath.Join(dir, "node-init.sh")
	if err := os.WriteFile(script, fmt.Appendf(nil, nodeInit, dir, NodeIP, strings.Join(kernelTunables, " "),
		strings.Join(hostDirs, " ")), 0o755); err != nil {
		return 1, err
	}
	log, err := os.Create(filepath.Join(dir, "node-init.log"))
	if err != nil {
		return 1, err
	}
	defer log.Close()
	// --kill-child: unshare's child (the namespaces' first process) gets SIGKILL when unshare ends, however it ends.
	ns := exec.Command("unshare", "--mount", "--pid", "--net", "--fork", "--mount-proc", "--propagation", "private",
		"--kill-child=SIGKILL", "sh", script)
	ns.Stdout, ns.Stderr = log, log
	proc.DieWithParent(ns)
	if err := ns.Start(); err != nil {
		return 1, fmt.Errorf("start unshare: %w", err)
	}
	nsDone := make(chan error, 1)
	go func() { nsDone <- ns.Wait() }()
	defer func() {
		// unshare ends (SIGKILL: with --fork it ignores SIGTERM while it waits for its child, so a SIGTERM would only
		// cost a timeout); --kill-child kills the first process, the kernel the rest.
		_ = ns.Process.Kill()
		<-nsDone
		err = errors.Join(err, waitNamespaceGone(dir))
	}()
	deadline := time.Now().Add(nodeNamespacesWait)
	for {
		if _, err := os.Stat(filepath.Join(dir, "namespaces-ready")); err == nil {
			break
		}
		select {
		case err := <-nsDone:
			nsDone <- err
			b, _ := os.ReadFile(log.Name())
			return 1, fmt.Errorf("the node's namespaces ended during set-up: %v\n%s", err, b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			return 1, fmt.Errorf("the node's namespaces were not set up within %s:\n%s", nodeNamespacesWait, b)
		}
	}
	kids, err := proc.Descendants(ns.Process.Pid)
	if err != nil || len(kids) == 0 {
		return 1, fmt.Errorf("find the first process of the node's namespaces (child of unshare %d): %v", ns.Process.Pid, err)
	}
	first := kids[0].PID
	if err := os.WriteFile(filepath.Join(dir, "namespaces-pid"), []byte(strconv.Itoa(first)), 0o644); err != nil {
		return 1, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	self, err := os.Executable()
	if err != nil {
		return 1, err
	}
	args := append([]string{"--target", strconv.Itoa(first), "--mount", "--net", "--pid", "--wd=" + wd, "--",
		self}, os.Args[1:]...)
	inside := exec.Command("nsenter", args...)
	// TMPDIR inside the scratch folder: inside the PID namespace proc.Sweep cannot see the processes of other runs,
	// so the program inside must never sweep the machine's temporary folder.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return 1, err
	}
	inside.Env = append(os.Environ(), nodeDirEnv+"="+dir, nodeCgroupEnv+"=/"+cgroup, "TMPDIR="+tmp)
	inside.Stdin, inside.Stdout, inside.Stderr = nil, os.Stdout, os.Stderr
	proc.DieWithParent(inside)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	inAt = time.Now()
	if err := inside.Start(); err != nil {
		return 1, fmt.Errorf("start nsenter: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		err := inside.Wait()
		outAt = time.Now()
		done <- err
	}()
	for {
		select {
		case s := <-sigs:
			// The program inside is nsenter's child; nsenter passes no signal on.
			if k, _ := proc.Descendants(inside.Process.Pid); len(k) > 0 {
				_ = syscall.Kill(k[0].PID, s.(syscall.Signal))
			}
		case err := <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				if exit.ExitCode() < 0 {
					return 1, fmt.Errorf("the run inside the node's namespaces ended by %v", err)
				}
				return exit.ExitCode(), nil
			}
			if err != nil {
				return 1, err
			}
			return 0, nil
		}
	}
}

// waitNamespaceGone waits until the namespaces' first process recorded in dir has ended (the kernel then kills
// every other process of the namespaces).
func waitNamespaceGone(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "namespaces-pid"))
	if err != nil {
		return nil // never started
	}
	pid, _ := strconv.Atoi(string(b))
	deadline := time.Now().Add(15 * time.Second)
	for proc.Alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the node namespaces' first process %d still runs 15 s after its unshare ended", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// removeAllRetry removes dir, retrying for a few seconds: the node's mounts under it vanish only once the last
// process of its mount namespace has ended.
func removeAllRetry(dir string) error {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("remove the node's scratch folder: %w", err)
}

// cgroupHierarchies returns the mounted cgroup hierarchies (folders of cgroupFS).
func cgroupHierarchies() []string {
	entries, err := os.ReadDir(cgroupFS)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		// a hierarchy is a mount, so a real folder; cpu,cpuacct style links point at one
		if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			out = append(out, filepath.Join(cgroupFS, e.Name()))
		}
	}
	return out
}

// makeNodeCgroup creates the folder kof-node-<pid> at the root of every cgroup hierarchy (the kubelet's cgroupRoot
// must exist in each; cgroups are not namespaced, so the node's pods are placed under one folder of this run only)
// and returns its name; a cpuset folder gets its parent's CPUs and memory nodes, which a new one lacks (cgroups(7)).
func makeNodeCgroup() (string, error) {
	name := cgroupPrefix + strconv.Itoa(os.Getpid())
	for _, h := range cgroupHierarchies() {
		d := filepath.Join(h, name)
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return name, fmt.Errorf("create the node's cgroup %s: %w", d, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(h, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
				return name, fmt.Errorf("set %s of the node's cgroup %s: %w", f, d, err)
			}
		}
	}
	return name, nil
}

// removeCgroup removes the folder name and every folder below it from every cgroup hierarchy, deepest first,
// retrying while the processes in them are still being ended.
func removeCgroup(name string) error {
	if name == "" {
		return nil
	}
	var errs []error
	for _, h := range cgroupHierarchies() {
		root := filepath.Join(h, name)
		if _, err := os.Stat(root); err != nil {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			var err error
			for range 100 {
				if err = syscall.Rmdir(dirs[i]); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// SweepCgroups removes the node cgroup folders (kof-node-<pid>) of runs whose process has ended (a run killed before
// its clean-up) from every hierarchy, and returns the removal errors.
func SweepCgroups() error {
	seen := map[string]bool{}
	var errs []error
	for _, h := range cgroupHierarchies() {
		matches, _ := filepath.Glob(filepath.Join(h, cgroupPrefix+"*"))
		for _, m := range matches {
			name := filepath.Base(m)
			if seen[name] {
				continue
			}
			seen[name] = true
			pid, err := strconv.Atoi(strings.TrimPrefix(name, cgroupPrefix))
			if err != nil || proc.Alive(pid) {
				continue
			}
			errs = append(errs, removeCgroup(name))
		}
	}
	return errors.Join(errs...)
}
