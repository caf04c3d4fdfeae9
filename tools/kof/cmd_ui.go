package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"kof.dev/kof/doctor/webui"
)

// uiShutdownGrace bounds the wait for open requests when `kof ui` stops.
const uiShutdownGrace = 5 * time.Second

// newUICommand returns `kof ui`: the read-only web UI on loopback with the user's kubeconfig.
func newUICommand(s streams) *cobra.Command {
	var f clusterFlags
	addr := "127.0.0.1:0"
	open := false
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the read-only KOF web UI on 127.0.0.1 with your kubeconfig",
		Long: `ui serves the KOF web UI (fleet, cluster detail, storage, rules; the diagnosis of kof doctor) on a
loopback address, reading the management cluster with your kubeconfig: it sees exactly what you may see and needs
nothing exposed in the cluster. It prints the URL, with a session token only your browser gets (kept in a cookie
afterwards), and opens it in your browser with --open. It runs until interrupted (Ctrl-C).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hosts, err := loopbackHosts(addr)
			if err != nil {
				return err
			}
			e, err := f.engine()
			if err != nil {
				return failed(err)
			}
			cfg, err := f.restConfig()
			if err != nil {
				return failed(err)
			}
			token, err := webui.NewToken()
			if err != nil {
				return failed(err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return failed(fmt.Errorf("--addr %s: %w", addr, err))
			}
			port := ln.Addr().(*net.TCPAddr).Port
			guard := &webui.LocalGuard{Token: token}
			for _, h := range hosts {
				guard.Hosts = append(guard.Hosts, net.JoinHostPort(h, fmt.Sprint(port)))
			}
			srv := &webui.Server{Diagnose: e.Run, Guard: guard, Source: cfg.Host}
			h, err := srv.Handler()
			if err != nil {
				_ = ln.Close()
				return failed(err)
			}
			url := fmt.Sprintf("http://%s/?%s=%s", guard.Hosts[0], webui.TokenParam, token)
			fmt.Fprintf(s.out, "kof ui: serving %s\n", url)
			fmt.Fprintf(s.out, "kof ui: read-only view of %s with your kubeconfig; Ctrl-C stops\n", cfg.Host)
			if open {
				if err := openBrowser(url); err != nil {
					fmt.Fprintf(s.err, "kof ui: cannot open a browser (%v); open the URL above\n", err)
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return failed(serve(ctx, ln, h))
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&addr, "addr", addr, "loopback address to listen on (port 0: a free port)")
	cmd.Flags().BoolVar(&open, "open", false, "open the UI in the default browser")
	return cmd
}

// loopbackHosts checks that addr listens on loopback and returns the Host names a browser may use for it.
func loopbackHosts(addr string) ([]string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w; use host:port, e.g. 127.0.0.1:0", addr, err)
	}
	switch ip := net.ParseIP(host); {
	case host == "localhost":
		return []string{"localhost", "127.0.0.1"}, nil
	case ip != nil && ip.IsLoopback():
		return []string{ip.String(), "localhost"}, nil
	}
	return nil, fmt.Errorf("--addr %q: not a loopback address; kof ui serves your kubeconfig's view on 127.0.0.1 "+
		"only (for a shared UI, enable the in-cluster kof-ui of the kof-mothership chart)", addr)
}

// serve serves h on ln until ctx ends, then shuts down within uiShutdownGrace.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), uiShutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// openBrowser opens url with the platform's opener.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Start()
}
