package scale

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/manager"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/ownership"
	"kof.dev/kof/operator/vmapi"
)

// envChildren overrides the child count of BenchmarkFleetLarge (default 1,000) on a machine too slow for it.
const envChildren = "KOF_SCALE_CHILDREN"

// floorFieldManager is the field manager of the floor client's applies.
const floorFieldManager = "kof-scale-floor"

// BenchmarkFleet200 is BenchmarkFleet at 20 regional and 200 child ClusterDeployments.
// Run: go test -run XXX -bench Fleet -benchtime 1x ./operator/internal/scale/
func BenchmarkFleet200(b *testing.B) { benchmarkFleet(b, 20, 200) }

// BenchmarkFleetLarge is BenchmarkFleet at 20 regional and KOF_SCALE_CHILDREN (default 1,000) child
// ClusterDeployments.
func BenchmarkFleetLarge(b *testing.B) {
	nc := 1000
	if v := os.Getenv(envChildren); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number of children", envChildren, v)
		}
		nc = n
	}
	benchmarkFleet(b, 20, nc)
}

// benchmarkFleet measures, on one control plane and in one run, the operator (its own process, manager.DefaultWorkers
// workers per controller) from the first create of nr regional and nc child ClusterDeployments to steady state,
// then the floor: a client that creates the same fleet and server-side applies exactly the objects
// outputs.Compute says the operator writes for it, with as many parallel appliers as the operator has workers.
// It reports time / floor, the operator's API writes per desired object (events apart), its reads that bypass the
// cache (GETs; LISTs including each informer's first one), writes after a no-op touch of every child, the
// kube-apiserver and etcd CPU seconds of each side, the operator's CPU seconds and peak RSS.
func benchmarkFleet(b *testing.B, nr, nc int) {
	ctx := context.Background()
	apiserver, etcd, err := controlPlane()
	if err != nil {
		b.Fatal(err)
	}
	meter := cpuMeter{apiserver: apiserver, etcd: etcd}
	for i := 0; b.Loop(); i++ {
		workers := manager.DefaultWorkers
		ns := fmt.Sprintf("op-%d-%d", nc, i)
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		p, err := startProcess(workers, ns)
		if err != nil {
			b.Fatal(err)
		}
		idle := rssOf(strconv.Itoa(p.cmd.Process.Pid))
		cpu0, op0 := meter.sample(), cpuSeconds(p.cmd.Process.Pid)
		waitProfile := profileAPIServer(fmt.Sprintf("apiserver-operator-%d.pprof", nc), 12)
		start := time.Now()
		if err := fleet(ctx, ns, nr, nc); err != nil {
			p.stop()
			b.Fatal(err)
		}
		last, err := steadyProcess(ctx, p, ns, nr, nc, 3*time.Second)
		if err != nil {
			p.stop()
			b.Fatal(err)
		}
		opTime := last.Sub(start)
		cpu1, op1 := meter.sample(), cpuSeconds(p.cmd.Process.Pid)
		writes, events := p.counts.writes.Load(), p.counts.events.Load()
		gets, lists := p.counts.gets.Load(), p.counts.lists.Load()
		touchWrites, err := touch(ctx, p, ns, nc)
		if err != nil {
			p.stop()
			b.Fatal(err)
		}
		rss, live := peakRSSOf(strconv.Itoa(p.cmd.Process.Pid)), float64(p.peakLive.Load())/(1<<20)
		anon := float64(p.peakAnon.Load()) / (1 << 20)
		p.stop()
		b.Logf("operator writes by method and resource: %v", p.writesOf)

		floorNS := fmt.Sprintf("floor-%d-%d", nc, i)
		waitProfile()
		waitProfile = profileAPIServer(fmt.Sprintf("apiserver-floor-%d.pprof", nc), 7)
		f0 := meter.sample()
		fstart := time.Now()
		desired, err := floor(ctx, floorNS, nr, nc, workers)
		if err != nil {
			b.Fatal(err)
		}
		floorTime := time.Since(fstart)
		f1 := meter.sample()
		waitProfile()

		opAPI, floorAPI := cpu1[0]-cpu0[0], f1[0]-f0[0]
		b.ReportMetric(opTime.Seconds(), "s-to-steady")
		b.ReportMetric(floorTime.Seconds(), "s-floor")
		b.ReportMetric(opTime.Seconds()/floorTime.Seconds(), "time/floor")
		b.ReportMetric(float64(desired), "desired-objects")
		b.ReportMetric(float64(writes)/float64(desired), "writes/desired-object")
		b.ReportMetric(float64(events), "events")
		b.ReportMetric(float64(gets), "direct-gets")
		b.ReportMetric(float64(lists), "lists")
		b.ReportMetric(float64(touchWrites), "touch-writes")
		b.ReportMetric(opAPI, "apiserver-cpu-s")
		b.ReportMetric(floorAPI, "floor-apiserver-cpu-s")
		b.ReportMetric(opAPI/floorAPI, "apiserver-cpu/floor")
		b.ReportMetric(cpu1[1]-cpu0[1], "etcd-cpu-s")
		b.ReportMetric(f1[1]-f0[1], "floor-etcd-cpu-s")
		b.ReportMetric(op1-op0, "operator-cpu-s")
		b.ReportMetric(rss, "operator-peak-RSS-MiB")
		b.ReportMetric(live, "operator-peak-live-heap-MiB")
		b.ReportMetric(anon, "operator-peak-anon-RSS-MiB")
		b.ReportMetric(idle, "operator-idle-RSS-MiB")
	}
}

// steadyProcess waits until ns holds the VMUsers of nr admins and nc children and the operator process made no
// write for quiet; it returns when the last write was seen.
func steadyProcess(ctx context.Context, p *process, ns string, nr, nc int, quiet time.Duration) (time.Time, error) {
	deadline := time.Now().Add(20 * time.Minute)
	last, lastChange := p.counts.writes.Load(), time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if w := p.counts.writes.Load(); w != last {
			last, lastChange = w, time.Now()
			continue
		}
		if time.Since(lastChange) < quiet {
			continue
		}
		var users vmapi.VMUserList
		if err := env.Client.List(ctx, &users, client.InNamespace(ns)); err != nil {
			return time.Time{}, err
		}
		var cms corev1.ConfigMapList
		if err := env.Client.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{kofv1.RegionalClusterNameLabel}); err != nil {
			return time.Time{}, err
		}
		if len(users.Items) == nr+nc && len(cms.Items) == nc {
			return lastChange, nil
		}
	}
	return time.Time{}, fmt.Errorf("no steady state in %s", ns)
}

// touchAnnotation is set on every child by touch: a change that matters to nothing the operator writes.
const touchAnnotation = "scale.kof.dev/touched"

// touch annotates every child of ns (a change the operator sees and must not answer with a write) and returns the
// operator's writes until it is quiet again.
func touch(ctx context.Context, p *process, ns string, nc int) (int64, error) {
	before := p.counts.writes.Load()
	for i := range nc {
		cd := &kcmv1.ClusterDeployment{}
		cd.Namespace, cd.Name = ns, "c"+strconv.Itoa(i)
		patch := []byte(`{"metadata":{"annotations":{"` + touchAnnotation + `":"1"}}}`)
		if err := env.Client.Patch(ctx, cd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return 0, fmt.Errorf("touch %s: %w", cd.Name, err)
		}
	}
	last, lastChange := p.counts.writes.Load(), time.Now()
	for time.Since(lastChange) < 3*time.Second {
		time.Sleep(100 * time.Millisecond)
		if w := p.counts.writes.Load(); w != last {
			last, lastChange = w, time.Now()
		}
	}
	return last - before, nil
}

// floor creates the fleet of nr regionals and nc children in ns like fleet, then server-side applies every object
// outputs.Compute gives for it with workers parallel appliers, and returns the number of those objects.
func floor(ctx context.Context, ns string, nr, nc, workers int) (int, error) {
	if err := fleet(ctx, ns, nr, nc); err != nil {
		return 0, err
	}
	objs, err := desiredObjects(ctx, ns)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	work := make(chan *unstructured.Unstructured)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
					client.FieldOwner(floorFieldManager), client.ForceOwnership); err != nil {
					errs <- fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
				}
			}
		}()
	}
	for _, u := range objs {
		work <- u
	}
	close(work)
	wg.Wait()
	close(errs)
	return len(objs), <-errs
}

// desiredObjects returns outputs.Compute of the ClusterDeployments and ClusterTemplates in ns, as unstructured
// objects ready to apply.
func desiredObjects(ctx context.Context, ns string) ([]*unstructured.Unstructured, error) {
	var cds kcmv1.ClusterDeploymentList
	if err := env.Client.List(ctx, &cds, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var tpls kcmv1.ClusterTemplateList
	if err := env.Client.List(ctx, &tpls, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := outputs.Compute(outputs.Input{Config: testConfig(), ClusterDeployments: cds.Items,
		ClusterTemplates: tpls.Items, Password: "floor-password-0123456789"})
	objs := make([]*unstructured.Unstructured, 0, len(out.Objects))
	for _, o := range out.Objects {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.Object)
		if err != nil {
			return nil, fmt.Errorf("convert %s: %w", o.GetName(), err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
		ownership.Prune(u.Object)
		objs = append(objs, u)
	}
	return objs, nil
}
