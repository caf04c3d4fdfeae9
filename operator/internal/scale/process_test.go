package scale

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"kof.dev/kof/internal/proc"
	"kof.dev/kof/operator/internal/cacheconfig"
	"kof.dev/kof/operator/internal/manager"
	"kof.dev/kof/operator/internal/scheme"
)

// Environment of the operator process the benchmark starts from its own test binary.
const (
	envOperatorKubeconfig = "KOF_SCALE_OPERATOR_KUBECONFIG"
	envOperatorWorkers    = "KOF_SCALE_OPERATOR_WORKERS"
	// envOperatorNamespaces is the operator's watch scope (KOF_WATCH_NAMESPACES): the fleets it is measured on, so
	// that fleets left by earlier benchmarks on the same control plane are neither cached nor reconciled.
	envOperatorNamespaces = "KOF_SCALE_OPERATOR_NAMESPACES"
	// envProfileDir, when set, makes the operator process write cpu.pprof (its whole life) and heap.pprof (when it
	// stops) there: `KOF_SCALE_PROFILE_DIR=/tmp/p go test -bench FleetLarge ...`, then `go tool pprof`.
	envProfileDir = "KOF_SCALE_PROFILE_DIR"
	// envGCPercent, when set, is the operator process's --gc-percent instead of manager.DefaultGCPercent, to measure
	// another setting.
	envGCPercent = "KOF_SCALE_GC_PERCENT"
)

// apiCounts are the API requests of one process by class.
type apiCounts struct {
	writes, events, gets, lists atomic.Int64
	// byResource counts the writes per "<method> <resource>" (*atomic.Int64 values).
	byResource sync.Map
}

// addWrite counts a write of method to the resource of path.
func (c *apiCounts) addWrite(method, path string) {
	c.writes.Add(1)
	n, _ := c.byResource.LoadOrStore(method+" "+resourceOf(path), &atomic.Int64{})
	n.(*atomic.Int64).Add(1)
}

// requestCounter sorts the requests of a process into apiCounts: events (any request under /events), watches
// (ignored: they are the informers' streams), GETs of one object and LISTs (reads that bypass the cache, apart from
// each informer's initial LIST), and writes (every other method).
type requestCounter struct {
	next   http.RoundTripper
	counts *apiCounts
}

func (c requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case strings.Contains(req.URL.Path, "/events"):
		c.counts.events.Add(1)
	case req.Method != http.MethodGet:
		c.counts.addWrite(req.Method, req.URL.Path)
	case req.URL.Query().Get("watch") == "true":
	case isCollection(req.URL.Path):
		c.counts.lists.Add(1)
	default:
		c.counts.gets.Add(1)
	}
	return c.next.RoundTrip(req)
}

// resourceOf returns the resource of an API path, with its subresource (`clusterdeployments`, `vmusers/status`).
func resourceOf(path string) string {
	segs := apiSegments(path)
	switch len(segs) {
	case 0:
		return path
	case 1, 2:
		return segs[0]
	default:
		return segs[0] + "/" + segs[2]
	}
}

// apiSegments returns the segments of an API path after the group version and namespace: resource, name,
// subresource; nil for a path that is not an API path.
func apiSegments(path string) []string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		segs = segs[3:]
	default:
		return nil
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	return segs
}

// isCollection reports whether an API path (/api/v1/... or /apis/<group>/<version>/...) names a collection rather
// than one object.
func isCollection(path string) bool { return len(apiSegments(path)) == 1 }

// runOperator is the operator process: the manager built by operator/internal/manager (GC percent, cache limits,
// workers, every controller) on the kubeconfig in envOperatorKubeconfig. It prints `ready` once the caches are
// synced, then `counts <writes> <events> <gets> <lists> <peak live heap bytes> <peak anonymous RSS bytes>` every
// 100 ms, and stops on SIGTERM, printing `writes-of <method>:<resource> <n>` for each kind of write it made. It
// returns the exit code.
func runOperator() int {
	ctrl.SetLogger(logr.Discard())
	if dir := os.Getenv(envProfileDir); dir != "" {
		stop, err := profile(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			return 1
		}
		defer stop()
	}
	if err := operatorProcess(); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		return 1
	}
	return 0
}

// profile starts a CPU profile into dir/cpu.pprof and returns the function that stops it and writes the heap
// profile dir/heap.pprof; while it runs, dir/heap-peak.pprof is the heap when the live heap was largest.
func profile(dir string) (func(), error) {
	runtime.MemProfileRate = 64 << 10 // finer than the default 512 KiB: the heap is tens of MiB
	cpu, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { // heap-peak.pprof: the heap when the live heap was at its largest
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var written uint64
		for t := time.NewTicker(200 * time.Millisecond); ; {
			select {
			case <-done:
				return
			case <-t.C:
				if metrics.Read(sample); sample[0].Value.Uint64() > written*21/20 {
					written = sample[0].Value.Uint64()
					if f, err := os.Create(filepath.Join(dir, "heap-peak.pprof")); err == nil {
						_ = pprof.Lookup("heap").WriteTo(f, 0)
						_ = f.Close()
					}
				}
			}
		}
	}()
	return func() {
		close(done)
		pprof.StopCPUProfile()
		_ = cpu.Close()
		if heap, err := os.Create(filepath.Join(dir, "heap.pprof")); err == nil {
			_ = pprof.Lookup("heap").WriteTo(heap, 0)
			_ = heap.Close()
		}
	}, nil
}

func operatorProcess() error {
	if err := os.Setenv("KUBECONFIG", os.Getenv(envOperatorKubeconfig)); err != nil {
		return err
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	counts := &apiCounts{}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return requestCounter{next: rt, counts: counts} }
	workers, err := strconv.Atoi(os.Getenv(envOperatorWorkers))
	if err != nil {
		return fmt.Errorf("%s: %w", envOperatorWorkers, err)
	}
	gc := manager.DefaultGCPercent
	if v := os.Getenv(envGCPercent); v != "" {
		if gc, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("%s: %w", envGCPercent, err)
		}
	}
	if err := manager.SetGCPercent(gc); err != nil {
		return err
	}
	ctrlOpts, err := manager.ControllerOptions(workers)
	if err != nil {
		return err
	}
	s, err := scheme.New()
	if err != nil {
		return err
	}
	opCfg := testConfig()
	opCfg.PromxyRulesConfigMap = opCfg.ReleaseName + "-promxy-rules"
	opCfg.WatchNamespaces = strings.Split(os.Getenv(envOperatorNamespaces), ",")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: s, MapperProvider: manager.NewRESTMapper,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Cache: cacheconfig.Options(opCfg), Controller: ctrlOpts})
	if err != nil {
		return err
	}
	if err := manager.Setup(mgr, opCfg); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			fmt.Println("ready")
		}
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peakLive, peakAnon uint64
		for t := time.NewTicker(100 * time.Millisecond); ; {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				metrics.Read(sample)
				peakLive = max(peakLive, sample[0].Value.Uint64())
				peakAnon = max(peakAnon, uint64(statusMiB("self", "RssAnon:")*(1<<20)))
				fmt.Printf("counts %d %d %d %d %d %d\n", counts.writes.Load(), counts.events.Load(), counts.gets.Load(),
					counts.lists.Load(), peakLive, peakAnon)
			}
		}
	}()
	err = mgr.Start(ctx)
	counts.byResource.Range(func(k, v any) bool {
		fmt.Printf("writes-of %s %d\n", strings.ReplaceAll(k.(string), " ", ":"), v.(*atomic.Int64).Load())
		return true
	})
	return err
}

// process is the operator process as the benchmark sees it: its latest counts and its pid.
type process struct {
	cmd    *exec.Cmd
	counts apiCounts
	// peakLive is the largest live heap (bytes, runtime/metrics /gc/heap/live:bytes) the process reported.
	peakLive atomic.Int64
	// peakAnon is the largest anonymous resident memory (bytes, RssAnon of /proc/self/status) the process reported:
	// its heap, stacks and runtime memory without the mapped binary.
	peakAnon atomic.Int64
	ready    chan struct{}
	// writesOf are the writes per "<method>:<resource>" the process printed when it stopped.
	writesOf map[string]int64
	exited   chan struct{} // closed when its output ends
	done     sync.WaitGroup
}

// startProcess starts the operator process with workers per controller, watching the namespaces (and the release
// and KCM namespaces), against the envtest control plane and waits until its caches are synced.
func startProcess(workers int, namespaces ...string) (*process, error) {
	dir, err := os.MkdirTemp("", "kof-scale")
	if err != nil {
		return nil, err
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, env.KubeConfig(), 0o600); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &process{ready: make(chan struct{}), exited: make(chan struct{}), writesOf: map[string]int64{}}
	p.cmd = exec.Command(self)
	p.cmd.Env = append(os.Environ(), envOperatorKubeconfig+"="+kc, envOperatorWorkers+"="+strconv.Itoa(workers),
		envOperatorNamespaces+"="+strings.Join(namespaces, ","))
	p.cmd.Stderr = os.Stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	proc.DieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.done.Add(1)
	go p.read(out)
	select {
	case <-p.ready:
		return p, nil
	case <-p.exited:
		p.stop()
		return nil, fmt.Errorf("operator process ended before it was ready")
	case <-time.After(2 * time.Minute):
		p.stop()
		return nil, fmt.Errorf("operator process not ready after 2 minutes")
	}
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

// stop ends the process with SIGTERM and waits for it.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	p.done.Wait()
}

// cpuSeconds returns the user + system CPU seconds of pid (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of
// 1/100 s, the USER_HZ of Linux), 0 when unknown.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 on; comm may hold spaces
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
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
