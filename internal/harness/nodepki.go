package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// nodeCert is one certificate the node's programs present: a client identity (CN user, O groups) or the API
// server's serving certificate (IPs and DNS names).
type nodeCert struct {
	file   string
	cn     string
	orgs   []string
	server bool
	ips    []string
	dns    []string
}

// The node's identities. The users and groups are those Kubernetes' bootstrap RBAC binds (system:node:<name> in
// system:nodes for the Node authorizer, system:kube-controller-manager, system:kube-scheduler, system:kube-proxy to
// system:node-proxier) and system:masters for the admin and the API server's kubelet client.
func nodeCerts() []nodeCert {
	return []nodeCert{
		{file: "apiserver", cn: "kube-apiserver", server: true,
			ips: []string{"127.0.0.1", NodeIP, kubernetesServiceIP},
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local"}},
		{file: "admin", cn: "kof-admin", orgs: []string{"system:masters"}},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}},
		{file: "kubelet", cn: "system:node:" + NodeName, orgs: []string{"system:nodes"}},
		{file: "controller-manager", cn: "system:kube-controller-manager"},
		{file: "scheduler", cn: "system:kube-scheduler"},
		{file: "proxy", cn: "system:kube-proxy"},
	}
}

// writeNodePKI writes into dir a CA (ca.crt, ca.key), the certificate and key of every nodeCerts entry
// (<file>.crt, <file>.key) and the service-account signing key pair (sa.key, sa.pub), all ECDSA P-256, valid for a
// day. It returns the first write or signing error.
func writeNodePKI(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kof-node-ca"},
		NotBefore: now, NotAfter: now.Add(25 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("node CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "ca.key"), caKey); err != nil {
		return err
	}
	for i, c := range nodeCerts() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)),
			Subject:   pkix.Name{CommonName: c.cn, Organization: c.orgs},
			NotBefore: now, NotAfter: now.Add(25 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, DNSNames: c.dns}
		if c.server {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		}
		for _, ip := range c.ips {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("node certificate %s: %w", c.file, err)
		}
		if err := writePEM(filepath.Join(dir, c.file+".crt"), "CERTIFICATE", der); err != nil {
			return err
		}
		if err := writeKey(filepath.Join(dir, c.file+".key"), key); err != nil {
			return err
		}
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), sa); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// nodeKubeconfig is a kubeconfig for the identity file of nodeCerts at dir (the pki folder), reaching the API server
// on the node IP.
func nodeKubeconfig(pki, file string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: node
  cluster:
    server: https://%[1]s:%[2]d
    certificate-authority: %[3]s/ca.crt
users:
- name: %[4]s
  user:
    client-certificate: %[3]s/%[4]s.crt
    client-key: %[3]s/%[4]s.key
contexts:
- name: node
  context: {cluster: node, user: %[4]s}
current-context: node
`, NodeIP, apiServerPort, pki, file)
}
