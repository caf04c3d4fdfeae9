// Package webui serves KOF's read-only web UI over the diagnosis engine (doctor/diagnose): the fleet, one
// cluster's detail, the storage connections and the merged rules, as server-rendered HTML with one embedded
// stylesheet (no script, no CDN: it works offline) plus the diagnosis as JSON.
//
// Every request passes two gates before a page: same origin (only GET and HEAD; a request whose Origin or
// Sec-Fetch-Site says it comes from another site is refused, and no CORS header is ever sent) and a Guard that
// decides who the caller is: LocalGuard for `kof ui` on loopback (a random token the CLI prints, kept in a cookie,
// and a Host check against DNS rebinding), KubeGuard for the in-cluster kof-ui (the caller's bearer token through
// TokenReview and SubjectAccessReview). Sources: docs/ui.md; Kubernetes authentication/v1 TokenReview and
// authorization/v1 SubjectAccessReview; the Fetch standard's Sec-Fetch-Site header.
package webui

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"kof.dev/kof/doctor/diagnose"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Paths the server answers.
const (
	PathFleet   = "/"
	PathCluster = "/clusters/"
	PathStorage = "/storage"
	PathRules   = "/rules"
	PathAPI     = "/api/diagnosis"
	PathStatic  = "/static/"
	PathHealth  = "/healthz"
)

// refreshParam, when set on a page request, makes the server read the cluster again instead of using the cache.
const refreshParam = "refresh"

// DefaultMaxAge is how long a diagnosis is reused before the cluster is read again.
const DefaultMaxAge = 15 * time.Second

// Guard decides whether a request may see the UI. Allow returns true to go on; otherwise it has written the
// response (401, 403, ...) itself.
type Guard interface {
	Allow(w http.ResponseWriter, r *http.Request) bool
}

// Server serves the UI. Diagnose and Guard are required.
type Server struct {
	// Diagnose returns a fresh diagnosis (diagnose.Engine.Run).
	Diagnose func(ctx context.Context) (*diagnose.Diagnosis, error)
	// Guard admits callers.
	Guard Guard
	// Source describes the cluster shown, e.g. its API server URL; shown in every page's header.
	Source string
	// MaxAge bounds the reuse of a diagnosis; 0 means DefaultMaxAge.
	MaxAge time.Duration
	// Now returns the time; nil means time.Now.
	Now func() time.Time

	once  sync.Once
	pages *template.Template
	err   error

	mu     sync.Mutex
	last   *diagnose.Diagnosis
	lastAt time.Time
}

// Handler returns the server's handler: the gates, then the pages. It fails when the embedded templates do not
// parse (a build defect, caught by the package's tests).
func (s *Server) Handler() (http.Handler, error) {
	s.once.Do(func() { s.pages, s.err = parsePages() })
	if s.err != nil {
		return nil, s.err
	}
	if s.Diagnose == nil || s.Guard == nil {
		return nil, fmt.Errorf("webui: Server.Diagnose and Server.Guard are required")
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, fmt.Errorf("webui: static assets: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+PathStatic, http.StripPrefix(PathStatic, http.FileServerFS(static)))
	mux.HandleFunc("GET "+PathAPI, s.api)
	mux.HandleFunc("GET "+PathStorage, s.page(pageStorage))
	mux.HandleFunc("GET "+PathRules, s.page(pageRules))
	mux.HandleFunc("GET "+PathCluster+"{namespace}/{name}", s.page(pageCluster))
	mux.HandleFunc("GET /{$}", s.page(pageFleet))
	guarded := s.sameOrigin(s.guard(mux))
	root := http.NewServeMux()
	root.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	root.Handle("/", guarded)
	return securityHeaders(root), nil
}

// securityHeaders sets the headers every response carries: no script may run, nothing may frame or embed the UI,
// nothing is cached or sent as a referrer.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "+
			"form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses what is not a plain read from the UI's own origin: methods other than GET and HEAD (405, so
// also every CORS preflight), and requests that a browser marks as coming from another site (Sec-Fetch-Site
// cross-site or same-site) or whose Origin is not this host (403).
func (s *Server) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "cross-site", "same-site":
			http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host && o != "https://"+r.Host {
			http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Guard.Allow(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// diagnosis returns the cached diagnosis while it is younger than MaxAge (unless refresh), else a new one; one
// diagnosis runs at a time.
func (s *Server) diagnosis(ctx context.Context, refresh bool) (*diagnose.Diagnosis, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maxAge := s.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if s.last != nil && !refresh && s.now().Sub(s.lastAt) < maxAge {
		return s.last, s.lastAt, nil
	}
	d, err := s.Diagnose(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	s.last, s.lastAt = d, s.now()
	return d, s.lastAt, nil
}

// api serves the diagnosis as JSON.
func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	d, _, err := s.diagnosis(r.Context(), r.URL.Query().Has(refreshParam))
	if err != nil {
		http.Error(w, "diagnosis failed: "+err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(d)
}
