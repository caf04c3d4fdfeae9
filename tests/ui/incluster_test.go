package ui

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/doctor/diagnose"
)

// Names of the kof-mothership release the scenario installs and of its kof-ui objects.
const (
	mothershipRelease = "kof-mothership"
	kofNamespace      = "kof"
	uiName            = "kof-mothership-ui"
	uiContainer       = "ui"
	// tlsMountPath is where the kof-ui Deployment mounts ui.tls.secretName.
	tlsMountPath = "/etc/kof-ui/tls"
)

// kofUIURL matches the line kof-ui prints when it serves.
var kofUIURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// TestInClusterUI runs the kof-ui binary as the kof-mothership chart deploys it (its rendered ServiceAccount,
// ClusterRoles and bindings applied to the API server, its Deployment's arguments, a token of its ServiceAccount)
// and checks every gate against the API server's real TokenReview and SubjectAccessReview: no token 401, a token
// the API server does not know 401, a user without the viewer permission 403, a viewer 200 with the fleet read
// through the chart's read-only RBAC; writes 405, cross-origin requests 403.
func TestInClusterUI(t *testing.T) {
	ctx := context.Background()
	cp := shared.session.ControlPlane
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(ctx, render.Options{ChartDir: filepath.Join(shared.root, "charts", mothershipRelease),
		ReleaseName: mothershipRelease, Namespace: kofNamespace, Values: map[string]any{"ui": map[string]any{
			"enabled": true}}})
	if err != nil {
		t.Fatal(err)
	}
	var dep *unstructured.Unstructured
	for _, o := range res.Objects() {
		switch {
		case !strings.HasPrefix(o.GetName(), uiName):
		case o.GetKind() == "Deployment":
			dep = o
		default:
			apply(t, o)
		}
	}
	if dep == nil {
		t.Fatal("kof-mothership with ui.enabled renders no kof-ui Deployment")
	}
	kubeconfig := tokenKubeconfig(t, cs, kofNamespace, uiName)
	url := startServer(t, shared.kofUI, localArgs(t, dep, ""), []string{"KUBECONFIG=" + kubeconfig}, kofUIURL)

	viewer, stranger := "ui-viewer", "ui-stranger"
	for _, sa := range []string{viewer, stranger} {
		apply(t, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": sa, "namespace": kofNamespace}}})
	}
	binding := &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1",
		Kind: "ClusterRoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: "kof-ui-test-viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: uiName + "-viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: viewer, Namespace: kofNamespace}}}
	if err := cp.Client.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(context.Background(), binding) })
	viewerToken, strangerToken := token(t, cs, kofNamespace, viewer), token(t, cs, kofNamespace, stranger)

	cases := []struct {
		name, method, path, token string
		header                    map[string]string
		want                      int
	}{
		{"no token", http.MethodGet, "/", "", nil, http.StatusUnauthorized},
		{"a token the API server does not know", http.MethodGet, "/", "not-a-token", nil, http.StatusUnauthorized},
		{"a user without the viewer permission", http.MethodGet, "/", strangerToken, nil, http.StatusForbidden},
		{"a viewer", http.MethodGet, "/", viewerToken, nil, http.StatusOK},
		{"a viewer's detail page", http.MethodGet, "/clusters/kcm-system/child-3", viewerToken, nil, http.StatusOK},
		{"a viewer writing", http.MethodPost, "/", viewerToken, nil, http.StatusMethodNotAllowed},
		{"a CORS preflight", http.MethodOptions, "/api/diagnosis", "", map[string]string{
			"Origin": "http://evil.example", "Access-Control-Request-Method": "GET"}, http.StatusMethodNotAllowed},
		{"a viewer's token sent from another site", http.MethodGet, "/api/diagnosis", viewerToken,
			map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"the health probe", http.MethodGet, "/healthz", "", nil, http.StatusOK},
	}
	for _, c := range cases {
		resp, body := call(t, c.method, url+c.path, c.token, c.header)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s %s = %d, want %d: %s", c.name, c.method, c.path, resp.StatusCode, c.want, body)
		}
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s: CORS header %s sent", c.name, k)
			}
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without a Bearer challenge", c.name)
		}
	}
	resp, body := call(t, http.MethodGet, url+"/api/diagnosis", viewerToken, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("viewer GET /api/diagnosis = %d: %s", resp.StatusCode, body)
	}
	checkTLS(t, kubeconfig, viewerToken)
	var d diagnose.Diagnosis
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if c := d.Cluster("child-3"); c == nil || len(c.Findings) == 0 || c.Findings[0].Code != diagnose.CodeNoRegional {
		t.Errorf("in-cluster diagnosis of child-3: %+v, want its NoRegional finding", c)
	}
	// The chart's reader ClusterRole must let kof-ui read everything but the Secrets it is not given.
	for _, f := range d.Findings {
		if f.Code == diagnose.CodeUnreadable && f.Object != "operator Secrets" {
			t.Errorf("the kof-ui ServiceAccount cannot read %s: %s", f.Object, f.Message)
		}
	}
}

// localArgs returns the arguments of the kof-ui container of dep for a process on loopback: the listen address on
// 127.0.0.1 and the TLS files under tlsDir instead of the Secret's mount path; every other argument as the chart
// renders it.
func localArgs(t *testing.T, dep *unstructured.Unstructured, tlsDir string) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	for _, c := range cs {
		cm := c.(map[string]any)
		if cm["name"] != uiContainer {
			continue
		}
		var out []string
		for _, a := range cm["args"].([]any) {
			s := a.(string)
			if strings.HasPrefix(s, "--addr=") {
				s = "--addr=127.0.0.1:0"
			}
			s = strings.Replace(s, "="+tlsMountPath+"/", "="+tlsDir+"/", 1)
			out = append(out, s)
		}
		return out
	}
	t.Fatalf("Deployment %s has no container %q", dep.GetName(), uiContainer)
	return nil
}

// apply creates obj with strict validation and deletes it when the test ends.
func apply(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	c := shared.session.ControlPlane.Client
	if err := c.Create(context.Background(), obj, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
}

// token returns a fresh token of ServiceAccount namespace/name (TokenRequest subresource: no controller-manager
// needed).
func token(t *testing.T, cs kubernetes.Interface, namespace, name string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}

// tokenKubeconfig writes a kubeconfig reaching the control plane as ServiceAccount namespace/name.
func tokenKubeconfig(t *testing.T, cs kubernetes.Interface, namespace, name string) string {
	t.Helper()
	cfg := shared.session.ControlPlane.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token(t, cs, namespace, name)}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	kc.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// call sends one request with an optional bearer token and headers and returns the response and its body.
func call(t *testing.T, method, url, bearer string, header map[string]string) (*http.Response, string) {
	t.Helper()
	return callWith(t, http.DefaultClient, method, url, bearer, header)
}

// callWith is call with the given HTTP client.
func callWith(t *testing.T, hc *http.Client, method, url, bearer string, header map[string]string) (*http.Response,
	string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// checkTLS runs kof-ui as the chart deploys it with ui.tls.secretName (the Secret's tls.crt and tls.key, here a
// certificate made for 127.0.0.1) and checks that it serves HTTPS with that certificate to a viewer.
func checkTLS(t *testing.T, kubeconfig, viewerToken string) {
	t.Helper()
	res, err := render.Render(context.Background(), render.Options{ChartDir: filepath.Join(shared.root, "charts",
		mothershipRelease), ReleaseName: mothershipRelease, Namespace: kofNamespace, Values: map[string]any{
		"ui": map[string]any{"enabled": true, "tls": map[string]any{"secretName": "kof-ui-tls"}}}})
	if err != nil {
		t.Fatal(err)
	}
	dep := res.Get("Deployment", kofNamespace, uiName)
	if dep == nil {
		t.Fatal("no kof-ui Deployment with ui.tls")
	}
	dir := t.TempDir()
	pool := selfSigned(t, dir)
	url := startServer(t, shared.kofUI, localArgs(t, dep, dir), []string{"KUBECONFIG=" + kubeconfig},
		regexp.MustCompile(`https://127\.0\.0\.1:[0-9]+`))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if resp, body := callWith(t, hc, http.MethodGet, url+"/", viewerToken, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("viewer over HTTPS: %d: %s", resp.StatusCode, body)
	}
	if resp, _ := callWith(t, hc, http.MethodGet, url+"/", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token over HTTPS: %d, want 401", resp.StatusCode)
	}
}

// selfSigned writes tls.crt and tls.key (a self-signed ECDSA certificate for 127.0.0.1) into dir, as a
// kubernetes.io/tls Secret mounts them, and returns a pool trusting it.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kof-ui"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for name, data := range map[string][]byte{"tls.crt": certPEM,
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return pool
}
