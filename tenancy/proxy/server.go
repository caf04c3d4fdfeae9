// Package proxy is the tenant query proxy of the management cluster (cmd/kof-tenant-proxy): it sits in front of
// promxy (metrics, rules, alerts) and the logs and audit-logs select endpoints, checks each request's OIDC ID token
// (Authenticator), maps the user's groups to KOF tenants and rewrites every query so that it reads only those
// tenants' data: a `tenant` matcher on every MetricsQL selector (RestrictQuery, RestrictSelector), the tenant filter
// on every LogsQL query and subquery (RestrictLogsQL), rules and alerts filtered by their `tenant` label
// (FilterRules, FilterAlerts). What it cannot parse it refuses; it never passes a request through unchanged. The
// tenant label is the one the VMUser routes of the write path add (operator/outputs.TenantLabel). docs/tenancy.md
// describes the model and its limits.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcomes of a request (the `outcome` label of kof_tenant_proxy_requests_total).
const (
	OutcomeAllowed       = "allowed"
	OutcomeDenied        = "denied"
	OutcomeUpstreamError = "upstream_error"
)

// Paths of the proxy's own endpoints; they read no tenant data and need no token.
const (
	HealthPath  = "/healthz"
	MetricsPath = "/metrics"
)

// Server is the tenant proxy: build it with New and serve Handler.
type Server struct {
	cfg      *Config
	auth     *Authenticator
	upstream *http.Client
	log      *slog.Logger
	reg      *prometheus.Registry

	requests *prometheus.CounterVec
	denied   *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// Options are the dependencies of a Server; nil fields get defaults (http.DefaultClient's transport with the
// configured query timeout, a discarding logger).
type Options struct {
	// IssuerClient reaches the OIDC issuer (discovery and JWKS).
	IssuerClient *http.Client
	// UpstreamClient reaches the upstreams.
	UpstreamClient *http.Client
	// Logger receives one JSON line per request; it never receives a token.
	Logger *slog.Logger
}

// New returns the proxy for a validated cfg (Config.Validate).
func New(cfg *Config, o Options) *Server {
	if o.IssuerClient == nil {
		o.IssuerClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.UpstreamClient == nil {
		o.UpstreamClient = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, auth: NewAuthenticator(cfg, o.IssuerClient), upstream: o.UpstreamClient, log: o.Logger,
		reg: prometheus.NewRegistry()}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kof_tenant_proxy_requests_total",
		Help: "Requests by endpoint and outcome (allowed, denied, upstream_error)."}, []string{"api", "outcome"})
	s.denied = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kof_tenant_proxy_denied_requests_total",
		Help: "Denied requests by reason."}, []string{"reason"})
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "kof_tenant_proxy_request_duration_seconds",
		Help: "Time from request to the end of the response, by endpoint.", Buckets: prometheus.DefBuckets}, []string{"api"})
	s.reg.MustRegister(s.requests, s.denied, s.duration)
	return s
}

// Handler serves the proxy: HealthPath, MetricsPath, and the data paths under MetricsPrefix, LogsPrefix and
// AuditLogsPrefix.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(HealthPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.Handle(MetricsPath, promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", s.serve)
	return mux
}

// record is what one request's log line and metrics say.
type record struct {
	api, outcome, reason string
	status               int
	id                   *Identity
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &record{api: "unknown"}
	defer func() {
		s.requests.WithLabelValues(rec.api, rec.outcome).Inc()
		if rec.reason != "" {
			s.denied.WithLabelValues(rec.reason).Inc()
		}
		s.duration.WithLabelValues(rec.api).Observe(time.Since(start).Seconds())
		attrs := []any{"method", r.Method, "path", r.URL.Path, "api", rec.api, "status", rec.status,
			"outcome", rec.outcome, "duration_ms", time.Since(start).Milliseconds()}
		if rec.reason != "" {
			attrs = append(attrs, "reason", rec.reason)
		}
		if rec.id != nil {
			attrs = append(attrs, "subject", rec.id.Subject, "admin", rec.id.Admin, "tenants", rec.id.Tenants)
		}
		s.log.Info("request", attrs...)
	}()
	if d := s.handle(w, r, rec); d != nil {
		rec.outcome, rec.reason, rec.status = OutcomeDenied, d.reason, d.status
		writeDenial(w, d)
	}
}

// handle serves one data request; a denial is returned for serve to write.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, rec *record) *denial {
	rt, d := s.cfg.match(r.URL.Path)
	if d != nil {
		return d
	}
	rec.api = rt.ep.api
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return deny(http.StatusMethodNotAllowed, ReasonBadRequest, "use GET or POST")
	}
	id, d := s.auth.Authenticate(r)
	if d != nil {
		return d
	}
	rec.id = id
	scope := Scope{Admin: id.Admin, Tenants: id.Tenants}
	in, d := s.params(w, r)
	if d != nil {
		return d
	}
	out, d := s.restrict(rt.ep, in, scope)
	if d != nil {
		return d
	}
	return s.forward(r.Context(), w, rt, out, scope, rec)
}

// params returns the request's parameters: the URL query and, for POST, the form body (at most
// Limits.MaxRequestBytes, `application/x-www-form-urlencoded` only), merged, so a parameter given in both counts
// twice. Keys and values are decoded (a URL-encoded `%71uery` is `query`); a malformed encoding is refused.
func (s *Server) params(w http.ResponseWriter, r *http.Request) (url.Values, *denial) {
	if len(r.URL.RawQuery) > s.cfg.Limits.MaxQueryBytes*4 {
		return nil, deny(http.StatusRequestURITooLong, ReasonTooLarge, "the URL query is longer than %d bytes", s.cfg.Limits.MaxQueryBytes*4)
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, deny(http.StatusBadRequest, ReasonBadRequest, "cannot decode the URL query: %v", err)
	}
	if r.Method != http.MethodPost {
		return q, nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/x-www-form-urlencoded" {
			return nil, deny(http.StatusUnsupportedMediaType, ReasonBadRequest, "POST bodies must be application/x-www-form-urlencoded")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.Limits.MaxRequestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, deny(http.StatusRequestEntityTooLarge, ReasonTooLarge, "the request body is larger than %d bytes", mbe.Limit)
		}
		return nil, deny(http.StatusBadRequest, ReasonBadRequest, "read the request body: %v", err)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, deny(http.StatusBadRequest, ReasonBadRequest, "cannot decode the form body: %v", err)
	}
	for k, v := range form {
		q[k] = append(q[k], v...)
	}
	return q, nil
}

// restrict returns the parameters forwarded for ep: only its own, each single one at most once, the query or
// selectors restricted to the scope. An `extra_*` parameter (VictoriaMetrics' and VictoriaLogs' server-side
// filters) is refused: only the proxy sets those.
func (s *Server) restrict(ep endpoint, in url.Values, scope Scope) (url.Values, *denial) {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := url.Values{}
	for _, k := range keys {
		if strings.HasPrefix(strings.ToLower(k), "extra_") {
			return nil, deny(http.StatusBadRequest, ReasonForbiddenParam, "parameter %q is set by the tenant proxy only", k)
		}
		switch {
		case slices.Contains(ep.single, k):
			if len(in[k]) > 1 {
				return nil, deny(http.StatusBadRequest, ReasonDuplicateParam, "parameter %q is given %d times; give it once", k, len(in[k]))
			}
			out.Set(k, in[k][0])
		case slices.Contains(ep.multi, k):
			out[k] = in[k]
		}
	}
	max := s.cfg.Limits.MaxQueryBytes
	switch ep.kind {
	case kindQuery:
		if out.Get("query") == "" {
			return nil, deny(http.StatusBadRequest, ReasonBadQuery, "parameter \"query\" is missing")
		}
		q, err := RestrictQuery(out.Get("query"), scope, max)
		if err != nil {
			return nil, err.(*denial)
		}
		out.Set("query", q)
	case kindSelectors:
		var sels []string
		for _, m := range out["match[]"] {
			r, err := RestrictSelector(m, scope, max)
			if err != nil {
				return nil, err.(*denial)
			}
			sels = append(sels, r)
		}
		if len(sels) == 0 && !scope.Admin {
			sels = []string{scope.TenantSelector()}
		}
		if len(sels) > 0 {
			out["match[]"] = sels
		}
	case kindLogs:
		q, err := RestrictLogsQL(out.Get("query"), scope, max)
		if err != nil {
			return nil, err.(*denial)
		}
		out.Set("query", q)
		if !scope.Admin {
			out.Set("extra_filters", scope.LogsFilter())
		}
	}
	return out, nil
}

// forward sends the restricted request to the upstream (GET, within Limits.QueryTimeout) and writes its answer:
// streamed for data endpoints, filtered for rules and alerts. An upstream that cannot be reached is a 502.
func (s *Server) forward(ctx context.Context, w http.ResponseWriter, rt route, params url.Values, scope Scope, rec *record) *denial {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Limits.QueryTimeout.Duration)
	defer cancel()
	target := strings.TrimSuffix(rt.upstream, "/") + rt.path
	if enc := params.Encode(); enc != "" {
		target += "?" + enc
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return deny(http.StatusBadRequest, ReasonBadRequest, "build the upstream request: %v", err)
	}
	resp, err := s.upstream.Do(req)
	if err != nil {
		rec.outcome, rec.status = OutcomeUpstreamError, http.StatusBadGateway
		writeError(w, http.StatusBadGateway, "upstream_unavailable", "the upstream did not answer")
		return nil
	}
	defer resp.Body.Close()
	rec.status = resp.StatusCode
	rec.outcome = OutcomeAllowed
	if resp.StatusCode >= 500 {
		rec.outcome = OutcomeUpstreamError
	}
	if (rt.ep.kind == kindRules || rt.ep.kind == kindAlerts) && resp.StatusCode == http.StatusOK {
		return s.writeFiltered(w, resp, rt.ep.kind, scope, rec)
	}
	copyHeaders(w, resp)
	w.WriteHeader(resp.StatusCode)
	if !rt.ep.stream {
		_, _ = io.Copy(w, resp.Body)
		return nil
	}
	flush := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil
			}
			_ = flush.Flush()
		}
		if err != nil {
			return nil
		}
	}
}

// writeFiltered reads a rules or alerts document (at most Limits.MaxRulesBytes) and writes it filtered to scope.
func (s *Server) writeFiltered(w http.ResponseWriter, resp *http.Response, k kind, scope Scope, rec *record) *denial {
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.cfg.Limits.MaxRulesBytes+1))
	if err != nil || int64(len(body)) > s.cfg.Limits.MaxRulesBytes {
		rec.outcome, rec.status = OutcomeUpstreamError, http.StatusBadGateway
		writeError(w, http.StatusBadGateway, "upstream_response", "the upstream's answer could not be read within the size limit")
		return nil
	}
	filter := FilterRules
	if k == kindAlerts {
		filter = FilterAlerts
	}
	out, err := filter(body, scope)
	if err != nil {
		rec.outcome, rec.status = OutcomeUpstreamError, http.StatusBadGateway
		writeError(w, http.StatusBadGateway, "upstream_response", err.Error())
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
	return nil
}

// copyHeaders copies the upstream's content headers, nothing else (no cookies, no upstream identities).
func copyHeaders(w http.ResponseWriter, resp *http.Response) {
	for _, h := range []string{"Content-Type", "Content-Disposition"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
}

// writeDenial writes d as a Prometheus API error (Grafana shows `error`); a 401 says which scheme to use.
func writeDenial(w http.ResponseWriter, d *denial) {
	if d.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", error_description=%q`, d.reason))
	}
	writeError(w, d.status, d.reason, d.message)
}

func writeError(w http.ResponseWriter, status int, errType, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": errType, "error": msg})
}
