package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testAudience is the OAuth client ID the test issuer's ID tokens are issued to.
const testAudience = "kof-grafana"

// issuer is a real OIDC issuer on loopback for the tests: it serves the discovery document and a JWKS (an RSA and
// an EC key, rotatable) over HTTP, and signs ID tokens. It is written here rather than taken from an OpenID
// provider library because the tests need tokens no conforming provider issues (expired, for another audience,
// signed with `none`, with HMAC over the public key, with a key outside the JWKS, tampered after signing), and a
// provider's own issuance needs an interactive authorization-code login per user; what the proxy talks to, the
// discovery document and the JWKS over HTTP, is the same.
type issuer struct {
	srv *httptest.Server

	mu     sync.Mutex
	rsaKey *rsa.PrivateKey
	rsaKID string
	ecKey  *ecdsa.PrivateKey
	rogue  *rsa.PrivateKey
	gen    int
	// jwksFetches counts the JWKS requests (rotation is seen as a new fetch).
	jwksFetches int
}

// newIssuer starts an issuer, stopped when the test ends.
func newIssuer(t testing.TB) *issuer {
	t.Helper()
	is, err := startIssuer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.srv.Close)
	return is
}

// startIssuer starts an issuer on loopback with fresh keys; the caller closes is.srv.
func startIssuer() (*issuer, error) {
	is := &issuer{rsaKID: "rsa-0"}
	var err error
	if is.rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, err
	}
	if is.ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		return nil, err
	}
	if is.rogue, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/keys",
			"authorization_endpoint": is.srv.URL + "/auth", "token_endpoint": is.srv.URL + "/token",
			"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.jwksFetches++
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &is.rsaKey.PublicKey, KeyID: is.rsaKID, Algorithm: "RS256", Use: "sig"},
			{Key: &is.ecKey.PublicKey, KeyID: "ec-0", Algorithm: "ES256", Use: "sig"},
		}}
		_ = json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	return is, nil
}

// rotate replaces the RSA key and its key ID; the old key leaves the JWKS.
func (is *issuer) rotate(t testing.TB) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.gen++
	is.rsaKey, is.rsaKID = k, "rsa-"+strings.Repeat("x", is.gen)
}

// claims returns the standard claims of a valid ID token for subject with groups.
func (is *issuer) claims(subject string, groups []string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.srv.URL, "aud": testAudience, "sub": subject, "groups": groups,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// sign signs claims with alg and the key for it (RS256/RS384: the current RSA key; ES256: the EC key).
func (is *issuer) sign(t testing.TB, claims map[string]any, alg jose.SignatureAlgorithm) string {
	t.Helper()
	is.mu.Lock()
	key := jose.JSONWebKey{Key: is.rsaKey, KeyID: is.rsaKID}
	is.mu.Unlock()
	if alg == jose.ES256 {
		key = jose.JSONWebKey{Key: is.ecKey, KeyID: "ec-0"}
	}
	return signWith(t, claims, alg, key)
}

func signWith(t testing.TB, claims map[string]any, alg jose.SignatureAlgorithm, key any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// token returns the ID token of one attack kind (or "valid", "es256") for subject with groups; "none" is "".
func (is *issuer) token(t testing.TB, kind, subject string, groups []string) string {
	t.Helper()
	c := is.claims(subject, groups)
	b64 := base64.RawURLEncoding.EncodeToString
	switch kind {
	case "valid", "":
		return is.sign(t, c, jose.RS256)
	case "es256":
		return is.sign(t, c, jose.ES256)
	case "none":
		return ""
	case "expired":
		c["iat"], c["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
		return is.sign(t, c, jose.RS256)
	case "wrong_audience":
		c["aud"] = "another-client"
		return is.sign(t, c, jose.RS256)
	case "wrong_issuer":
		c["iss"] = "https://issuer.invalid"
		return is.sign(t, c, jose.RS256)
	case "rs384":
		return is.sign(t, c, jose.RS384)
	case "alg_none":
		payload, _ := json.Marshal(c)
		return b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(payload) + "."
	case "hs256_public_key":
		der, err := x509.MarshalPKIXPublicKey(&is.rsaKey.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		return signWith(t, c, jose.HS256, jose.JSONWebKey{Key: secret, KeyID: is.rsaKID})
	case "unknown_key":
		return signWith(t, c, jose.RS256, jose.JSONWebKey{Key: is.rogue, KeyID: "rogue-1"})
	case "tampered":
		tok := is.sign(t, c, jose.RS256)
		parts := strings.Split(tok, ".")
		c["groups"] = []string{adminGroup}
		payload, _ := json.Marshal(c)
		return parts[0] + "." + b64(payload) + "." + parts[2]
	case "garbage":
		return "not-a-jwt"
	}
	t.Fatalf("unknown token kind %q", kind)
	return ""
}
