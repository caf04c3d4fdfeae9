package webui

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The default permission a caller must have to see the in-cluster UI: `get` on the resource `ui` of KOF's API
// group, which the kof-mothership chart grants with its `<release>-ui-viewer` ClusterRole (RBAC rules may name
// resources no API serves, as here: the UI itself).
const (
	DefaultGroup    = "kof.k0rdent.mirantis.com"
	DefaultResource = "ui"
	DefaultVerb     = "get"
)

// DefaultAttributes returns the SubjectAccessReview attributes of DefaultGroup, DefaultResource and DefaultVerb.
func DefaultAttributes() authzv1.ResourceAttributes {
	return authzv1.ResourceAttributes{Group: DefaultGroup, Resource: DefaultResource, Verb: DefaultVerb}
}

// DefaultReviewTTL is how long a token's review is reused.
const DefaultReviewTTL = 10 * time.Second

// maxReviews bounds the cache of token reviews.
const maxReviews = 1024

// KubeGuard admits callers the Kubernetes API server vouches for: every request must carry `Authorization: Bearer
// <token>`; the token is checked with a TokenReview (authentication.k8s.io/v1), and the user it names with a
// SubjectAccessReview (authorization.k8s.io/v1) for Attributes. Outcomes are cached per token hash for TTL.
// Source: Kubernetes docs, "Authenticating" (webhook token authentication, TokenReview) and "Authorization"
// (SubjectAccessReview); the kof-ui's own ServiceAccount needs `create` on both (ClusterRole
// system:auth-delegator).
type KubeGuard struct {
	// Client creates TokenReviews and SubjectAccessReviews.
	Client kubernetes.Interface
	// Attributes are checked for every caller; zero means DefaultAttributes.
	Attributes authzv1.ResourceAttributes
	// Audiences, when set, are the audiences the token must be valid for.
	Audiences []string
	// TTL bounds the reuse of a review; 0 means DefaultReviewTTL.
	TTL time.Duration
	// Now returns the time; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]review
}

// review is one cached outcome: the HTTP status to answer (0: allowed) and the reason.
type review struct {
	status int
	reason string
	at     time.Time
}

// Allow implements Guard: 401 without a bearer token or for a token the API server does not authenticate, 403 for
// a user without the right, 503 when the API server cannot be asked.
func (g *KubeGuard) Allow(w http.ResponseWriter, r *http.Request) bool {
	token, ok := bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kof-ui"`)
		http.Error(w, "authentication required: send Authorization: Bearer <token>", http.StatusUnauthorized)
		return false
	}
	rv := g.check(r.Context(), token)
	if rv.status == 0 {
		return true
	}
	if rv.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kof-ui", error="invalid_token"`)
	}
	http.Error(w, rv.reason, rv.status)
	return false
}

// bearer returns the token of an `Authorization: Bearer <token>` header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

func (g *KubeGuard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// check returns the cached or a new review of token.
func (g *KubeGuard) check(ctx context.Context, token string) review {
	key := sha256.Sum256([]byte(token))
	ttl := g.TTL
	if ttl == 0 {
		ttl = DefaultReviewTTL
	}
	g.mu.Lock()
	if rv, ok := g.cache[key]; ok && g.now().Sub(rv.at) < ttl {
		g.mu.Unlock()
		return rv
	}
	g.mu.Unlock()
	rv := g.review(ctx, token)
	if rv.status == http.StatusServiceUnavailable {
		return rv // never cache the API server's own failure
	}
	rv.at = g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cache == nil {
		g.cache = map[[32]byte]review{}
	}
	if len(g.cache) >= maxReviews {
		for k, old := range g.cache {
			if g.now().Sub(old.at) >= ttl || len(g.cache) >= maxReviews {
				delete(g.cache, k)
			}
		}
	}
	g.cache[key] = rv
	return rv
}

// review asks the API server about token: TokenReview, then SubjectAccessReview for the user it names.
func (g *KubeGuard) review(ctx context.Context, token string) review {
	tr, err := g.Client.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: g.Audiences}}, metav1.CreateOptions{})
	if err != nil {
		return review{status: http.StatusServiceUnavailable, reason: "cannot review the token: " + err.Error()}
	}
	if !tr.Status.Authenticated {
		return review{status: http.StatusUnauthorized, reason: "the Kubernetes API server does not accept the token"}
	}
	attrs := g.Attributes
	if attrs == (authzv1.ResourceAttributes{}) {
		attrs = DefaultAttributes()
	}
	u := tr.Status.User
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := g.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{ResourceAttributes: &attrs, User: u.Username, Groups: u.Groups,
			UID: u.UID, Extra: extra}}, metav1.CreateOptions{})
	if err != nil {
		return review{status: http.StatusServiceUnavailable, reason: "cannot review access: " + err.Error()}
	}
	if !sar.Status.Allowed {
		return review{status: http.StatusForbidden, reason: "user " + u.Username + " may not " + attrs.Verb + " " +
			attrs.Resource + "." + attrs.Group + " (grant it with the kof-mothership ui-viewer ClusterRole)"}
	}
	return review{}
}
