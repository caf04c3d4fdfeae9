package webui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// Names of the local session: the query parameter of the URL `kof ui` prints and the cookie it becomes.
const (
	TokenParam  = "token"
	TokenCookie = "kof-ui-token"
)

// NewToken returns 32 random bytes from crypto/rand as hex: the secret of one `kof ui` session.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("draw session token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// LocalGuard admits the user of one `kof ui` session on loopback. The UI reads the cluster with the user's own
// kubeconfig, so nobody else on the machine (another user, a web page the browser visits) may reach it:
//   - the Host header must be one of Hosts (the listen address as 127.0.0.1 and localhost), which defeats DNS
//     rebinding;
//   - the first request brings the session token in the URL `kof ui` printed (?token=...); it is moved into an
//     HttpOnly, SameSite=Strict cookie and the browser is redirected to the same page without it;
//   - every later request must carry that cookie.
type LocalGuard struct {
	// Token is the session secret (NewToken).
	Token string
	// Hosts are the accepted Host header values, e.g. `127.0.0.1:8080` and `localhost:8080`.
	Hosts []string
}

// Allow implements Guard: 403 for another Host, a 303 redirect that sets the cookie for a valid token in the URL,
// 401 without a valid token.
func (g *LocalGuard) Allow(w http.ResponseWriter, r *http.Request) bool {
	if !slices.Contains(g.Hosts, r.Host) {
		http.Error(w, "unexpected Host header "+r.Host+"; open the URL kof ui printed", http.StatusForbidden)
		return false
	}
	if c, err := r.Cookie(TokenCookie); err == nil && g.valid(c.Value) {
		return true
	}
	if t := r.URL.Query().Get(TokenParam); t != "" && g.valid(t) {
		http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: g.Token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode})
		q := r.URL.Query()
		q.Del(TokenParam)
		target := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		http.Redirect(w, r, target.String(), http.StatusSeeOther)
		return false
	}
	http.Error(w, "no valid session token: open the URL kof ui printed", http.StatusUnauthorized)
	return false
}

func (g *LocalGuard) valid(t string) bool {
	return g.Token != "" && subtle.ConstantTimeCompare([]byte(t), []byte(g.Token)) == 1
}
