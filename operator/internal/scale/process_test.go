package scale

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/internal/proc"
	kofoperator "kof.dev/kof/operator"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/testenv"
)

// countedPackage is the operator program the benchmark runs: kof-operator with its API requests counted.
const countedPackage = "./operator/internal/scale/counted"

// Environment of the benchmark.
const (
	// envProfileDir, when set, makes the operator process write cpu.pprof (its whole life), heap-peak.pprof and
	// heap.pprof (when it stops) there, and the benchmark kube-apiserver profiles:
	// `KOF_SCALE_PROFILE_DIR=/tmp/p go test -bench FleetLarge ...`, then `go tool pprof`.
	envProfileDir = "KOF_SCALE_PROFILE_DIR"
	// envGCPercent, when set, is the operator process's --gc-percent instead of manager.DefaultGCPercent, to measure
	// another setting.
	envGCPercent = "KOF_SCALE_GC_PERCENT"
	// KOF_SCALE_REWRITES, read by the operator process itself (package counted, which inherits the benchmark's
	// environment), makes the benchmark log the objects the operator wrote more than once.
)

// shipped is the operator as kof-mothership ships it, for one release namespace and the fleets it watches.
type shipped struct {
	// env and args are the kof-operator container's environment (`NAME=value`) and arguments, leader election
	// included, for a local process (the metrics and health listeners off).
	env, args []string
	// flags are args parsed by the operator's own flags (workers, client limits, GC percent).
	flags *kofoperator.Flags
	// cfg is the configuration env gives the operator (config.Load).
	cfg config.Config
}

// chartGolden is the kof-mothership render with its defaults (`defaults.yaml`) that tests/charts/mgmt keeps equal
// to the chart (`go test ./tests/charts/mgmt -update` rewrites it; make verify fails on drift): the index names each
// scenario's objects, each object is a file of objects/.
const chartGolden = "tests/charts/mgmt/testdata/golden"

// shippedOperator returns the kof-operator container of the kof-mothership Deployment as the chart renders it with
// its defaults (chartGolden), for a process in release namespace release that watches fleets: the two settings an
// install chooses, RELEASE_NAMESPACE (the release's namespace) and KOF_WATCH_NAMESPACES (the value
// operator.watchNamespaces, so that the fleets earlier rounds left on the control plane are neither cached nor
// reconciled), are set to those; every other arg and variable is the chart's, but the metrics and health listeners
// (`=0`: processes share the loopback). It returns an error naming the file or the variable it cannot use.
func shippedOperator(release string, fleets ...string) (shipped, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return shipped{}, err
	}
	dep, err := chartOperatorDeployment(filepath.Join(root, chartGolden))
	if err != nil {
		return shipped{}, err
	}
	var sh shipped
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name != kofv1.OperatorContainer {
			continue
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil {
				return shipped{}, fmt.Errorf("%s: env %s is not a value; the benchmark reproduces values only", chartGolden, e.Name)
			}
			v := e.Value
			switch e.Name {
			case config.EnvReleaseNamespace:
				v = release
			case config.EnvWatchNamespaces:
				v = strings.Join(fleets, ",")
			}
			sh.env = append(sh.env, e.Name+"="+v)
		}
		for _, a := range c.Args {
			if name, _, ok := strings.Cut(a, "="); ok && strings.HasSuffix(name, "-bind-address") {
				a = name + "=0"
			}
			sh.args = append(sh.args, a)
		}
	}
	if sh.args == nil {
		return shipped{}, fmt.Errorf("%s: the operator Deployment has no container %q with args", chartGolden, kofv1.OperatorContainer)
	}
	fs := flag.NewFlagSet("kof-operator", flag.ContinueOnError)
	sh.flags = kofoperator.BindFlags(fs)
	if err := fs.Parse(sh.args); err != nil {
		return shipped{}, fmt.Errorf("the chart's kof-operator args %v: %w", sh.args, err)
	}
	vars := map[string]string{}
	for _, kv := range sh.env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if sh.cfg, err = config.Load(func(k string) string { return vars[k] }); err != nil {
		return shipped{}, fmt.Errorf("the chart's kof-operator env: %w", err)
	}
	return sh, nil
}

// chartOperatorDeployment reads the kof-operator Deployment (kofv1.IsOperatorDeployment) of the `defaults.yaml`
// scenario from the golden store in dir (the base text of its object file).
func chartOperatorDeployment(dir string) (*appsv1.Deployment, error) {
	index, err := os.ReadFile(filepath.Join(dir, "kof-mothership.index"))
	if err != nil {
		return nil, err
	}
	inDefaults := false
	for _, line := range strings.Split(string(index), "\n") {
		if !strings.HasPrefix(line, " ") {
			inDefaults = strings.HasPrefix(line, "defaults.yaml ")
			continue
		}
		file := strings.TrimSpace(line)
		if !inDefaults || !strings.HasPrefix(file, "kof-mothership.Deployment.") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "objects", file))
		if err != nil {
			return nil, err
		}
		// The store holds the object's most used text in full as its base, and every other scenario's as changes
		// to it (internal/golden); the defaults are the base unless a variant names them.
		if strings.Contains(string(b), "\n  kof-mothership/defaults.yaml\n") {
			return nil, fmt.Errorf("%s: the defaults are a variant, not the base; read them through internal/golden", file)
		}
		text, _ := strings.CutPrefix(string(b), string(b)[:strings.IndexByte(string(b), '\n')+1])
		if i := strings.Index(text, "\n=== "); i >= 0 {
			text = text[:i+1]
		}
		var dep appsv1.Deployment
		if err := yaml.Unmarshal([]byte(text), &dep); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if kofv1.IsOperatorDeployment(dep.Labels) {
			return &dep, nil
		}
	}
	return nil, fmt.Errorf("%s: no kof-operator Deployment in the defaults.yaml scenario of kof-mothership.index", dir)
}

// counted builds countedPackage once into binDir (proc.BuildProgram: linked once per machine and change) and
// returns its path.
var counted = sync.OnceValues(func() (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	return proc.BuildProgram(context.Background(), root, countedPackage, binDir)
})

// processCounts are the API requests the operator process reported by class (package counted).
type processCounts struct {
	writes, events, gets, lists atomic.Int64
}

// process is the operator process as the benchmark sees it: its latest counts and its pid.
type process struct {
	cmd    *exec.Cmd
	counts processCounts
	// peakLive is the largest live heap (bytes, runtime/metrics /gc/heap/live:bytes) the process reported.
	peakLive atomic.Int64
	// peakAnon is the largest anonymous resident memory (bytes, RssAnon of /proc/self/status) the process reported:
	// its heap, stacks and runtime memory without the mapped binary.
	peakAnon atomic.Int64
	ready    chan struct{}
	// writesOf are the writes per "<method>:<resource>" the process printed when it stopped.
	writesOf map[string]int64
	// rewritten are the `rewritten` lines it printed when it stopped (KOF_SCALE_REWRITES), most written first.
	rewritten []string
	exited    chan struct{} // closed when its output ends
	dir       string        // its kubeconfig and log
	done      sync.WaitGroup
}

// startProcess starts the operator process as sh says (its env and args; KOF_SCALE_GC_PERCENT adds a
// `--gc-percent`), against the envtest control plane, and waits until it leads and its caches are synced. Its log
// (stderr) goes to a file whose end an error quotes.
func startProcess(sh shipped) (*process, error) {
	dir, err := os.MkdirTemp("", "kof-scale")
	if err != nil {
		return nil, err
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, env.KubeConfig(), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "operator.log"))
	if err != nil {
		return nil, err
	}
	bin, err := counted()
	if err != nil {
		return nil, err
	}
	args := slices.Clone(sh.args)
	if v := os.Getenv(envGCPercent); v != "" {
		args = append(args, "--gc-percent="+v)
	}
	p := &process{ready: make(chan struct{}), exited: make(chan struct{}), writesOf: map[string]int64{}, dir: dir}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(append(os.Environ(), sh.env...), "KUBECONFIG="+kc)
	p.cmd.Stderr = logf
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	proc.DieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	_ = logf.Close() // the process holds its own descriptor
	p.done.Add(1)
	go p.read(out)
	select {
	case <-p.ready:
		return p, nil
	case <-p.exited:
		p.stop()
		return nil, fmt.Errorf("operator process ended before it was ready: %s", p.logTail())
	case <-time.After(2 * time.Minute):
		p.stop()
		return nil, fmt.Errorf("operator process not ready after 2 minutes: %s", p.logTail())
	}
}

// logTail returns the last 2 KiB of the process's log.
func (p *process) logTail() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "operator.log"))
	return string(b[max(0, len(b)-2048):])
}

func (p *process) read(out io.Reader) {
	defer p.done.Done()
	defer close(p.exited)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "ready":
			close(p.ready)
		case len(f) == 3 && f[0] == "rewritten":
			p.rewritten = append(p.rewritten, f[1]+" "+f[2])
		case len(f) == 3 && f[0] == "writes-of":
			if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				p.writesOf[f[1]] = n
			}
		case len(f) == 7 && f[0] == "counts":
			for i, c := range []*atomic.Int64{&p.counts.writes, &p.counts.events, &p.counts.gets, &p.counts.lists, &p.peakLive, &p.peakAnon} {
				if n, err := strconv.ParseInt(f[i+1], 10, 64); err == nil {
					c.Store(n)
				}
			}
		}
	}
}

// stop ends the process with SIGTERM, waits for it and removes its folder.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	p.done.Wait()
	_ = os.RemoveAll(p.dir)
}

// cpuSeconds returns the user + system CPU seconds of pid (proc.CPUTime), 0 when unknown.
func cpuSeconds(pid int) float64 {
	d, err := proc.CPUTime(pid)
	if err != nil {
		return 0
	}
	return d.Seconds()
}

// peakRSSOf returns the peak resident set size of pid in MiB (VmHWM of /proc/<pid>/status), 0 when unknown.
func peakRSSOf(pid string) float64 { return statusMiB(pid, "VmHWM:") }

// rssOf returns the resident set size of pid in MiB now (VmRSS of /proc/<pid>/status), 0 when unknown.
func rssOf(pid string) float64 { return statusMiB(pid, "VmRSS:") }

// statusMiB returns the field (a size in kB) of /proc/<pid>/status in MiB, 0 when unknown.
func statusMiB(pid, field string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// controlPlane returns the pids of the kube-apiserver and etcd processes this test process started (envtest).
func controlPlane() (apiserver, etcd int, err error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+2:])
		if len(f) < 2 || f[1] != strconv.Itoa(self) {
			continue
		}
		switch s[open+1 : closing] {
		case "kube-apiserver":
			apiserver = pid
		case "etcd":
			etcd = pid
		}
	}
	if apiserver == 0 || etcd == 0 {
		return 0, 0, fmt.Errorf("kube-apiserver (pid %d) or etcd (pid %d) not found among this process's children", apiserver, etcd)
	}
	return apiserver, etcd, nil
}

// cpuMeter measures the CPU seconds of the control plane between two points.
type cpuMeter struct{ apiserver, etcd int }

func (m cpuMeter) sample() [2]float64 { return [2]float64{cpuSeconds(m.apiserver), cpuSeconds(m.etcd)} }

// profileAPIServer, when KOF_SCALE_PROFILE_DIR is set, records a CPU profile of kube-apiserver for seconds into
// <dir>/<name> (its /debug/pprof/profile endpoint) in the background; wait blocks until it is written.
func profileAPIServer(name string, seconds int) (wait func()) {
	dir := os.Getenv(envProfileDir)
	if dir == "" {
		return func() {}
	}
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := hc.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(env.Config.Host, "/"), seconds))
		if err != nil {
			fmt.Fprintln(os.Stderr, "apiserver profile:", err)
			return
		}
		defer resp.Body.Close()
		if f, err := os.Create(filepath.Join(dir, name)); err == nil {
			_, _ = io.Copy(f, resp.Body)
			_ = f.Close()
		}
	}()
	return func() { <-done }
}
