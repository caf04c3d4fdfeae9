package testproc

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AuditPolicy is the audit policy of AuditLog's kube-apiserver: every request at level Metadata, one event per
// request (the RequestReceived stage omitted).
const AuditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n"

// AuditLog starts a kube-apiserver and etcd of bin/ (envtest, dying with the test binary) that append the audit
// event of every request to file (AuditPolicy, blocking mode, so each event is in the file when its request
// returns), and makes these calls in each of namespaces: create the namespace, create and get ConfigMaps cm-0 to
// cm-4, list them, delete cm-0. It then stops the apiserver and returns the lines it appended to file (without
// their newlines). A failure fails t.
func AuditLog(t *testing.T, file string, namespaces ...string) []string {
	t.Helper()
	bins, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	before := 0
	if data, err := os.ReadFile(file); err == nil {
		before = len(splitLines(data))
	}
	policy := filepath.Join(t.TempDir(), "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(AuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{}
	Envtest(t, env, bins)
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", file)
	args.Set("audit-log-mode", "blocking")
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		t.Fatalf("start kube-apiserver with auditing: %v", err)
	}
	if err := auditCalls(cfg, namespaces); err != nil {
		_ = env.Stop()
		t.Fatal(err)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(data)
	if len(lines) < before+10*len(namespaces) {
		t.Fatalf("the apiserver appended %d audit lines to %s; want at least 10 per namespace for the calls made", len(lines)-before, file)
	}
	return lines[before:]
}

// auditCalls makes AuditLog's calls in each namespace.
func auditCalls(cfg *rest.Config, namespaces []string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		for i := 0; i < 5; i++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"k": "v"}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create ConfigMap %s/%s: %w", ns, cm.Name, err)
			}
			if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("get ConfigMap %s/%s: %w", ns, cm.Name, err)
			}
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("list ConfigMaps of %s: %w", ns, err)
		}
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete ConfigMap %s/cm-0: %w", ns, err)
		}
	}
	return nil
}

// splitLines returns the newline-terminated lines of data without their newlines.
func splitLines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// SigningKeyPEM returns a new Ed25519 private key as PKCS #8 PEM (what `openssl genpkey -algorithm ed25519`
// writes) and its public key as PEM (`openssl pkey -pubout`). A failure fails t.
func SigningKeyPEM(t testing.TB) (private, public []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
}

// SigningKey writes a new SigningKeyPEM pair to dir/name (private) and dir/name.pub, and returns the private key's
// path and the public key PEM. A failure fails t.
func SigningKey(t testing.TB, dir, name string) (string, []byte) {
	t.Helper()
	privPEM, pubPEM := SigningKeyPEM(t)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", pubPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, pubPEM
}
