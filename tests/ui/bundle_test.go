package ui

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/doctor/support"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Credentials planted in the demo control plane where a support bundle reads: a ConfigMap of the operator, an
// annotation of a KOF ClusterDeployment, container logs and a Secret. None may reach the archive.
var planted = []string{"planted-configmap-password", "AKIAPLANTEDKEY000001", "planted-s3-secret-key",
	"planted-annotation-token", "planted-log-password", "planted-log-bearer-token", "planted-url-password",
	"planted-secret-data"}

// TestSupportBundle runs kof support-bundle against the demo control plane: as an administrator the archive is
// complete, its manifest lists exactly the archive's files, the operator's and an exporter's logs are in it (served
// by a stand-in kubelet: this control plane has no node), Secrets appear by name only and no planted credential
// reaches any file; as a user without rights on ClusterSummaries and Pod logs the bundle is partial and its
// manifest names what it could not read.
func TestSupportBundle(t *testing.T) {
	ctx := context.Background()
	cp := shared.session.ControlPlane
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	plant(t, cs)
	operatorPod, exporterPod := logPods(t, cs)

	dir := t.TempDir()
	file := filepath.Join(dir, "admin.tar.gz")
	out := supportBundle(t, cp.Kubeconfig, file)
	files, m := readBundle(t, file)
	cmd := exec.Command(shared.kof, "support-bundle", "--kubeconfig", cp.Kubeconfig, "-o", file)
	if again, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(again), "never replaced") {
		t.Errorf("a second kof support-bundle -o %s: %v, want a failure keeping the archive:\n%s", file, err, again)
	}
	if !m.Complete || len(m.Unreadable) != 0 {
		t.Errorf("an administrator's bundle is partial: %+v\n%s", m.Unreadable, out)
	}
	if !strings.Contains(out, "complete") {
		t.Errorf("kof support-bundle output does not say the bundle is complete:\n%s", out)
	}
	checkManifest(t, files, m)
	for _, p := range []string{"diagnosis/diagnosis.json", "diagnosis/diagnosis.txt",
		"objects/clusterdeployments.yaml", "objects/multiclusterservices.yaml", "objects/servicesets.yaml",
		"objects/clustersummaries.yaml", "objects/configmaps.yaml", "objects/promxyservergroups.yaml",
		"objects/vmstorageconnections.yaml", "objects/helmreleases.yaml", "objects/events.yaml",
		"objects/secret-names.txt", "versions.yaml", "render/summary.txt",
		"logs/" + operatorPod + "/" + kofv1.OperatorContainer + ".log", "logs/" + exporterPod + "/exporter.log"} {
		if _, ok := files[p]; !ok {
			t.Errorf("bundle lacks %s; it has %v", p, keys(files))
		}
	}
	for _, want := range []struct{ file, text string }{
		{"objects/configmaps.yaml", "kof-support-test"},
		{"objects/secret-names.txt", kofNamespace + "/kof-support-test\n"},
		{"objects/clusterdeployments.yaml", "name: child-1"},
		{"objects/helmreleases.yaml", "lastAttemptedRevision"},
		{"diagnosis/diagnosis.txt", "CLUSTER"},
		{"versions.yaml", "name: kof-mothership"},
		{"logs/" + operatorPod + "/" + kofv1.OperatorContainer + ".log", "reconciled"},
	} {
		if !strings.Contains(files[want.file], want.text) {
			t.Errorf("%s lacks %q:\n%s", want.file, want.text, files[want.file])
		}
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(files["diagnosis/diagnosis.json"]), &d); err != nil || d["clusters"] == nil {
		t.Errorf("diagnosis.json is no diagnosis (%v):\n%.400s", err, files["diagnosis/diagnosis.json"])
	}
	if len(m.Items) == 0 || m.Redactions < len(planted) {
		t.Errorf("manifest: %d items, %d redactions; want every planted value (%d) redacted", len(m.Items),
			m.Redactions, len(planted))
	}
	noneLeaked(t, files)

	// A user who may read everything but ClusterSummaries, Pod logs and Secrets.
	restricted := "support-restricted"
	apply(t, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": map[string]any{"name": restricted, "namespace": kofNamespace}}})
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "kof-support-test-restricted"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"k0rdent.mirantis.com", "kof.k0rdent.mirantis.com", "helm.toolkit.fluxcd.io",
			"source.toolkit.fluxcd.io", "operator.victoriametrics.com", "apps"}, Resources: []string{"*"},
			Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "events", "namespaces", "pods"},
			Verbs: []string{"get", "list"}},
	}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: restricted, Namespace: kofNamespace}}}
	for _, o := range []client.Object{role, binding} {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cp.Client.Delete(context.Background(), o) })
	}
	partialFile := filepath.Join(dir, "restricted.tar.gz")
	out = supportBundle(t, tokenKubeconfig(t, cs, kofNamespace, restricted), partialFile)
	files, m = readBundle(t, partialFile)
	checkManifest(t, files, m)
	if m.Complete {
		t.Errorf("a restricted user's bundle says it is complete:\n%s", out)
	}
	var unread []string
	for _, u := range m.Unreadable {
		unread = append(unread, u.What)
	}
	all := strings.Join(unread, "\n")
	for _, want := range []string{"ClusterSummaries", "operator Secrets",
		"log of container " + kofv1.OperatorContainer + " of Pod " + operatorPod} {
		if !strings.Contains(all, want) {
			t.Errorf("manifest's unreadable %q lacks %q", unread, want)
		}
	}
	if !strings.Contains(out, "partial") || !strings.Contains(out, "not read: ClusterSummaries") {
		t.Errorf("kof support-bundle output does not say the bundle is partial:\n%s", out)
	}
	for _, p := range []string{"objects/clustersummaries.yaml", "objects/secret-names.txt",
		"logs/" + operatorPod + "/" + kofv1.OperatorContainer + ".log"} {
		if _, ok := files[p]; ok {
			t.Errorf("restricted bundle has %s, which the user may not read", p)
		}
	}
	if _, ok := files["objects/multiclusterservices.yaml"]; !ok {
		t.Errorf("restricted bundle lacks what the user may read: %v", keys(files))
	}
	noneLeaked(t, files)
}

// plant creates an operator ConfigMap and Secret holding credentials and adds one to child-1's annotations.
func plant(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	ours := map[string]any{kofv1.ManagedByLabel: kofv1.ManagedBy}
	apply(t, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "kof-support-test", "namespace": kofNamespace, "labels": ours},
		"data": map[string]any{
			"password":    "planted-configmap-password",
			"s3.yaml":     "endpoint: https://minio:9000\naccessKey: AKIAPLANTEDKEY000001\nsecretKey: planted-s3-secret-key\n",
			"remote.json": `{"url":"https://admin:planted-url-password@vmauth.example.com/"}`,
		}}})
	apply(t, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "kof-support-test", "namespace": kofNamespace, "labels": ours},
		"stringData": map[string]any{"value": "planted-secret-data"}}})
	c := shared.session.ControlPlane.Client
	cd := &unstructured.Unstructured{}
	cd.SetAPIVersion("k0rdent.mirantis.com/v1beta1")
	cd.SetKind("ClusterDeployment")
	patch := func(value any) {
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			"example.com/ticket": value}}})
		cd.SetNamespace("kcm-system")
		cd.SetName("child-1")
		if err := c.Patch(ctx, cd, client.RawPatch(types.MergePatchType, raw)); err != nil {
			t.Fatalf("annotate child-1: %v", err)
		}
	}
	patch("support case 42 token=planted-annotation-token")
	t.Cleanup(func() { patch(nil) })
}

// logPods creates a Node served by a stand-in kubelet on loopback (the API server proxies pods/log to it) and, on
// it, a Pod of the kof-operator Deployment and a cold-storage exporter Pod. It returns their `namespace/name`.
func logPods(t *testing.T, cs kubernetes.Interface) (operator, exporter string) {
	t.Helper()
	ctx := context.Background()
	kubelet := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// GET /containerLogs/<namespace>/<pod>/<container>, as the API server asks a kubelet.
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if len(parts) != 4 || parts[0] != "containerLogs" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "{\"level\":\"info\",\"msg\":\"reconciled\",\"pod\":%q,\"container\":%q}\n", parts[2], parts[3])
		fmt.Fprintln(w, `level=info msg="connecting" password=planted-log-password`)
		fmt.Fprintln(w, `request headers: Authorization: Bearer planted-log-bearer-token`)
	}))
	t.Cleanup(kubelet.Close)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(kubelet.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "support-test-node"}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(p)
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deps, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: labelSelector(
		kofv1.OperatorDeploymentLabels())})
	if err != nil || len(deps.Items) != 1 {
		t.Fatalf("kof-operator Deployments: %v (%d)", err, len(deps.Items))
	}
	op := pod(t, cs, &deps.Items[0], node.Name)
	ex := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cold-storage-exporter-support-test", Namespace: kofNamespace,
		Labels: map[string]string{kofv1.ChartNameLabel: "cold-storage-exporter"}},
		Spec: corev1.PodSpec{NodeName: node.Name, AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "exporter", Image: "kof/cold-storage-exporter"}}}}
	createPod(t, cs, ex)
	return op.Namespace + "/" + op.Name, ex.Namespace + "/" + ex.Name
}

// pod creates a Pod of dep on node, with dep's Pod template labels and container names.
func pod(t *testing.T, cs kubernetes.Interface, dep *appsv1.Deployment, node string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: dep.Name + "-support-test", Namespace: dep.Namespace,
		Labels: dep.Spec.Template.Labels}, Spec: corev1.PodSpec{NodeName: node,
		AutomountServiceAccountToken: ptr.To(false)}}
	for _, c := range dep.Spec.Template.Spec.Containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
	}
	createPod(t, cs, p)
	return p
}

func createPod(t *testing.T, cs kubernetes.Interface, p *corev1.Pod) {
	t.Helper()
	if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Pod %s: %v", p.Name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0)})
	})
}

func labelSelector(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// supportBundle runs the built kof support-bundle with kubeconfig into file and returns its output; a non-zero
// exit fails the test.
func supportBundle(t *testing.T, kubeconfig, file string) string {
	t.Helper()
	cmd := exec.Command(shared.kof, "support-bundle", "--kubeconfig", kubeconfig, "-o", file)
	cmd.Dir = shared.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kof support-bundle: %v\n%s", err, out)
	}
	return string(out)
}

// readBundle returns the archive's files by path below support.Root (the manifest too) and its manifest.
func readBundle(t *testing.T, file string) (map[string]string, *support.Manifest) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(h.Name, support.Root+"/")
		if !ok {
			t.Fatalf("archive entry %s outside %s/", h.Name, support.Root)
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, tr); err != nil {
			t.Fatal(err)
		}
		files[rel] = b.String()
	}
	var m support.Manifest
	if err := json.Unmarshal([]byte(files[support.ManifestFile]), &m); err != nil {
		t.Fatalf("manifest: %v\n%s", err, files[support.ManifestFile])
	}
	return files, &m
}

// checkManifest checks that the manifest lists every file of the archive but itself, once, with its size.
func checkManifest(t *testing.T, files map[string]string, m *support.Manifest) {
	t.Helper()
	listed := map[string]bool{}
	for _, it := range m.Items {
		data, ok := files[it.Path]
		switch {
		case !ok:
			t.Errorf("manifest lists %s, which the archive lacks", it.Path)
		case listed[it.Path]:
			t.Errorf("manifest lists %s twice", it.Path)
		case len(data) != it.Bytes || it.What == "":
			t.Errorf("manifest item %+v: the file has %d bytes", it, len(data))
		}
		listed[it.Path] = true
	}
	for p := range files {
		if p != support.ManifestFile && !listed[p] {
			t.Errorf("archive file %s is not in the manifest", p)
		}
	}
}

// noneLeaked fails for every planted credential found in a file.
func noneLeaked(t *testing.T, files map[string]string) {
	t.Helper()
	for p, data := range files {
		for _, s := range planted {
			if strings.Contains(data, s) {
				t.Errorf("%s holds the planted credential %q", p, s)
			}
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
