package node

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/coldstorage"
	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/testproc"
)

// exportersNamespace holds the exporter releases (the user guides' `helm upgrade -i -n <namespace>`), enforcing the
// `restricted` Pod Security level.
const exportersNamespace = "kof-exporters"

// jobWait bounds the wait for one exporter Job to complete (or its pod to reach the blocked S3 request).
const jobWait = 2 * time.Minute

// Both exporter charts installed with the Helm SDK from the user guides' values (docs/cold-storage.md,
// docs/audit-logs.md: the S3 user holding exactly the guide's policy, its keys and the signing key in Secrets), their
// images built by the release code and pulled by digest from the node's registry. VictoriaMetrics, VictoriaLogs and
// MinIO run as pods of the same namespace (storagePods), reached through their Services. Each exporter's S3 endpoint
// is a reverse proxy of the test (on the node's IP) in front of MinIO's Service, so the run can be caught
// mid-window: the first manual Job (a Job made from the CronJob's jobTemplate, as `kubectl create job
// --from=cronjob/...` makes it) is held at the request that would commit the window (cold storage's `_SUCCESS`,
// the audit trail's manifest.json), its pod deleted with no grace period (SIGKILL), and the Job deleted before its
// controller retries; the window is then unpublished. The next manual Job completes, and the bucket holds the
// window's files once, with the rows written to the sources (10 samples of one series; 6 audit events, signed and
// verifying). Both exporters run at once.
func TestExportersOnTheNode(t *testing.T) {
	ctx := context.Background()
	restrictedNamespace(t, exportersNamespace)
	start := time.Now()
	servers := storagePods(t, exportersNamespace, testproc.VictoriaMetricsSpec(), testproc.VictoriaLogsSpec(),
		testproc.MinIOSpec())
	vm, vl, minio := servers[0], servers[1], servers[2]
	t.Logf("VictoriaMetrics, VictoriaLogs and MinIO pods Ready and answering through their Services %.1fs after "+
		"their creation", time.Since(start).Seconds())
	h := window.Of(time.Now()).Prev()

	t.Run("cold-storage", func(t *testing.T) {
		t.Parallel()
		var body bytes.Buffer
		for i := range 10 {
			fmt.Fprintf(&body, "up{tenant=\"acme\",cluster=\"mothership\"} 1 %d\n", h.Start.Add(time.Duration(i)*time.Minute).UnixMilli())
		}
		post(t, vm.URL+"/api/v1/import/prometheus", "text/plain", body.String())
		get(t, vm.URL+"/internal/force_flush")
		b := rootBucket(t, minio, "kof-cold")
		user := testproc.ExporterUser(t, minio, testproc.ColdStorageGuide, "kof-cold")
		secret(t, "cold-storage-exporter-s3-credentials", map[string]string{"S3_ACCESS_KEY": user.AccessKey,
			"S3_SECRET_KEY": user.SecretKey})
		folder := coldstorage.Folder("telemetry", "acme", "mothership", h, coldstorage.Metrics)
		p := holdingProxy(t, minio, "/kof-cold/"+folder+coldstorage.SuccessName)
		installExporter(t, "cold-storage-exporter", imageRef(t, "cold-storage-exporter"), map[string]any{
			"sources":   "metrics",
			"endpoints": map[string]any{"metrics": vm.URL},
			"s3": map[string]any{"bucket": "kof-cold", "endpoint": p.url, "usePathStyle": true,
				"existingSecret": "cold-storage-exporter-s3-credentials"},
			"window": map[string]any{"delay": "0s", "catchUpHours": 2},
		})
		killThenRecover(t, "cold-storage-exporter", p, user.SecretKey, func() []string {
			var keys []string
			for _, o := range list(t, b, "telemetry/") {
				keys = append(keys, o.Key)
			}
			return keys
		}, folder+coldstorage.SuccessName)

		want := []string{folder + coldstorage.SuccessName, folder + coldstorage.SamplesName, folder + coldstorage.SeriesName}
		var got []string
		for _, o := range list(t, b, "telemetry/") {
			got = append(got, o.Key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("bucket kof-cold holds %v; want exactly the window's data files and marker %v", got, want)
		}
		for key, rows := range map[string]int64{folder + coldstorage.SamplesName: 10, folder + coldstorage.SeriesName: 1} {
			data, _, err := b.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			f, err := columnar.ReadFooter(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if f.Rows != rows {
				t.Errorf("%s holds %d rows, want %d", key, f.Rows, rows)
			}
		}
	})

	t.Run("audit-logs", func(t *testing.T) {
		t.Parallel()
		var body strings.Builder
		for i := range 6 {
			fmt.Fprintf(&body, `{"_time":%q,"_msg":"{\"auditID\":\"a%d\"}","k8s.cluster.name":"mothership"}`+"\n",
				h.Start.Add(time.Duration(i)*time.Minute).Format(time.RFC3339Nano), i)
		}
		post(t, vl.URL+"/insert/jsonline?_stream_fields=k8s.cluster.name", "application/stream+json", body.String())
		get(t, vl.URL+"/internal/force_flush")
		b := rootBucket(t, minio, "kof-audit")
		key, _ := testproc.SigningKeyPEM(t)
		secret(t, "audit-logs-exporter-signing-key", map[string]string{"signing.key": string(key)})
		user := testproc.ExporterUser(t, minio, testproc.AuditLogsGuide, "kof-audit")
		secret(t, "audit-logs-exporter-s3-credentials", map[string]string{"S3_ACCESS_KEY": user.AccessKey,
			"S3_SECRET_KEY": user.SecretKey})
		folder := evidence.Folder(evidence.StreamPlatform, evidence.TenantPlatform, h)
		p := holdingProxy(t, minio, "/kof-audit/"+folder+evidence.ManifestName)
		installExporter(t, "audit-logs-exporter", imageRef(t, "audit-logs-exporter"), map[string]any{
			"endpoint": vl.URL,
			"s3": map[string]any{"bucket": "kof-audit", "endpoint": p.url,
				"existingSecret": "audit-logs-exporter-s3-credentials"},
			"signing": map[string]any{"existingSecret": "audit-logs-exporter-signing-key"},
			"window":  map[string]any{"delay": "0s", "catchUpHours": 2},
		})
		killThenRecover(t, "audit-logs-exporter", p, user.SecretKey, func() []string {
			var keys []string
			for _, o := range list(t, b, "audit/") {
				keys = append(keys, o.Key)
			}
			return keys
		}, folder+evidence.ManifestName)

		for _, name := range []string{evidence.DataName, evidence.SignatureName, evidence.ManifestName} {
			if _, ok, err := b.Stat(ctx, folder+name); err != nil || !ok {
				t.Errorf("%s%s: present %v, err %v", folder, name, ok, err)
			}
		}
		raw, _, err := b.Get(ctx, folder+evidence.ManifestName)
		if err != nil {
			t.Fatal(err)
		}
		m, err := evidence.ParseManifest(raw)
		if err != nil {
			t.Fatal(err)
		}
		if m.EventCount != 6 {
			t.Errorf("manifest of %s counts %d events, want the 6 written to VictoriaLogs", folder, m.EventCount)
		}
		// The trail is the window h and, when an hour ended while the test ran, the later closed hours: the
		// exporter signs those empty windows too, so the chain stays continuous (regression: a run across an hour
		// boundary failed on the extra empty window).
		rep, err := evidence.Verifier{Bucket: b}.Verify(ctx, evidence.Filter{})
		if err != nil || rep.Failed() != 0 || !auditTrailFrom(rep.Checks, h, 6) {
			t.Errorf("verify the audit trail: %+v, %v; want window %s with 6 events, then only empty later windows",
				rep, err, h)
		}
	})
}

// killThenRecover runs the first manual Job of CronJob name until its pod is held by p, deletes that pod with no
// grace period and then the Job, checks that commitKey is not among keys() (the window is unpublished), then runs
// the next manual Job, which must complete. Neither pod's log may hold secretKey.
func killThenRecover(t *testing.T, name string, p *proxy, secretKey string, keys func() []string, commitKey string) {
	t.Helper()
	ctx := context.Background()
	c := shared.node.Client
	var cj batchv1.CronJob
	if err := c.Get(ctx, client.ObjectKey{Namespace: exportersNamespace, Name: name}, &cj); err != nil {
		t.Fatal(err)
	}
	first := jobFromCronJob(t, &cj, name+"-manual")
	start := time.Now()
	select {
	case <-p.held:
	case <-time.After(jobWait):
		t.Fatalf("Job %s did not reach the S3 request that commits the window within %s; its pods:\n%s", first.Name,
			jobWait, jobPods(t, first))
	}
	held := time.Since(start)
	pods := podsOf(t, first)
	if len(pods) != 1 {
		t.Fatalf("Job %s has %d pods while its run is held, want 1; its pods:\n%s", first.Name, len(pods), jobPods(t, first))
	}
	victim := pods[0]
	checkLog(t, victim, secretKey)
	if err := c.Delete(ctx, &victim, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, first, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, &victim)
	select { // the pod object is gone; its process, holding the request, must be too before the request is answered
	case <-p.dropped:
	case <-time.After(jobWait):
		t.Fatalf("the held request of Job %s's pod was still open %s after the pod was deleted", first.Name, jobWait)
	}
	p.release()
	if slices.Contains(keys(), commitKey) {
		t.Fatalf("%s exists after the run that was to write it was killed", commitKey)
	}
	t.Logf("%s: Job %s's pod reached the window's commit %.1fs after the Job's creation and was killed", name,
		first.Name, held.Seconds())

	start = time.Now()
	next := jobFromCronJob(t, &cj, name+"-manual-2")
	done := waitJob(t, next)
	t.Logf("%s: the next Job %s completed in %.1fs", name, next.Name, time.Since(start).Seconds())
	for _, pod := range podsOf(t, done) {
		checkLog(t, pod, secretKey)
	}
}

// jobFromCronJob creates Job name from cj's jobTemplate as `kubectl create job <name> --from=cronjob/<cj>` does
// (the template's labels, annotations and spec, the annotation cronjob.kubernetes.io/instantiate=manual, the CronJob
// as controller owner) and returns it.
func jobFromCronJob(t *testing.T, cj *batchv1.CronJob, name string) *batchv1.Job {
	t.Helper()
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cj.Namespace, Labels: cj.Spec.JobTemplate.Labels,
			Annotations: annotations, OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1",
				Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}},
		Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
	}
	if err := shared.node.Client.Create(context.Background(), j); err != nil {
		t.Fatalf("create Job %s from CronJob %s: %v", name, cj.Name, err)
	}
	return j
}

// waitJob waits until Job j is Complete and returns it; a Failed Job or the wait's end fails the test with the pods'
// logs.
func waitJob(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	deadline := time.Now().Add(jobWait)
	for {
		var got batchv1.Job
		if err := shared.node.Client.Get(context.Background(), client.ObjectKeyFromObject(j), &got); err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case batchv1.JobComplete:
				return &got
			case batchv1.JobFailed:
				t.Fatalf("Job %s failed: %s; its pods:\n%s", j.Name, c.Message, jobPods(t, &got))
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Job %s not complete within %s: %+v; its pods:\n%s", j.Name, jobWait, got.Status, jobPods(t, &got))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// podsOf returns the pods of Job j (label batch.kubernetes.io/job-name).
func podsOf(t *testing.T, j *batchv1.Job) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := shared.node.Client.List(context.Background(), &list, client.InNamespace(j.Namespace),
		client.MatchingLabels{"batch.kubernetes.io/job-name": j.Name}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// jobPods describes the pods of Job j, with their phase and container logs, for a failure message.
func jobPods(t *testing.T, j *batchv1.Job) string {
	t.Helper()
	var b strings.Builder
	for _, p := range podsOf(t, j) {
		fmt.Fprintf(&b, "pod %s: %s %+v\n%s\n", p.Name, p.Status.Phase, p.Status.ContainerStatuses, podLog(p))
	}
	return b.String() + harness.Events(context.Background(), shared.node.Client, j.Namespace)
}

// podLog returns the container logs of pod p (the kubelet's files under the node's podLogsDir).
func podLog(p corev1.Pod) string {
	files, _ := filepath.Glob(filepath.Join(shared.node.Dir, "kubelet", "logs",
		fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), "*", "*.log"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// checkLog fails the test when pod p's log holds secret.
func checkLog(t *testing.T, p corev1.Pod, secret string) {
	t.Helper()
	if strings.Contains(podLog(p), secret) {
		t.Errorf("the S3 secret key is in pod %s's log", p.Name)
	}
}

// waitGone waits until pod p no longer exists.
func waitGone(t *testing.T, p *corev1.Pod) {
	t.Helper()
	deadline := time.Now().Add(podWait)
	for {
		var got corev1.Pod
		err := shared.node.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &got)
		if err != nil && client.IgnoreNotFound(err) == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s still there %s after its deletion (%v)", p.Name, podWait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// installExporter installs chart (charts/<chart>) as release chart in exportersNamespace with values and the image
// at ref (`<registry>/<repository>:<tag>@<digest>`), and uninstalls it when the test ends.
func installExporter(t *testing.T, chart, ref string, values map[string]any) {
	t.Helper()
	repo, digest, _ := strings.Cut(ref, "@")
	repo, _, _ = strings.Cut(repo, ":"+imageVersion)
	registry, repository, _ := strings.Cut(repo, "/")
	values["image"] = map[string]any{"registry": registry, "repository": repository, "tag": imageVersion,
		"digest": digest}
	h := &harness.Helm{Kubeconfig: shared.node.Kubeconfig, Client: shared.node.Client}
	if _, err := h.Install(context.Background(), harness.Release{Name: chart, Namespace: exportersNamespace,
		ChartDir: filepath.Join(shared.root, "charts", chart), Values: values}); err != nil {
		t.Fatalf("install %s: %v", chart, err)
	}
	t.Cleanup(func() {
		if err := h.Uninstall(chart, exportersNamespace); err != nil {
			t.Errorf("uninstall %s: %v", chart, err)
		}
	})
}

// secret creates Secret name of exportersNamespace with data (`kubectl create secret generic`).
func secret(t *testing.T, name string, data map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: exportersNamespace}, StringData: data}
	if err := shared.node.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// rootBucket creates bucket name on minio as its root user (an administrator's step) and returns it.
func rootBucket(t *testing.T, minio *testproc.Server, name string) *bucket.Bucket {
	t.Helper()
	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: name, UsePathStyle: true,
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Create(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	return b
}

// list returns the objects of b under prefix.
func list(t *testing.T, b *bucket.Bucket, prefix string) []bucket.Object {
	t.Helper()
	objs, err := b.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// post sends body to url and fails the test on an error or a status other than 2xx.
func post(t *testing.T, url, contentType, body string) {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body)) //nolint:noctx // the node's network
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %s", url, resp.Status)
	}
}

// proxy is a reverse proxy in front of MinIO on the node's IP that holds the first PUT of one path: it reports it
// on held and answers it (503, never forwarded) only once released, so the exporter's run stops right before the
// request that would commit its window. dropped is closed when the client's connection of the held request closes
// (its process is gone): a pod deleted with grace period 0 leaves the API server at once while its container may
// still run, and a held request answered before that container is gone is retried and then commits the window.
type proxy struct {
	url      string
	held     chan struct{}
	dropped  chan struct{}
	released chan struct{}
	once     sync.Once
}

// release lets the held request end (503) and every later request through.
func (p *proxy) release() { p.once.Do(func() { close(p.released) }) }

// holdingProxy starts a proxy (see proxy) for minio holding the first PUT of path (`/<bucket>/<key>`, path-style),
// stopped when the test ends.
func holdingProxy(t *testing.T, minio *testproc.Server, path string) *proxy {
	t.Helper()
	target, err := url.Parse(minio.URL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(harness.NodeIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{url: "http://" + l.Addr().String(), held: make(chan struct{}), dropped: make(chan struct{}),
		released: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0) // the killed pod's requests end with it: expected, not news
	var holding sync.Once
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter,
		r *http.Request) {
		hold := false
		if r.Method == http.MethodPut && r.URL.Path == path {
			holding.Do(func() { hold = true })
		}
		if !hold {
			rp.ServeHTTP(w, r) // the Host header stays the proxy's, which the client signed
			return
		}
		// The body is read first: the server notices a closed connection (and ends r's context) only then.
		_, _ = io.Copy(io.Discard, r.Body)
		close(p.held)
		select {
		case <-p.released:
		case <-r.Context().Done():
			close(p.dropped)
			<-p.released
		}
		http.Error(w, "held by the test", http.StatusServiceUnavailable)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		p.release()
		_ = srv.Close()
	})
	return p
}

// auditTrailFrom reports whether checks are window first with events events, followed only by empty windows of
// the hours after it, one each, in order.
func auditTrailFrom(checks []evidence.Check, first window.Hour, events int64) bool {
	if len(checks) == 0 || !checks[0].Window.Start.Equal(first.Start) || checks[0].Events != events {
		return false
	}
	next := first
	for _, c := range checks[1:] {
		next = next.Next()
		if !c.Window.Start.Equal(next.Start) || c.Events != 0 {
			return false
		}
	}
	return true
}
