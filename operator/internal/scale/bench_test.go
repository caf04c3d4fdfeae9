package scale

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
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
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/controller/vmstorageconnection"
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

// BenchmarkFleet10kBy20 is BenchmarkFleet at 20 regional and 10,000 child ClusterDeployments (500 children per
// regional).
func BenchmarkFleet10kBy20(b *testing.B) { benchmarkFleet(b, 20, 10000) }

// BenchmarkFleet10kBy100 is BenchmarkFleet at 100 regional and 10,000 child ClusterDeployments, the size docs/ha.md
// sizes the operator for.
func BenchmarkFleet10kBy100(b *testing.B) { benchmarkFleet(b, 100, 10000) }

// benchmarkFleet measures, on one control plane and in one run, the operator as kof-mothership ships it (its own
// process run by operator.RunWith with the chart's default args and env: workers, client limits, GC percent,
// leader election; shippedOperator) from the first create of nr regional and nc child ClusterDeployments, next to
// the chart's VLClusters and VTCluster in the release namespace, to steady state, then the floor: a client that
// creates the same fleet and server-side applies exactly the objects the operator writes for it (outputs.Compute,
// plus the storage nodes of each storage cluster and one credentials copy per regional: storageObjects), with as
// many parallel appliers as the operator has workers.
// It reports time / floor, the operator's API writes per desired object (events apart), its reads that bypass the
// cache (GETs; LISTs including each informer's first one), writes after a no-op touch of every child, the
// kube-apiserver and etcd CPU seconds of each side, the operator's CPU seconds and memory (peak RSS with the mapped
// binary, peak anonymous RSS, peak live heap, RSS when idle). Each iteration runs KOF_SCALE_ROUNDS (default 3)
// rounds of operator then floor and reports the median of each metric (the largest for memory, no-op writes and
// direct reads: summary).
func benchmarkFleet(b *testing.B, nr, nc int) {
	ctx := context.Background()
	if testing.Short() { // make test runs every benchmark once, small, to prove it works
		nr, nc = 2, 6
	}
	apiserver, etcd, err := controlPlane()
	if err != nil {
		b.Fatal(err)
	}
	meter := cpuMeter{apiserver: apiserver, etcd: etcd}
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	if v := os.Getenv(envRounds); v != "" {
		if rounds, err = strconv.Atoi(v); err != nil || rounds < 1 {
			b.Fatalf("%s=%q: want a positive number of rounds", envRounds, v)
		}
	}
	for i := 0; b.Loop(); i++ {
		var all []map[string]float64
		for r := range rounds {
			// The round's namespaces are named for the benchmark too: with -short both run the same size.
			id := strings.ToLower(strings.TrimPrefix(b.Name(), "Benchmark"))
			m, err := fleetRound(ctx, b, meter, nr, nc, fmt.Sprintf("%s-%d-%d-%d", id, nc, i, r))
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("round %d: %v", r, m)
			all = append(all, m)
		}
		for unit := range all[0] {
			vals := make([]float64, len(all))
			for k, m := range all {
				vals[k] = m[unit]
			}
			b.ReportMetric(summary(unit, vals), unit)
		}
	}
}

// envRounds overrides the rounds (operator run + floor run) of each benchmark iteration (default 3).
const envRounds = "KOF_SCALE_ROUNDS"

// worstOf are the metrics reported as their largest value over the rounds; the others are reported as the median.
var worstOf = map[string]bool{"operator-peak-RSS-MiB": true, "operator-peak-anon-RSS-MiB": true,
	"operator-peak-live-heap-MiB": true, "touch-writes": true, "direct-gets": true}

// summary returns the largest of vals for a worstOf unit, else their median: a shared machine makes single runs
// noisy, and each round measures the operator and the floor back to back.
func summary(unit string, vals []float64) float64 {
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	if worstOf[unit] {
		return sorted[len(sorted)-1]
	}
	if n := len(sorted); n%2 == 0 {
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return sorted[len(sorted)/2]
}

// fleetRound measures one round (the package documentation of benchmarkFleet) in namespaces named after id and
// returns its metrics by unit.
func fleetRound(ctx context.Context, b *testing.B, meter cpuMeter, nr, nc int, id string) (map[string]float64, error) {
	// The release namespace is not the fleet's, as on a management cluster (kof and kcm-system): the regionals'
	// credentials are copied into it for the storage clusters.
	rel, ns := "kof-"+id, "op-"+id
	sh, err := shippedOperator(rel, ns)
	if err != nil {
		return nil, err
	}
	for _, n := range []string{rel, ns} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			return nil, err
		}
	}
	if err := storageClusters(ctx, sh.cfg); err != nil {
		return nil, err
	}
	p, err := startProcess(sh)
	if err != nil {
		return nil, err
	}
	idle := rssOf(strconv.Itoa(p.cmd.Process.Pid))
	waitProfile := profileAPIServer(fmt.Sprintf("apiserver-operator-%d.pprof", nc), 12)
	cpu0, op0 := meter.sample(), cpuSeconds(p.cmd.Process.Pid)
	start := time.Now()
	if err := fleet(ctx, ns, nr, nc); err != nil {
		p.stop()
		return nil, err
	}
	last, err := steadyProcess(ctx, p, sh.cfg, ns, nr, nc, 3*time.Second)
	if err != nil {
		p.stop()
		return nil, err
	}
	opTime := last.Sub(start)
	cpu1, op1 := meter.sample(), cpuSeconds(p.cmd.Process.Pid)
	writes, events := p.counts.writes.Load(), p.counts.events.Load()
	gets, lists := p.counts.gets.Load(), p.counts.lists.Load()
	touchWrites, err := touch(ctx, p, ns, nc)
	if err != nil {
		p.stop()
		return nil, err
	}
	rss, live := peakRSSOf(strconv.Itoa(p.cmd.Process.Pid)), float64(p.peakLive.Load())/(1<<20)
	anon := float64(p.peakAnon.Load()) / (1 << 20)
	p.stop()
	b.Logf("operator writes by method and resource: %v", p.writesOf)
	if len(p.rewritten) > 0 { // KOF_SCALE_REWRITES
		b.Logf("%d objects written more than once, most written first: %v", len(p.rewritten), p.rewritten[:min(20, len(p.rewritten))])
	}

	waitProfile()
	waitProfile = profileAPIServer(fmt.Sprintf("apiserver-floor-%d.pprof", nc), 7)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "floorkof-" + id}}); err != nil {
		return nil, err
	}
	f0 := meter.sample()
	fstart := time.Now()
	fsh, err := shippedOperator("floorkof-"+id, "floor-"+id)
	if err != nil {
		return nil, err
	}
	desired, byKind, err := floor(ctx, fsh.cfg, "floor-"+id, nr, nc, sh.flags.Workers)
	if err != nil {
		return nil, err
	}
	floorTime := time.Since(fstart)
	b.Logf("desired objects by kind: %v", byKind)
	f1 := meter.sample()
	waitProfile()
	// MultiClusterServices are cluster-scoped: the next round's operator would cache this round's.
	if err := deleteMultiClusterServices(ctx); err != nil {
		return nil, err
	}

	opAPI, floorAPI := cpu1[0]-cpu0[0], f1[0]-f0[0]
	return map[string]float64{
		"s-to-steady":                 opTime.Seconds(),
		"s-floor":                     floorTime.Seconds(),
		"time/floor":                  opTime.Seconds() / floorTime.Seconds(),
		"desired-objects":             float64(desired),
		"writes/desired-object":       float64(writes) / float64(desired),
		"events":                      float64(events),
		"direct-gets":                 float64(gets),
		"lists":                       float64(lists),
		"touch-writes":                float64(touchWrites),
		"apiserver-cpu-s":             opAPI,
		"floor-apiserver-cpu-s":       floorAPI,
		"apiserver-cpu/floor":         opAPI / floorAPI,
		"etcd-cpu-s":                  cpu1[1] - cpu0[1],
		"floor-etcd-cpu-s":            f1[1] - f0[1],
		"operator-cpu-s":              op1 - op0,
		"operator-peak-RSS-MiB":       rss,
		"operator-peak-live-heap-MiB": live,
		"operator-peak-anon-RSS-MiB":  anon,
		"operator-idle-RSS-MiB":       idle,
	}, nil
}

// deleteMultiClusterServices deletes every MultiClusterService and waits until none is left. A delete of 20,000
// (a round at 10,000 children) outlasts the API server's request timeout while the server goes on deleting, so a
// failed delete is retried until the list is empty or 10 minutes have passed.
func deleteMultiClusterServices(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		err := env.Client.DeleteAllOf(ctx, &kcmv1.MultiClusterService{})
		var left kcmv1.MultiClusterServiceList
		lerr := env.Client.List(ctx, &left, client.Limit(1))
		if err == nil && lerr == nil && len(left.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("delete the round's MultiClusterServices: still there after 10 minutes (delete: %v, list: %v)", err, lerr)
		}
		time.Sleep(time.Second)
	}
}

// steadyProcess waits until ns holds the VMUsers of nr admins and nc children, the release namespace of cfg the
// credentials copies of the nr regionals, and the operator process made no write for quiet; it returns when the
// last write was seen (settle).
func steadyProcess(ctx context.Context, p *process, cfg config.Config, ns string, nr, nc int, quiet time.Duration) (time.Time, error) {
	return settle(ctx, p.counts.writes.Load, p.exited, cfg.ReleaseNamespace, ns, nr, nc, quiet, 100*time.Millisecond)
}

// settle polls every poll until ns holds the VMUsers of nr admins and nc children (and, when rel is set, rel holds
// nr credentials copies) and writes() has not changed for quiet, and returns when it last changed. A failed list is
// pending (the API server is busy during a burst); the end of exited (nil: never) fails at once; the 20-minute
// timeout names the last counts or list error.
func settle(ctx context.Context, writes func() int64, exited <-chan struct{}, rel, ns string, nr, nc int,
	quiet, poll time.Duration) (time.Time, error) {
	deadline := time.Now().Add(20 * time.Minute)
	last, lastChange := writes(), time.Now()
	note := "no read yet"
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return time.Time{}, fmt.Errorf("the operator process ended while %s settled (%s)", ns, note)
		case <-time.After(poll):
		}
		if w := writes(); w != last {
			last, lastChange = w, time.Now()
			continue
		}
		if time.Since(lastChange) < quiet {
			continue
		}
		var users vmapi.VMUserList
		if err := env.Client.List(ctx, &users, client.InNamespace(ns)); err != nil {
			note = "list VMUsers: " + err.Error()
			continue
		}
		var cms corev1.ConfigMapList
		if err := env.Client.List(ctx, &cms, client.InNamespace(ns), client.HasLabels{kofv1.RegionalClusterNameLabel}); err != nil {
			note = "list regional ConfigMaps: " + err.Error()
			continue
		}
		copies := nr
		if rel != "" {
			var secrets corev1.SecretList
			if err := env.Client.List(ctx, &secrets, client.InNamespace(rel), client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
				note = "list credentials copies: " + err.Error()
				continue
			}
			copies = 0
			for _, s := range secrets.Items {
				if strings.HasPrefix(s.Annotations[kofv1.SourceSecretAnnotation], ns+"/") {
					copies++
				}
			}
		}
		note = fmt.Sprintf("%d of %d VMUsers, %d of %d regional ConfigMaps, %d of %d credentials copies",
			len(users.Items), nr+nc, len(cms.Items), nc, copies, nr)
		if len(users.Items) == nr+nc && len(cms.Items) == nc && copies == nr {
			return lastChange, nil
		}
	}
	return time.Time{}, fmt.Errorf("no steady state in %s within 20 minutes: %s", ns, note)
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

// floor creates the fleet of nr regionals and nc children in ns like fleet, and the storage clusters of cfg, then
// server-side applies every object the operator writes for it (desiredObjects) with workers parallel appliers, and
// returns the number of those objects and their count by kind.
func floor(ctx context.Context, cfg config.Config, ns string, nr, nc, workers int) (int, map[string]int, error) {
	if err := storageClusters(ctx, cfg); err != nil {
		return 0, nil, err
	}
	if err := fleet(ctx, ns, nr, nc); err != nil {
		return 0, nil, err
	}
	objs, err := desiredObjects(ctx, cfg, ns)
	if err != nil {
		return 0, nil, err
	}
	objs = append(objs, storageObjects(cfg, objs)...)
	byKind := map[string]int{}
	for _, u := range objs {
		byKind[u.GetKind()]++
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
	return len(objs), byKind, <-errs
}

// desiredObjects returns outputs.Compute (with cfg) of the ClusterDeployments and ClusterTemplates in ns, as
// unstructured objects ready to apply.
func desiredObjects(ctx context.Context, cfg config.Config, ns string) ([]*unstructured.Unstructured, error) {
	var cds kcmv1.ClusterDeploymentList
	if err := env.Client.List(ctx, &cds, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var tpls kcmv1.ClusterTemplateList
	if err := env.Client.List(ctx, &tpls, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := outputs.Compute(outputs.Input{Config: cfg, ClusterDeployments: cds.Items,
		ClusterTemplates: tpls.Items, Password: "floor-password-0123456789"})
	objs := make([]*unstructured.Unstructured, 0, len(out.Objects))
	for _, o := range out.Objects {
		u, err := toUnstructured(o.Object)
		if err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// toUnstructured returns o as an unstructured object with its kind, without the fields an apply must not carry
// (ownership.Prune).
func toUnstructured(o client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", o.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	ownership.Prune(u.Object)
	return u, nil
}

// storageObjects returns what the VMStorageConnection controller writes for the VMStorageConnections among objs, at
// the least: each storage cluster of cfg once with every node (vmstorageconnection.DesiredFor and ClusterApply),
// and one copy in the release namespace of each credentials Secret they reference (vmstorageconnection.CopyOf of
// that Secret among objs).
func storageObjects(cfg config.Config, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	secrets := map[string]*unstructured.Unstructured{}
	byCluster := map[[2]string][]kofv1.VMStorageConnection{}
	for _, u := range objs {
		switch u.GetKind() {
		case "Secret":
			secrets[u.GetNamespace()+"/"+u.GetName()] = u
		case "VMStorageConnection":
			var c kofv1.VMStorageConnection
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c) == nil {
				k := [2]string{c.Spec.ClusterRef.Kind, c.Spec.ClusterRef.Name}
				byCluster[k] = append(byCluster[k], c)
			}
		}
	}
	var out []*unstructured.Unstructured
	copied := map[string]bool{}
	for _, k := range slices.SortedFunc(maps.Keys(byCluster), func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) }) {
		conns := byCluster[k]
		slices.SortFunc(conns, func(a, b kofv1.VMStorageConnection) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
		d := vmstorageconnection.DesiredFor(conns, func(c *kofv1.VMStorageConnection) string { return c.Spec.TargetStorageNode.Secret.Name })
		out = append(out, vmstorageconnection.ClusterApply(k[0], cfg.ReleaseNamespace, k[1], d.Secrets, d))
		for _, c := range conns {
			src := secrets[c.Namespace+"/"+c.Spec.TargetStorageNode.Secret.Name]
			if src == nil || copied[src.GetNamespace()+"/"+src.GetName()] || c.Namespace == cfg.ReleaseNamespace {
				continue
			}
			copied[src.GetNamespace()+"/"+src.GetName()] = true
			var s corev1.Secret
			if runtime.DefaultUnstructuredConverter.FromUnstructured(src.Object, &s) != nil {
				continue
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(vmstorageconnection.CopyOf(&s, cfg.ReleaseNamespace))
			if err == nil {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out
}
