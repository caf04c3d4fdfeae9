package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/doctor/diagnose"
	"kof.dev/kof/internal/harness"
)

// uiLabels select kof-mothership's kof-ui Deployment, Service and pods (charts/kof-mothership componentLabels).
var uiLabels = map[string]string{"app.kubernetes.io/name": "kof-mothership", "app.kubernetes.io/component": "ui"}

// uiValues are the kof-mothership values that turn kof-ui on with the image at ref
// (`<registry>/<repository>:<tag>@<digest>`).
func uiValues(ref string) map[string]any {
	repo, digest, _ := strings.Cut(ref, "@")
	repo, _, _ = strings.Cut(repo, ":"+imageVersion)
	registry, repository, _ := strings.Cut(repo, "/")
	return map[string]any{"enabled": true, "image": map[string]any{"registry": registry,
		"repository": repository, "tag": imageVersion, "digest": digest}}
}

// checkUI checks kof-ui as kof-mothership deploys it on the node (ui.enabled, its image pinned by digest), reached
// through its Service's ClusterIP (kube-proxy's rules in the node's network namespace) with real service-account
// tokens: no token and a token the API server does not know get 401, a ServiceAccount without the viewer
// ClusterRole 403, one bound to it 200 with the fleet read through the chart's read-only ClusterRole (no
// unreadable object but the operator Secrets the chart does not grant). The kof-ui pod must not have been refused
// by RBAC.
func checkUI(t *testing.T, digest string) {
	t.Helper()
	ctx := context.Background()
	c := shared.node.Client
	dep, err := harness.WaitDeploymentAvailable(ctx, c, harness.UmbrellaNamespace, uiLabels, harness.OperatorWait)
	if err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(dep.Namespace), client.MatchingLabels(dep.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if id := p.Status.ContainerStatuses[0].ImageID; !strings.HasSuffix(id, digest) {
			t.Errorf("kof-ui pod %s runs image %s, want digest %s", p.Name, id, digest)
		}
	}
	var svcs corev1.ServiceList
	if err := c.List(ctx, &svcs, client.InNamespace(harness.UmbrellaNamespace), client.MatchingLabels(uiLabels)); err != nil {
		t.Fatal(err)
	}
	if len(svcs.Items) != 1 {
		t.Fatalf("%d kof-ui Services in %s, want one", len(svcs.Items), harness.UmbrellaNamespace)
	}
	svc := svcs.Items[0]
	url := "http://" + svc.Spec.ClusterIP + ":" + strconv.Itoa(int(svc.Spec.Ports[0].Port))

	cs, err := kubernetes.NewForConfig(shared.node.Config)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "node-ui"
	restrictedNamespace(t, ns)
	viewer, stranger := "ui-viewer", "ui-stranger"
	for _, sa := range []string{viewer, stranger} {
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); err != nil {
			t.Fatal(err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "node-ui-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: dep.Name + "-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: viewer, Namespace: ns}}}
	if err := c.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	token := func(sa string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authnv1.TokenRequest{
			Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("token of %s/%s: %v", ns, sa, err)
		}
		return tr.Status.Token
	}
	viewerToken, strangerToken := token(viewer), token(stranger)
	cases := []struct {
		name, path, token string
		want              int
	}{
		{"no token", "/", "", http.StatusUnauthorized},
		{"a token the API server does not know", "/", "not-a-token", http.StatusUnauthorized},
		{"a ServiceAccount without the viewer ClusterRole", "/", strangerToken, http.StatusForbidden},
		{"a viewer", "/", viewerToken, http.StatusOK},
		{"a viewer's diagnosis", "/api/diagnosis", viewerToken, http.StatusOK},
	}
	var diagnosis string
	for _, tc := range cases {
		// The viewer's binding may take a moment to reach the API server's authorizer cache.
		status, body := uiCall(t, url+tc.path, tc.token, tc.want)
		if status != tc.want {
			t.Errorf("%s: GET %s through Service %s = %d, want %d: %.300s", tc.name, tc.path, svc.Name, status,
				tc.want, body)
		}
		if tc.path == "/api/diagnosis" {
			diagnosis = body
		}
	}
	var d diagnose.Diagnosis
	if err := json.Unmarshal([]byte(diagnosis), &d); err != nil {
		t.Fatalf("kof-ui diagnosis: %v: %.300s", err, diagnosis)
	}
	if len(d.Clusters) == 0 {
		t.Error("kof-ui's diagnosis lists no cluster of the fleet")
	}
	for _, f := range d.Findings {
		if f.Code == diagnose.CodeUnreadable && f.Object != "operator Secrets" {
			t.Errorf("the chart's kof-ui ClusterRole cannot read %s: %s", f.Object, f.Message)
		}
	}
	for _, p := range pods.Items {
		if lines := forbidden(t, p); len(lines) > 0 {
			t.Errorf("kof-ui pod %s was refused by RBAC:\n%s", p.Name, strings.Join(lines, "\n"))
		}
	}
	t.Logf("kof-ui through Service %s/%s (%s): 401 without or with an unknown token, 403 without the viewer "+
		"role, 200 for a viewer (%d clusters diagnosed)", svc.Namespace, svc.Name, url, len(d.Clusters))
}

// uiCall GETs url with bearer (none when "") and returns the status and body, retrying for a few seconds while the
// status differs from want (a new RBAC binding reaches the authorizer's cache shortly after its creation). A
// viewer's first page reads the whole fleet and renders its prediction: seconds on two idle cores, but more than a
// minute when `make test` runs four packages beside it (a CI run failed on a one-minute client timeout), so one
// request may take up to uiRequestTimeout.
// uiRequestTimeout bounds one request of uiCall.
const uiRequestTimeout = 3 * time.Minute

func uiCall(t *testing.T, url, bearer string, want int) (int, string) {
	t.Helper()
	hc := &http.Client{Timeout: uiRequestTimeout}
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		status, body := 0, ""
		resp, err := hc.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			status, body = resp.StatusCode, string(b)
		} else {
			body = err.Error()
		}
		if status == want || time.Now().After(deadline) {
			return status, body
		}
		time.Sleep(200 * time.Millisecond)
	}
}
