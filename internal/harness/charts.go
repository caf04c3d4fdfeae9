package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
)

// loopback is the only address the harness listens on or lets its programs reach.
const loopback = "127.0.0.1"

// serverStopWait bounds the shutdown of the harness's own HTTP servers.
const serverStopWait = 5 * time.Second

// ChartRepository is a Helm HTTP chart repository on loopback serving the repository's own charts (`index.yaml`
// and one `<chart>-<version>.tgz` per chart), the source of KOF's HelmRepository in the demo and e2e runs.
type ChartRepository struct {
	// URL is the repository's address, `http://127.0.0.1:<port>`.
	URL string
	// Charts are the names of the charts served, sorted.
	Charts []string

	srv *http.Server
}

// ServeCharts packages every chart of chartsDir (each folder with a Chart.yaml) and each of extra (such as
// KCMStandInCharts) into dir with the Helm SDK, writes the repository index and serves dir on a free loopback port.
// Errors name the chart that failed to load or package, or the listener.
func ServeCharts(chartsDir, dir string, extra ...*chart.Chart) (*ChartRepository, error) {
	entries, err := os.ReadDir(chartsDir)
	if err != nil {
		return nil, fmt.Errorf("read charts %q: %w", chartsDir, err)
	}
	r := &ChartRepository{}
	for _, e := range entries {
		src := filepath.Join(chartsDir, e.Name())
		if _, err := os.Stat(filepath.Join(src, "Chart.yaml")); !e.IsDir() || err != nil {
			continue
		}
		ch, err := loader.Load(src)
		if err != nil {
			return nil, fmt.Errorf("load chart %q: %w", src, err)
		}
		if _, err := chartutil.Save(ch, dir); err != nil {
			return nil, fmt.Errorf("package chart %q: %w", src, err)
		}
		r.Charts = append(r.Charts, ch.Name())
	}
	for _, ch := range extra {
		if _, err := chartutil.Save(ch, dir); err != nil {
			return nil, fmt.Errorf("package chart %q: %w", ch.Name(), err)
		}
		r.Charts = append(r.Charts, ch.Name())
	}
	sort.Strings(r.Charts)
	ln, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the chart repository: %w", err)
	}
	r.URL = "http://" + ln.Addr().String()
	index, err := repo.IndexDirectory(dir, r.URL)
	if err == nil {
		index.SortEntries()
		err = index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644)
	}
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("index charts in %q: %w", dir, err)
	}
	r.srv = &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Stop shuts the repository's server down. It returns the shutdown error, if any.
func (r *ChartRepository) Stop() error { return shutdown(r.srv, "chart repository") }

// noNetworkMessage is the answer of the harness's proxy to every request for an address outside this machine.
const noNetworkMessage = "no network: the KOF harness answers for every address outside this machine; " +
	"only the charts of its own repository (charts/) can be installed here"

// Proxy is the HTTP(S) proxy the harness gives its programs: it answers every request with 502 Bad Gateway and
// noNetworkMessage, so a third-party chart fails at once with a clear message instead of reaching for the
// internet.
type Proxy struct {
	// URL is the proxy's address, `http://127.0.0.1:<port>`.
	URL string

	srv *http.Server
}

// StartProxy starts the refusing proxy on a free loopback port. It returns the listener's error.
func StartProxy() (*Proxy, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the proxy: %w", err)
	}
	p := &Proxy{URL: "http://" + ln.Addr().String()}
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(
		func(w http.ResponseWriter, req *http.Request) {
			http.Error(w, noNetworkMessage+" (asked for "+req.Host+")", http.StatusBadGateway)
		})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Env returns the proxy environment of a program the harness runs: every outside address through the proxy,
// loopback and the node's own addresses (its API server on NodeIP, inside the node's namespaces) direct.
func (p *Proxy) Env() []string {
	direct := loopback + ",localhost," + NodeIP
	return []string{"HTTP_PROXY=" + p.URL, "HTTPS_PROXY=" + p.URL, "NO_PROXY=" + direct,
		"http_proxy=" + p.URL, "https_proxy=" + p.URL, "no_proxy=" + direct}
}

// Stop shuts the proxy down. It returns the shutdown error, if any.
func (p *Proxy) Stop() error { return shutdown(p.srv, "proxy") }

func shutdown(srv *http.Server, what string) error {
	ctx, cancel := context.WithTimeout(context.Background(), serverStopWait)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop %s: %w", what, err)
	}
	return nil
}
