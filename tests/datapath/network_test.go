package datapath

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// backend is where the stand-in network sends the requests for one cluster host name.
type backend struct {
	// addr is the loopback address of the program.
	addr string
	// clusterPaths strips the tenant part of VictoriaMetrics cluster paths (`/insert/0/prometheus/...` →
	// `/prometheus/...`), for a single-node VictoriaMetrics standing in for vminsert and vmselect.
	clusterPaths bool
}

// clusterPath matches the tenant prefix of a VictoriaMetrics cluster path.
var clusterPath = regexp.MustCompile(`^/(insert|select)/[0-9:]+/`)

// network is a loopback HTTP proxy standing in for cluster DNS and the ingress: requests for a known host name
// (`host:port` as the rendered URLs and storage URLs give it) go to its backend; CONNECT tunnels are TLS-terminated
// with a certificate of the test CA for the requested host, like the ingress in front of a regional vmauth. Unknown
// hosts get 502.
type network struct {
	addr   string
	caFile string
	mu     sync.Mutex
	routes map[string]backend
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	srv    *http.Server
}

// startNetwork starts the proxy on loopback and writes its CA into the test's folder; it stops at the end of the test.
func startNetwork(t *testing.T) *network {
	t.Helper()
	n := &network{routes: map[string]backend{}}
	n.newCA(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.addr = l.Addr().String()
	n.srv = &http.Server{Handler: n, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = n.srv.Serve(l) }()
	t.Cleanup(func() { _ = n.srv.Close() })
	return n
}

// URL returns the proxy's URL for HTTP_PROXY and HTTPS_PROXY.
func (n *network) URL() string { return "http://" + n.addr }

// route sends requests for host (`name:port`) to b.
func (n *network) route(host string, b backend) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.routes[host] = b
}

func (n *network) lookup(host string) (backend, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, ok := n.routes[host]
	return b, ok
}

// ServeHTTP proxies one request in absolute form, or opens a TLS-terminated tunnel for CONNECT.
func (n *network) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		n.tunnel(w, r)
		return
	}
	n.forward(w, r, r.URL.Host)
}

// forward sends r to the backend of host.
func (n *network) forward(w http.ResponseWriter, r *http.Request, host string) {
	b, ok := n.lookup(host)
	if !ok {
		http.Error(w, "no route to "+host, http.StatusBadGateway)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: b.addr, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
			if b.clusterPaths {
				pr.Out.URL.Path = clusterPath.ReplaceAllString(r.URL.Path, "/")
			}
			pr.Out.Host = host
		},
		Transport: &http.Transport{Proxy: nil},
	}
	rp.ServeHTTP(w, r)
}

// tunnel answers CONNECT host:port, terminates TLS with a certificate for host and serves the requests inside.
func (n *network) tunnel(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijack", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		return
	}
	name, _, _ := net.SplitHostPort(host)
	cert, err := n.leaf(name)
	if err != nil {
		conn.Close()
		return
	}
	tc := tls.Server(&bufferedConn{Conn: conn, r: buf.Reader}, &tls.Config{Certificates: []tls.Certificate{cert}})
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.forward(w, r, host) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	_ = srv.Serve(&oneConn{c: tc})
}

// newCA makes the test CA and writes it to caFile (the collector trusts it through SSL_CERT_FILE).
func (n *network) newCA(t *testing.T) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kof data-path test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	n.ca, _ = x509.ParseCertificate(der)
	n.caKey = key
	n.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(n.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// leaf returns a server certificate for name signed by the test CA.
func (n *network) leaf(name string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, n.ca, &key.PublicKey, n.caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// bufferedConn is a hijacked connection whose first bytes may sit in the server's reader.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// oneConn is a listener that yields one connection, then blocks until that connection is closed.
type oneConn struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
	mu   sync.Mutex
}

func (l *oneConn) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	done := l.done
	l.mu.Unlock()
	var c net.Conn
	l.once.Do(func() { c = &closeNotify{Conn: l.c, done: done} })
	if c != nil {
		return c, nil
	}
	<-done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error { return nil }

func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// closeNotify closes done when the connection is closed, ending oneConn's Accept.
type closeNotify struct {
	net.Conn
	done chan struct{}
	once sync.Once
}

func (c *closeNotify) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}
