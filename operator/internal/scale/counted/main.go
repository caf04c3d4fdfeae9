// Command counted is the kof-operator program (operator.RunWith, the same flags and environment as
// cmd/kof-operator) with its API requests counted, for the scale benchmark of operator/internal/scale, which starts
// it with the args and env kof-mothership gives the operator container. It links nothing the shipped program does
// not, besides the counting, so its memory is the shipped program's.
//
// On stdout it prints `ready` once it leads and its caches are synced, then `counts <writes> <events> <gets>
// <lists> <peak live heap bytes> <peak anonymous RSS bytes>` every 100 ms, and when it stops (SIGTERM)
// `writes-of <method>:<resource> <n>` for each kind of write it made. With KOF_SCALE_PROFILE_DIR set it writes
// cpu.pprof (its whole life), heap-peak.pprof (the heap when the live heap was largest) and heap.pprof (when it
// stops) there. With KOF_SCALE_REWRITES set it also counts the writes per object and prints, when it stops,
// `rewritten <n> <method>:<path>` for the objects written more than once, most written first (off by default: the
// counts cost memory, about 100 bytes per object written, which the RSS figures would include).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"

	"kof.dev/kof/operator"
)

// envProfileDir, when set, is where the process writes its profiles.
const envProfileDir = "KOF_SCALE_PROFILE_DIR"

// envRewrites, when set, makes the process count its writes per object and report the objects written more than
// once.
const envRewrites = "KOF_SCALE_REWRITES"

func main() { os.Exit(run()) }

// apiCounts are the API requests of one process by class.
type apiCounts struct {
	writes, events, gets, lists atomic.Int64
	// byResource counts the writes per "<method> <resource>" (*atomic.Int64 values).
	byResource sync.Map
	// byObject, when not nil, counts the writes per "<method>:<path>" (*atomic.Int64 values).
	byObject *sync.Map
}

// addWrite counts a write of method to the resource of path.
func (c *apiCounts) addWrite(method, path string) {
	c.writes.Add(1)
	n, _ := c.byResource.LoadOrStore(method+" "+resourceOf(path), &atomic.Int64{})
	n.(*atomic.Int64).Add(1)
	if c.byObject != nil {
		o, _ := c.byObject.LoadOrStore(method+":"+path, &atomic.Int64{})
		o.(*atomic.Int64).Add(1)
	}
}

// rewritten returns the "<method>:<path>" of the objects written more than once with their counts, most written
// first (ties by path).
func (c *apiCounts) rewritten() []rewrite {
	if c.byObject == nil {
		return nil
	}
	var out []rewrite
	c.byObject.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n > 1 {
			out = append(out, rewrite{what: k.(string), n: n})
		}
		return true
	})
	slices.SortFunc(out, func(a, b rewrite) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.what, b.what)) })
	return out
}

// rewrite is an object written more than once: "<method>:<path>" and the number of writes.
type rewrite struct {
	what string
	n    int64
}

// requestCounter sorts the requests of a process into apiCounts: events (any request under /events), the leader
// election's Lease requests and watches (ignored: the Lease is renewed every 2 s whatever the fleet does, and the
// watches are the informers' streams), GETs of one object and LISTs (reads that bypass the cache, apart from
// each informer's initial LIST), and writes (every other method).
type requestCounter struct {
	next   http.RoundTripper
	counts *apiCounts
}

func (c requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case strings.Contains(req.URL.Path, "/events"):
		c.counts.events.Add(1)
	case strings.Contains(req.URL.Path, "/leases"): // leader election: a renewal every 2 s, whatever the fleet
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

// run is the program (the package documentation); it returns the exit code.
func run() int {
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

// operatorProcess runs the operator as cmd/kof-operator does (operator.RunWith: the flags in os.Args, the
// environment), its API client wrapped by the request counter, and reports as runOperator says once it leads.
func operatorProcess() error {
	counts := &apiCounts{}
	if os.Getenv(envRewrites) != "" {
		counts.byObject = &sync.Map{}
	}
	err := operator.RunWith(flag.CommandLine, os.Args[1:], os.Getenv, operator.Hooks{
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { return requestCounter{next: rt, counts: counts} },
		// A runnable runs once the process leads (leader election as the chart ships it).
		Manager: func(mgr ctrl.Manager) error {
			return mgr.Add(ctrlmanager.RunnableFunc(func(ctx context.Context) error {
				report(ctx, mgr, counts)
				return nil
			}))
		},
	})
	counts.byResource.Range(func(k, v any) bool {
		fmt.Printf("writes-of %s %d\n", strings.ReplaceAll(k.(string), " ", ":"), v.(*atomic.Int64).Load())
		return true
	})
	for _, r := range counts.rewritten() {
		fmt.Printf("rewritten %d %s\n", r.n, r.what)
	}
	return err
}

// report prints `ready` once the caches of mgr are synced, then the counts line every 100 ms until ctx ends.
func report(ctx context.Context, mgr ctrl.Manager, counts *apiCounts) {
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return
	}
	fmt.Println("ready")
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
}

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
