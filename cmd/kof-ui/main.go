// Command kof-ui serves KOF's read-only web UI inside the management cluster (the in-cluster mode of `kof ui`, off
// by default in the kof-mothership chart). It reads the cluster with its own read-only ServiceAccount and admits a
// request only with the caller's bearer token, checked by TokenReview, and only when a SubjectAccessReview allows
// the caller the configured attributes (doctor/webui.KubeGuard); same-origin only, no CORS.
//
// The prediction renders the charts built into the binary (kof.dev/kof/charts), the charts of the same release.
//
// It is a binary of its own rather than a flag of kof-operator: its ServiceAccount can read but never write, it
// is exposed to people while the operator is not, it scales and fails apart from the reconcilers (which run one
// leader at a time), and the operator stays free of the HTTP front and of the charts the prediction renders.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// CA roots for TLS when the image has no CA files (KOF images hold only the binary; docs/release.md).
	_ "golang.org/x/crypto/x509roots/fallback"

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/charts"
	"kof.dev/kof/doctor/diagnose"
	"kof.dev/kof/doctor/webui"
)

// shutdownGrace bounds the wait for open requests on SIGTERM.
const shutdownGrace = 10 * time.Second

// options are the command line of kof-ui.
type options struct {
	addr, certFile, keyFile string
	charts                  string
	namespace, release      string
	attrs                   authzv1.ResourceAttributes
	audiences               string
	maxAge                  time.Duration
}

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kof-ui:", err)
		os.Exit(1)
	}
}

// parse reads the command line; errors name the flag.
func parse(args []string) (options, error) {
	o := options{}
	fs := flag.NewFlagSet("kof-ui", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", ":8443", "address to listen on")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "TLS certificate (PEM); with --tls-key-file the UI serves HTTPS")
	fs.StringVar(&o.keyFile, "tls-key-file", "", "TLS private key (PEM)")
	fs.StringVar(&o.charts, "charts", "", "directory of the KOF charts the prediction renders (default: the charts "+
		"built into kof-ui)")
	fs.StringVar(&o.namespace, "namespace", "kof", "umbrella release namespace")
	fs.StringVar(&o.release, "release", "kof", "umbrella release name")
	fs.StringVar(&o.attrs.Group, "authz-group", webui.DefaultGroup, "API group a caller must be allowed")
	fs.StringVar(&o.attrs.Resource, "authz-resource", webui.DefaultResource, "resource a caller must be allowed")
	fs.StringVar(&o.attrs.Verb, "authz-verb", webui.DefaultVerb, "verb a caller must be allowed")
	fs.StringVar(&o.audiences, "token-audiences", "", "comma-separated audiences a caller's token must be valid for")
	fs.DurationVar(&o.maxAge, "max-age", webui.DefaultMaxAge, "how long one diagnosis is reused")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return o, errors.New("--tls-cert-file and --tls-key-file: give both or neither")
	}
	if o.attrs.Resource == "" || o.attrs.Verb == "" {
		return o, errors.New("--authz-resource and --authz-verb: must not be empty")
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return fmt.Errorf("kubernetes configuration (in-cluster, or KUBECONFIG): %w", err)
	}
	reader, err := diagnose.NewReader(cfg)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create clientset: %w", err)
	}
	v, err := validate.New()
	if err != nil {
		return fmt.Errorf("validator: %w", err)
	}
	engine := &diagnose.Engine{Reader: reader, Read: diagnose.ReadOptions{Namespace: o.namespace, Release: o.release},
		Predict: diagnose.PredictOptions{ChartsDir: o.charts, Charts: charts.FS(), Validator: v}}
	guard := &webui.KubeGuard{Client: cs, Attributes: o.attrs}
	if o.audiences != "" {
		guard.Audiences = strings.Split(o.audiences, ",")
	}
	srv := &webui.Server{Diagnose: engine.Run, Guard: guard, Source: cfg.Host, MaxAge: o.maxAge}
	h, err := srv.Handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", o.addr, err)
	}
	scheme := "http"
	if o.certFile != "" {
		scheme = "https"
	}
	fmt.Printf("kof-ui: serving %s://%s\n", scheme, ln.Addr())
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx, ln, h, o)
}

// serve serves h on ln (TLS when configured) until ctx ends, then shuts down within shutdownGrace.
func serve(ctx context.Context, ln net.Listener, h http.Handler, o options) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		if o.certFile != "" {
			done <- hs.ServeTLS(ln, o.certFile, o.keyFile)
			return
		}
		done <- hs.Serve(ln)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
