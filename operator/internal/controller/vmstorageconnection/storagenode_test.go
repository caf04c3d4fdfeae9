package vmstorageconnection

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/internal/testproc"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/vmapi"
)

// TestStorageNodeFormQueries proves the storageNode arguments the controller writes for a regional's read URL
// `https://vmauth.<domain>/vts` (TLS on, credentials from the mounted Secret): a real VictoriaLogs storage node
// holds a log line behind a real vmauth serving TLS and basic auth under /vts, and a real VictoriaLogs select node
// started with exactly DesiredFor's arguments (the Secret mount folder mapped to a local one) returns that line.
// With the address passed as written, scheme included, the select node dials host `https` and fails.
func TestStorageNodeFormQueries(t *testing.T) {
	storage := testproc.VictoriaLogs(t)
	ingest(t, storage.URL)

	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	authAddr := testproc.FreeAddr(t)
	config := filepath.Join(dir, "auth.yml")
	writeFile(t, config, `users:
- username: kof-admin
  password: kof-password-0123456789
  url_map:
  - src_paths: ["/vts/.*"]
    url_prefix: "`+storage.URL+`/"
    drop_src_path_prefix_parts: 1
`)
	bins, err := testproc.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	testproc.Start(t, "vmauth", filepath.Join(bins, "vmauth"), nil, "-httpListenAddr="+authAddr, "-auth.config="+config, "-tls",
		"-tlsCertFile="+cert, "-tlsKeyFile="+key, "-loggerLevel=WARN")
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed loopback
	waitOK(t, insecure, "https://"+authAddr+"/health")

	// The connection as operator/outputs makes it for a regional whose logs are read at https://<vmauth>/vts.
	c := conn("r1", "https://"+authAddr+"/vts",
		&kofv1.SecretKeys{Name: "kof-vmuser-creds-admin-r1", UsernameKey: "username", PasswordKey: "password"},
		&kofv1.StorageTLSConfig{Enabled: true, InsecureSkipVerify: true})
	d := DesiredFor([]kofv1.VMStorageConnection{c}, func(c *kofv1.VMStorageConnection) string {
		return c.Spec.TargetStorageNode.Secret.Name
	})
	if got := d.Args[ArgStorageNode]; got != authAddr+"/vts" {
		t.Errorf("storageNode = %q, want %q", got, authAddr+"/vts")
	}
	secrets := filepath.Join(dir, "secrets")
	writeFile(t, filepath.Join(secrets, "kof-vmuser-creds-admin-r1", "username"), "kof-admin")
	writeFile(t, filepath.Join(secrets, "kof-vmuser-creds-admin-r1", "password"), "kof-password-0123456789")

	selectAddr := testproc.FreeAddr(t)
	args := []string{"-httpListenAddr=" + selectAddr, "-storageDataPath=" + filepath.Join(dir, "select"), "-loggerLevel=WARN"}
	for k, v := range d.Args {
		args = append(args, "-"+k+"="+strings.ReplaceAll(v, vmapi.SecretsDir, secrets))
	}
	testproc.Start(t, "victoria-logs-select", filepath.Join(bins, "victoria-logs"), nil, args...).
		WaitHTTP(t, "http://"+selectAddr+"/health")
	body := query(t, "http://"+selectAddr)
	if !strings.Contains(body, "kof storage node line") {
		t.Fatalf("select node with %v answered %q, want the ingested line", args, body)
	}
}

// ingest writes one log line into the VictoriaLogs at base and makes it searchable.
func ingest(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Post(base+"/insert/jsonline?_stream_fields=app", "application/stream+json", //nolint:noctx // loopback
		strings.NewReader(`{"_msg":"kof storage node line","app":"scale"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ingest: %s", resp.Status)
	}
	if resp, err = http.Get(base + "/internal/force_flush"); err != nil { //nolint:noctx // loopback
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// query returns the answer of the LogsQL query `kof` at base, retried for a few seconds.
func query(t *testing.T, base string) string {
	t.Helper()
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.PostForm(base+"/select/logsql/query", url.Values{"query": {"kof"}}) //nolint:noctx // loopback
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		body = string(b)
		if resp.StatusCode == http.StatusOK && body != "" {
			return body
		}
	}
	return body
}

// waitOK waits up to 20 seconds for a 200 answer at u through c (testproc.WaitHTTP has no TLS client).
func waitOK(t *testing.T, c *http.Client, u string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := c.Get(u); err == nil { //nolint:noctx // loopback
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s: no 200 answer in 20s", u)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into dir and returns their paths.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "vmauth"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, key, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})))
	return cert, key
}
