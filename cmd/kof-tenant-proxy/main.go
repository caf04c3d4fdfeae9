// Command kof-tenant-proxy is the tenant query proxy of the management cluster (kof-mothership `tenantProxy`):
// every request to the metrics, logs and audit-logs read endpoints carries the user's OIDC ID token (Grafana
// forwards it), and the proxy answers with the data of the user's tenants only (tenancy/proxy, docs/tenancy.md).
// It logs one JSON line per request and never a token; its own metrics are at /metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	// CA roots for TLS when the image has no CA files (KOF images hold only the binary; docs/release.md).
	_ "golang.org/x/crypto/x509roots/fallback"

	"kof.dev/kof/tenancy/proxy"
)

// shutdownGrace bounds the wait for open requests on SIGTERM.
const shutdownGrace = 10 * time.Second

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kof-tenant-proxy:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("kof-tenant-proxy", flag.ContinueOnError)
	addr := fs.String("addr", ":8080", "address to listen on")
	cfgPath := fs.String("config", "/etc/kof-tenant-proxy/config.yaml", "configuration file (tenancy/proxy.Config)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg, err := proxy.LoadConfig(*cfgPath)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	p := proxy.New(cfg, proxy.Options{Logger: log})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout: cfg.Limits.QueryTimeout.Duration + 5*time.Second, MaxHeaderBytes: 64 << 10}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "issuer", cfg.Issuer, "audience", cfg.Audience)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}
