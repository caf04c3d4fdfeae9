package vmstorageconnection

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/endpoints"
	"kof.dev/kof/operator/internal/cacheconfig"
	"kof.dev/kof/operator/internal/testenv"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/vmapi"
)

// auditedWrite is one write request the operator's client sent, with the body of storage cluster and status writes.
type auditedWrite struct{ method, path, body string }

// writeAudit records every write (any method but GET) its client sends to the API server, events apart.
type writeAudit struct {
	next   http.RoundTripper
	mu     *sync.Mutex
	writes *[]auditedWrite
	last   *atomic.Int64 // unix nanoseconds of the latest write
}

func (a writeAudit) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && !strings.Contains(req.URL.Path, "/events") {
		w := auditedWrite{method: req.Method, path: req.URL.Path}
		if p := req.URL.Path; (strings.Contains(p, "/vlclusters/") || strings.Contains(p, "/vtclusters/") ||
			strings.HasSuffix(p, "/status")) && req.GetBody != nil {
			if rc, err := req.GetBody(); err == nil {
				b, _ := io.ReadAll(rc)
				w.body = string(b)
			}
		}
		a.mu.Lock()
		*a.writes = append(*a.writes, w)
		a.mu.Unlock()
		a.last.Store(time.Now().UnixNano())
	}
	return a.next.RoundTrip(req)
}

// raceRun numbers the runs of TestParallelRegionalsDeleteNoCredentialsCopy (`-count=20` runs it 20 times on one
// control plane), so that each has namespaces of its own.
var raceRun atomic.Int64

// TestParallelRegionalsDeleteNoCredentialsCopy creates 20 regionals' storage connections (the traces, logs and audit
// logs VMStorageConnections outputs.StorageConnections gives for each, with each regional's admin credentials
// Secret) all at once, next to the chart's VLClusters and VTCluster, with the controller running 4 workers on the
// operator's cache, and audits every API write it makes until steady state: the clusters carry all 20 storage
// nodes, all 20 credentials copies exist, not one DELETE of a credentials copy was sent, and each copy was written
// exactly once, and no storage cluster or connection status was written again with what its previous write
// carried. Regressions: the sync pruned copies by a connection list read before a parallel reconcile made a copy
// for a newer connection, so in most runs 1-3 copies were deleted and re-made a moment later (docs/ha.md: the select
// pods mounting them lose the Secret for that moment); and parallel syncs of the three clusters each found a new copy
// missing and wrote it, 65-78 writes for the 20 copies; parallel syncs of one cluster each applied the same nodes
// (up to 4 identical applies within a millisecond), and a reconcile that read a connection before the cache held its
// status patch patched the same status again (new transition times) and emitted its Event twice.
func TestParallelRegionalsDeleteNoCredentialsCopy(t *testing.T) {
	const regionals, workers = 20, 4
	ctx := context.Background()
	run := raceRun.Add(1)
	cfg := testenv.OperatorConfig()
	cfg.ReleaseNamespace = fmt.Sprintf("race%d-kof", run)
	regionalNS := fmt.Sprintf("race%d-kcm", run)
	for _, ns := range []string{cfg.ReleaseNamespace, regionalNS} {
		create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for _, name := range []string{cfg.VLClusterName, cfg.VLAuditClusterName} {
		create(t, ctx, &vmapi.VLCluster{ObjectMeta: metav1.ObjectMeta{Namespace: cfg.ReleaseNamespace, Name: name}})
	}
	create(t, ctx, &vmapi.VTCluster{ObjectMeta: metav1.ObjectMeta{Namespace: cfg.ReleaseNamespace, Name: cfg.VTClusterName}})

	var mu sync.Mutex
	var writes []auditedWrite
	var last atomic.Int64
	rc := rest.CopyConfig(env.Config)
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return writeAudit{next: rt, mu: &mu, writes: &writes, last: &last}
	}
	cfg.WatchNamespaces = []string{cfg.ReleaseNamespace, regionalNS}
	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      cacheconfig.Options(cfg),
		Controller: config.Controller{MaxConcurrentReconciles: workers, SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: events.NewFakeRecorder(1000)}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		t.Fatal("cache not synced")
	}

	// Every regional's admin credentials Secret and its three connections, all created at once.
	var objs []client.Object
	copiesWanted := map[string]bool{}
	for i := range regionals {
		in := outputs.RegionalInput{Namespace: regionalNS, Cluster: fmt.Sprintf("r%d", i),
			Reads: endpoints.Domain(fmt.Sprintf("r%d.example.com", i)).ReadOnly()}
		secret := names.VMUserSecret(names.AdminVMUserBase(in.Namespace, in.Cluster))
		copiesWanted[secret] = true
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: regionalNS, Name: secret},
			Data: map[string][]byte{outputs.UsernameKey: []byte("admin-" + in.Cluster), outputs.PasswordKey: []byte("0123456789abcdef")}})
		for _, c := range outputs.StorageConnections(cfg, in) {
			c.TypeMeta = metav1.TypeMeta{}
			objs = append(objs, c)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	for _, o := range objs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := env.Client.Create(ctx, o); err != nil {
				errs <- fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Steady state: every cluster has the 20 nodes, every copy exists, and no write for 2 s.
	deadline, note := time.Now().Add(2*time.Minute), "no read yet"
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no steady state within 2 minutes: %s", note)
		}
		time.Sleep(200 * time.Millisecond)
		if time.Since(time.Unix(0, last.Load())) < 2*time.Second {
			continue
		}
		nodes, err := storageNodeCounts(ctx, cfg.ReleaseNamespace, cfg.VLClusterName, cfg.VLAuditClusterName, cfg.VTClusterName)
		if err != nil {
			note = err.Error()
			continue
		}
		var copies corev1.SecretList
		if err := env.Client.List(ctx, &copies, client.InNamespace(cfg.ReleaseNamespace)); err != nil {
			note = err.Error()
			continue
		}
		have := 0
		for _, s := range copies.Items {
			if copiesWanted[s.Name] && s.Annotations[kofv1.SourceSecretAnnotation] == regionalNS+"/"+s.Name {
				have++
			}
		}
		note = fmt.Sprintf("storage nodes per cluster %v, %d of %d copies", nodes, have, regionals)
		if have == regionals && nodes[0] == regionals && nodes[1] == regionals && nodes[2] == regionals {
			break
		}
	}

	mu.Lock()
	defer mu.Unlock()
	secrets := "/api/v1/namespaces/" + cfg.ReleaseNamespace + "/secrets"
	var deletes []string
	applies := 0
	for _, w := range writes {
		switch {
		case w.method == http.MethodDelete && strings.HasPrefix(w.path, secrets):
			deletes = append(deletes, w.path)
		case w.method == http.MethodPatch && strings.HasPrefix(w.path, secrets+"/"):
			applies++
		}
	}
	if len(deletes) > 0 {
		t.Errorf("%d DELETEs of credentials copies while %d regionals were connected: %v", len(deletes), regionals, deletes)
	}
	if applies != regionals {
		t.Errorf("%d applies of the %d credentials copies; want each written once", applies, regionals)
	}
	times := regexp.MustCompile(`"lastTransitionTime":"[^"]*"`)
	prev := map[string]string{}
	repeated := map[string]int{}
	clusterWrites := 0
	for _, w := range writes {
		if w.body == "" {
			continue
		}
		if !strings.HasSuffix(w.path, "/status") {
			clusterWrites++
		}
		body := times.ReplaceAllString(w.body, "")
		if prev[w.path] == body {
			repeated[w.path]++
		}
		prev[w.path] = body
	}
	if len(repeated) > 0 {
		t.Errorf("objects written again with what their previous write carried (path: repeats): %v", repeated)
	}
	t.Logf("%d API writes: %d applies and %d DELETEs of credentials copies, %d storage cluster applies", len(writes), applies, len(deletes), clusterWrites)
}

// storageNodeCounts returns how many storage nodes the `storageNode` extraArg of the select component of the
// VLClusters vl and audit and the VTCluster vt in ns lists.
func storageNodeCounts(ctx context.Context, ns, vl, audit, vt string) ([3]int, error) {
	var out [3]int
	count := func(sel *vmapi.SelectComponent) int {
		if sel == nil || sel.ExtraArgs[ArgStorageNode] == "" {
			return 0
		}
		return len(strings.Split(sel.ExtraArgs[ArgStorageNode], ","))
	}
	for i, name := range []string{vl, audit} {
		var c vmapi.VLCluster
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
			return out, err
		}
		out[i] = count(c.Spec.VLSelect)
	}
	var c vmapi.VTCluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: vt}, &c); err != nil {
		return out, err
	}
	out[2] = count(c.Spec.Select)
	return out, nil
}
