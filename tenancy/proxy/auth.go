package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// SigningAlgorithms are the only ID token signature algorithms accepted: asymmetric ones whose keys the issuer
// publishes in its JWKS. `none` and the HMAC algorithms (HS256...) are never accepted, so a token signed with a
// published public key as an HMAC secret fails.
var SigningAlgorithms = []string{oidc.RS256, oidc.ES256}

// IDTokenHeader is the header Grafana puts the user's ID token in when a data source forwards the OAuth identity
// (`oauthPassThru`); without it the token is read from `Authorization: Bearer`.
const IDTokenHeader = "X-Id-Token"

// discoveryRetry is how long a failed discovery of the issuer is remembered before the next request tries again.
const discoveryRetry = 5 * time.Second

// Identity is who a request is from, as its verified ID token says.
type Identity struct {
	// Subject is the token's `sub`.
	Subject string
	// Tenants are the KOF tenants the user's groups map to, sorted; empty for an admin.
	Tenants []string
	// Admin is true when one of the user's groups is an admin group: the user sees every tenant.
	Admin bool
}

// denial is a request the proxy refuses: the HTTP status, a reason (a label of the denied-requests metric) and a
// message for the caller.
type denial struct {
	status  int
	reason  string
	message string
}

func (d *denial) Error() string { return d.reason + ": " + d.message }

func deny(status int, reason, format string, args ...any) *denial {
	return &denial{status: status, reason: reason, message: fmt.Sprintf(format, args...)}
}

// Reasons a request is denied (the `reason` label of kof_tenant_proxy_denied_requests_total).
const (
	ReasonMissingToken   = "missing_token"
	ReasonInvalidToken   = "invalid_token"
	ReasonExpiredToken   = "expired_token"
	ReasonNoTenant       = "no_tenant"
	ReasonIssuerDown     = "issuer_unavailable"
	ReasonBadQuery       = "unparsable_query"
	ReasonForbiddenParam = "forbidden_parameter"
	ReasonDuplicateParam = "duplicate_parameter"
	ReasonTenantRewrite  = "tenant_rewrite"
	ReasonForbiddenPipe  = "forbidden_pipe"
	ReasonTooLarge       = "too_large"
	ReasonBadRequest     = "bad_request"
	ReasonNotServed      = "not_served"
)

// Authenticator checks ID tokens against the issuer of its Config and maps their groups to tenants.
type Authenticator struct {
	cfg    *Config
	client *http.Client

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	failedAt time.Time
	lastErr  error
}

// NewAuthenticator returns an Authenticator for cfg that reaches the issuer with client (discovery and JWKS). The
// issuer is discovered on the first request, and again after a failure, so the proxy starts while the issuer is
// down.
func NewAuthenticator(cfg *Config, client *http.Client) *Authenticator {
	return &Authenticator{cfg: cfg, client: client}
}

// verifierFor returns the ID token verifier, discovering the issuer when it has not been yet. The verifier checks
// the signature against the issuer's JWKS (fetched again when a token names an unknown key, so rotated keys are
// picked up), the issuer, the audience, the expiry and the algorithm (SigningAlgorithms).
func (a *Authenticator) verifierFor(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verifier != nil {
		return a.verifier, nil
	}
	if !a.failedAt.IsZero() && time.Since(a.failedAt) < discoveryRetry {
		return nil, a.lastErr
	}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, a.client), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, a.cfg.Issuer)
	if err != nil {
		a.failedAt, a.lastErr = time.Now(), fmt.Errorf("discover issuer %s: %w", a.cfg.Issuer, err)
		return nil, a.lastErr
	}
	a.verifier = p.VerifierContext(oidc.ClientContext(context.Background(), a.client), &oidc.Config{
		ClientID: a.cfg.Audience, SupportedSigningAlgs: SigningAlgorithms,
	})
	return a.verifier, nil
}

// rawToken returns the ID token of r: the IDTokenHeader, else the bearer token of `Authorization`.
func rawToken(r *http.Request) (string, *denial) {
	if v := r.Header.Values(IDTokenHeader); len(v) > 0 {
		if len(v) > 1 || strings.TrimSpace(v[0]) == "" {
			return "", deny(http.StatusUnauthorized, ReasonMissingToken, "send one ID token in %s", IDTokenHeader)
		}
		return strings.TrimSpace(v[0]), nil
	}
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		return "", deny(http.StatusUnauthorized, ReasonMissingToken, "no ID token: send `Authorization: Bearer <ID token>`")
	}
	if len(h) > 1 {
		return "", deny(http.StatusUnauthorized, ReasonMissingToken, "send one Authorization header")
	}
	scheme, tok, ok := strings.Cut(h[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", deny(http.StatusUnauthorized, ReasonMissingToken, "the Authorization header is not `Bearer <ID token>`")
	}
	return strings.TrimSpace(tok), nil
}

// Authenticate returns the identity of r's ID token, or the denial: 401 for a missing or failing token, 403 for a
// valid token whose groups map to no tenant, 503 when the issuer cannot be discovered.
func (a *Authenticator) Authenticate(r *http.Request) (*Identity, *denial) {
	raw, d := rawToken(r)
	if d != nil {
		return nil, d
	}
	v, err := a.verifierFor(r.Context())
	if err != nil {
		return nil, deny(http.StatusServiceUnavailable, ReasonIssuerDown, "the OIDC issuer cannot be reached; try again later")
	}
	tok, err := v.Verify(r.Context(), raw)
	if err != nil {
		var exp *oidc.TokenExpiredError
		if errors.As(err, &exp) {
			return nil, deny(http.StatusUnauthorized, ReasonExpiredToken, "the ID token expired at %s", exp.Expiry.UTC().Format(time.RFC3339))
		}
		return nil, deny(http.StatusUnauthorized, ReasonInvalidToken, "the ID token failed verification: %s", tokenError(err))
	}
	var claims map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return nil, deny(http.StatusUnauthorized, ReasonInvalidToken, "the ID token's claims are not a JSON object")
	}
	if _, ok := claims["_claim_names"]; ok {
		return nil, deny(http.StatusUnauthorized, ReasonInvalidToken, "distributed claims are not accepted")
	}
	groups, err := stringsClaim(claims[a.cfg.TenantClaim])
	if err != nil {
		return nil, deny(http.StatusUnauthorized, ReasonInvalidToken, "claim %q: %v", a.cfg.TenantClaim, err)
	}
	return a.identity(tok.Subject, groups)
}

// identity maps groups to an Identity (Config.AdminGroups, Config.Groups); no tenant is a 403.
func (a *Authenticator) identity(subject string, groups []string) (*Identity, *denial) {
	id := &Identity{Subject: subject}
	for _, g := range groups {
		if slices.Contains(a.cfg.AdminGroups, g) {
			id.Admin = true
		}
		id.Tenants = append(id.Tenants, a.cfg.Groups[g]...)
	}
	if id.Admin {
		id.Tenants = nil
		return id, nil
	}
	slices.Sort(id.Tenants)
	id.Tenants = slices.Compact(id.Tenants)
	if len(id.Tenants) == 0 {
		return nil, deny(http.StatusForbidden, ReasonNoTenant, "none of your groups (claim %q) is mapped to a KOF tenant", a.cfg.TenantClaim)
	}
	return id, nil
}

// stringsClaim reads a claim that is a string or a list of strings; a missing claim is no value.
func stringsClaim(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, errors.New("want a string or a list of strings")
	}
	return []string{one}, nil
}

// tokenError shortens go-oidc's error to what the caller may read (it never holds the token itself).
func tokenError(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
