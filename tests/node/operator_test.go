package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/internal/harness"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// fleetSize is the number of child ClusterDeployments the test adds to scenario 01's clusters: enough that the
// operator is still reconciling them when its leader pod is deleted.
const fleetSize = 24

// quietPeriod is how long the operator's objects must stay unwritten after the fleet converged.
const quietPeriod = 10 * time.Second

// KOF installed as a user would (the umbrella chart through the Helm SDK, every component through the real Flux
// controllers) on the node, namespace `kof` enforcing the `restricted` Pod Security level: the kof-operator image
// the release code builds, pulled by digest from the node's registry, runs as kof-mothership's Deployment with only
// its chart's ServiceAccount and RBAC (no `forbidden` answer in any replica's log); one replica holds the leader
// Lease; each serves metrics and health endpoints on its pod address. Then, while the operator reconciles a fleet
// of scenario 01's clusters and fleetSize more children, the leader pod is deleted: another pod takes the Lease, the
// fleet converges to exactly the objects `kof render` predicts offline (no missing, extra or different object), and
// none of them is written again once converged.
func TestKOFOnTheNode(t *testing.T) {
	ctx := context.Background()
	n := shared.node
	ref, uiRef := imageRef(t, "kof-operator"), imageRef(t, "kof-ui")
	repo, digest, _ := strings.Cut(ref, "@")
	repo, _, _ = strings.Cut(repo, ":"+imageVersion)
	registry, repository, _ := strings.Cut(repo, "/")
	restrictedNamespace(t, harness.UmbrellaNamespace)

	work := filepath.Join(n.Dir, "session")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := harness.StartSession(ctx, harness.SessionOptions{Root: shared.root, WorkDir: work, Node: n,
		Progress: func(format string, args ...any) {
			if testing.Verbose() {
				t.Logf(format, args...)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close session: %v", err)
		}
	})
	sc, err := harness.LoadScenario(filepath.Join(shared.root, "tests", "scenarios", "testdata"), "01-regional-child")
	if err != nil {
		t.Fatal(err)
	}
	sc.Clusters = append(sc.Clusters, fleet(t, sc, fleetSize)...)
	extra := map[string]any{"kof-mothership": map[string]any{"values": map[string]any{
		"operator": map[string]any{"image": map[string]any{"registry": registry, "repository": repository,
			"tag": imageVersion, "digest": digest}},
		"ui": uiValues(uiRef),
	}}}
	installStart := time.Now()
	in, err := s.Install(ctx, sc, extra)
	if err != nil {
		t.Fatalf("install %s on the node: %v\nevents of %s:\n%s", sc.Name, err, harness.UmbrellaNamespace,
			harness.Events(ctx, n.Client, harness.UmbrellaNamespace))
	}
	t.Logf("umbrella and components installed, operator available, %d clusters applied in %.1fs", len(sc.Clusters),
		time.Since(installStart).Seconds())

	// The leader pod goes while the operator reconciles the fleet.
	dep, err := harness.WaitDeploymentAvailable(ctx, n.Client, harness.UmbrellaNamespace,
		kofv1.OperatorDeploymentLabels(), harness.OperatorWait)
	if err != nil {
		t.Fatal(err)
	}
	pods := operatorPods(t, dep)
	leader := leaseHolder(t, pods, "")
	checkOperatorPods(t, dep, pods, leader, ref, digest)
	var victim corev1.Pod
	for _, p := range pods {
		if p.Name == leader {
			victim = p
		}
	}
	if err := n.Client.Delete(ctx, &victim); err != nil {
		t.Fatalf("delete the leader pod %s: %v", leader, err)
	}
	killed := time.Now()
	next := leaseHolder(t, nil, leader)
	t.Logf("leader %s deleted during the fleet reconcile; %s took the Lease %.1fs later", leader, next,
		time.Since(killed).Seconds())

	offline, err := in.OfflineOutputs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := harness.PredictedOutputs(ctx, n.Client, offline)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	deadline := time.Now().Add(harness.OperatorWait)
	for {
		live, err := harness.LiveOutputs(ctx, n.Client)
		if err != nil {
			t.Fatal(err)
		}
		if diffs, err = harness.DiffOutputs(want, live); err != nil {
			t.Fatal(err)
		}
		if len(diffs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d predicted objects differ from the live operator's %s after the leader's deletion:\n%s",
				len(diffs), len(want), harness.OperatorWait, strings.Join(diffs, "\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("fleet of %d clusters converged %.1fs after the leader's deletion: %d operator objects equal the "+
		"offline prediction", len(sc.Clusters), time.Since(killed).Seconds(), len(want))

	before := versions(t)
	time.Sleep(quietPeriod)
	after := versions(t)
	for id, v := range after {
		if before[id] != v {
			t.Errorf("%s written again after convergence (resourceVersion %s -> %s)", id, before[id], v)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d operator objects before the quiet period, %d after", len(before), len(after))
	}

	dep, err = harness.WaitDeploymentAvailable(ctx, n.Client, harness.UmbrellaNamespace,
		kofv1.OperatorDeploymentLabels(), harness.OperatorWait)
	if err != nil {
		t.Fatal(err)
	}
	pods = operatorPods(t, dep)
	checkOperatorPods(t, dep, pods, leaseHolder(t, pods, ""), ref, digest)
	for _, p := range pods {
		if lines := forbidden(t, p); len(lines) > 0 {
			t.Errorf("pod %s was refused by RBAC (the chart's ClusterRole lacks a rule):\n%s", p.Name,
				strings.Join(lines, "\n"))
		}
	}
	_, uiDigest, _ := strings.Cut(uiRef, "@")
	checkUI(t, uiDigest)
	checkNamespacePods(t, harness.UmbrellaNamespace)
}

// fleet returns size child ClusterDeployments copied from the first child of sc, named child-fleet-<i>.
func fleet(t *testing.T, sc *harness.Scenario, size int) []*unstructured.Unstructured {
	t.Helper()
	var child *unstructured.Unstructured
	for _, o := range sc.Clusters {
		if o.GetKind() == harness.KindClusterDeployment && o.GetLabels()["k0rdent.mirantis.com/kof-cluster-role"] == "child" {
			child = o
			break
		}
	}
	if child == nil {
		t.Fatalf("scenario %s has no child ClusterDeployment to copy", sc.Name)
	}
	out := make([]*unstructured.Unstructured, 0, size)
	for i := range size {
		c := child.DeepCopy()
		c.SetName(fmt.Sprintf("child-fleet-%02d", i))
		out = append(out, c)
	}
	return out
}

// checkOperatorPods checks that pods are every replica of dep, each running ref (pulled at digest) as the chart's
// ServiceAccount and serving metrics (the API client's; the leader's also its controllers') and health on its pod
// address.
func checkOperatorPods(t *testing.T, dep *appsv1.Deployment, pods []corev1.Pod, leader, ref, digest string) {
	t.Helper()
	if want := int(*dep.Spec.Replicas); len(pods) != want {
		t.Fatalf("%d running kof-operator pods, want %d", len(pods), want)
	}
	for _, p := range pods {
		if p.Spec.ServiceAccountName != dep.Spec.Template.Spec.ServiceAccountName {
			t.Errorf("pod %s runs as ServiceAccount %s, want the chart's %s", p.Name, p.Spec.ServiceAccountName,
				dep.Spec.Template.Spec.ServiceAccountName)
		}
		if got := p.Spec.Containers[0].Image; got != ref {
			t.Errorf("pod %s image %s, want %s", p.Name, got, ref)
		}
		if id := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(id, digest) {
			t.Errorf("pod %s runs image %s, want digest %s", p.Name, id, digest)
		}
		body := get(t, fmt.Sprintf("http://%s:%d/metrics", p.Status.PodIP, 8080))
		want := "rest_client_requests_total"
		if p.Name == leader {
			want = "controller_runtime_reconcile_total"
		}
		if !strings.Contains(body, want) {
			t.Errorf("pod %s /metrics has no %s", p.Name, want)
		}
		get(t, fmt.Sprintf("http://%s:%d/readyz", p.Status.PodIP, 8081))
		get(t, fmt.Sprintf("http://%s:%d/healthz", p.Status.PodIP, 8081))
	}
}

// checkNamespacePods fails the test for a KOF pod of ns (its image from the node's registry) that is not running,
// and for an event of ns reporting a pod refused by Pod Security admission. Pods of other images (promxy's) are
// admitted too but cannot pull their image offline.
func checkNamespacePods(t *testing.T, ns string) {
	t.Helper()
	var list corev1.PodList
	if err := shared.node.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		kof := strings.HasPrefix(p.Spec.Containers[0].Image, harness.NodeRegistry+"/")
		if kof && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s/%s is %s", ns, p.Name, p.Status.Phase)
		}
	}
	for _, line := range strings.Split(harness.Events(context.Background(), shared.node.Client, ns), "\n") {
		if strings.Contains(line, "violates PodSecurity") {
			t.Errorf("Pod Security admission refused a pod of %s: %s", ns, line)
		}
	}
}

// versions returns the resourceVersion of every live operator object, by id.
func versions(t *testing.T) map[string]string {
	t.Helper()
	live, err := harness.LiveOutputs(context.Background(), shared.node.Client)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(live))
	for id, o := range live {
		out[id] = o.GetResourceVersion()
	}
	return out
}

// operatorPods returns the running pods of dep.
func operatorPods(t *testing.T, dep *appsv1.Deployment) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := shared.node.Client.List(context.Background(), &list, client.InNamespace(dep.Namespace),
		client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out = append(out, p)
		}
	}
	return out
}

// leaseHolder waits for the kof-operator's leader Lease in namespace kof to be held by a pod other than not (""
// for any) and, when pods is not nil, by one of pods; it returns the holder's pod name (a controller-runtime holder
// identity is `<pod>_<uuid>`).
func leaseHolder(t *testing.T, pods []corev1.Pod, not string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var list coordinationv1.LeaseList
		if err := shared.node.Client.List(context.Background(), &list, client.InNamespace(harness.UmbrellaNamespace)); err != nil {
			t.Fatal(err)
		}
		for _, l := range list.Items {
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
				continue
			}
			holder, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
			if holder == not {
				continue
			}
			if pods == nil {
				return holder
			}
			for _, p := range pods {
				if holder == p.Name {
					return holder
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Lease of namespace %s held by a kof-operator pod (other than %q) after a minute (%d Leases)",
				harness.UmbrellaNamespace, not, len(list.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// get fetches url from inside the node's network and returns the body; any status but 200 fails the test.
func get(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%.300s", url, resp.Status, b)
	}
	return string(b)
}

// forbidden returns the lines of pod p's container log (the kubelet's files under the node's podLogsDir) that
// report an RBAC refusal.
func forbidden(t *testing.T, p corev1.Pod) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(shared.node.Dir, "kubelet", "logs",
		fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), "*", "*.log"))
	if len(files) == 0 {
		t.Errorf("pod %s: no container log under the node's pod logs", p.Name)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "forbidden") {
				out = append(out, line)
			}
		}
	}
	return out
}
