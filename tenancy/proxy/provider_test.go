package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
	"golang.org/x/text/language"
)

// The real OpenID provider of these tests is zitadel's (github.com/zitadel/oidc/v3: its `op` package, served with
// the module's in-memory example storage and login form), so the ID tokens the proxy checks here are the ones a
// conforming provider issues after a real authorization-code login, not tokens this package signs itself. The
// hand-made issuer of issuer_test.go stays for the tokens no conforming provider issues (expired, `alg: none`,
// HMAC over the public key, tampered).

// providerPassword is every test user's password at the provider.
const providerPassword = "Correct-Horse-9"

// providerRedirect is the registered redirect URI of the provider's clients; the test's browser stops there and
// reads the code, as Grafana's callback would.
const providerRedirect = "http://127.0.0.1:1/login/generic_oauth"

// providerUsers serves testUsers to the provider's storage: user `<name>` with that name's groups.
type providerUsers struct{}

// GetUserByID returns the test user of id, nil when there is none (storage.UserStore).
func (providerUsers) GetUserByID(id string) *storage.User {
	if _, ok := testUsers[id]; !ok {
		return nil
	}
	return &storage.User{ID: id, Username: id, Password: providerPassword, FirstName: id, LastName: "KOF",
		Email: id + "@example.com", EmailVerified: true, PreferredLanguage: language.English}
}

// GetUserByUsername is GetUserByID: the test users' IDs are their names (storage.UserStore).
func (u providerUsers) GetUserByUsername(name string) *storage.User { return u.GetUserByID(name) }

// ExampleClientID names the client the example storage's service user belongs to (storage.UserStore).
func (providerUsers) ExampleClientID() string { return testAudience }

// groupsScope is the scope that asks the provider for the `groups` claim in the ID token.
const groupsScope = "groups"

// groupsStorage is the provider's storage with a `groups` claim: the user's testUsers groups when the client asked
// for groupsScope.
type groupsStorage struct{ *storage.Storage }

// GetClientByClientID returns the client of id, allowed to ask for groupsScope (op.Storage).
func (s groupsStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return groupsClient{c}, nil
}

// SetUserinfoFromScopes adds the groups claim to what the example storage sets (op.Storage); the provider calls it
// for the ID token's claims.
func (s groupsStorage) SetUserinfoFromScopes(ctx context.Context, info *oidc.UserInfo, userID, clientID string,
	scopes []string) error {
	if err := s.Storage.SetUserinfoFromScopes(ctx, info, userID, clientID, scopes); err != nil {
		return err
	}
	if slices.Contains(scopes, groupsScope) {
		info.AppendClaims(DefaultTenantClaim, testUsers[userID])
	}
	return nil
}

// groupsClient is a provider client that may ask for groupsScope.
type groupsClient struct{ op.Client }

// IsScopeAllowed allows groupsScope besides what the client allows (op.Client).
func (c groupsClient) IsScopeAllowed(scope string) bool {
	return scope == groupsScope || c.Client.IsScopeAllowed(scope)
}

// provider is a running zitadel OpenID provider with two web clients: testAudience (Grafana's, whose tokens the
// proxy accepts) and "other-app" (another application's).
type provider struct {
	srv     *httptest.Server
	clients map[string]string // client ID → secret
}

// startProvider starts the provider on loopback, stopped when the test ends.
func startProvider(t *testing.T) *provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{clients: map[string]string{testAudience: "grafana-client-secret", "other-app": "other-secret"}}
	clients := map[string]*storage.Client{}
	for id, secret := range p.clients {
		clients[id] = storage.WebClient(id, secret, providerRedirect)
	}
	issuer := "http://" + ln.Addr().String()
	st := groupsStorage{storage.NewStorageWithClients(providerUsers{}, clients)}
	// SetupServer makes its logger the process's default; its per-request lines are not the proxy's and are dropped.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p.srv = httptest.NewUnstartedServer(exampleop.SetupServer(issuer, st, quiet, false))
	p.srv.Listener.Close()
	p.srv.Listener = ln
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// login runs the authorization-code flow for user at client as a browser does (the provider's login form with
// the user's password), exchanges the code with the client's secret, and returns the ID token. Errors: any step's.
func (p *provider) login(ctx context.Context, client, user, password string) (string, error) {
	conf := &oauth2.Config{ClientID: client, ClientSecret: p.clients[client], RedirectURL: providerRedirect,
		Scopes: []string{oidc.ScopeOpenID, oidc.ScopeProfile, groupsScope},
		Endpoint: oauth2.Endpoint{AuthURL: p.srv.URL + "/auth", TokenURL: p.srv.URL + "/oauth/token",
			AuthStyle: oauth2.AuthStyleInHeader}}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", err
	}
	var code string
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), providerRedirect) {
			code = req.URL.Query().Get("code")
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := browser.Get(conf.AuthCodeURL("state-1", oauth2.SetAuthURLParam("nonce", "nonce-1")))
	if err != nil {
		return "", fmt.Errorf("authorize: %w", err)
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		return "", fmt.Errorf("authorize: landed on %s, not the login form", resp.Request.URL)
	}
	resp, err = browser.PostForm(p.srv.URL+"/login/username",
		url.Values{"id": {id}, "username": {user}, "password": {password}})
	if err != nil {
		return "", fmt.Errorf("login: %w", err)
	}
	resp.Body.Close()
	if code == "" {
		return "", fmt.Errorf("login of %s: no code (status %d at %s)", user, resp.StatusCode, resp.Request.URL)
	}
	tok, err := conf.Exchange(ctx, code)
	if err != nil {
		return "", fmt.Errorf("exchange the code: %w", err)
	}
	idToken, _ := tok.Extra("id_token").(string)
	if idToken == "" {
		return "", fmt.Errorf("the token response holds no id_token")
	}
	return idToken, nil
}

// Users who log in at a real OpenID provider see exactly their tenants through the proxy: one group one tenant,
// two groups two tenants, the admin group all three. A token the same provider issued to another application, a
// wrong password and no login at all give no data.
func TestRealProviderLogin(t *testing.T) {
	s := theStack(t)
	p := startProvider(t)
	cfg := s.proxyConfig(p.srv.URL)
	front := httptest.NewServer(New(cfg, Options{}).Handler())
	defer front.Close()
	ctx := context.Background()
	query := "/prometheus/api/v1/query?" + url.Values{"query": {"kof_test_value"}}.Encode()
	for _, tc := range []struct {
		user string
		want []string
	}{
		{"acme", []string{"acme"}},
		{"two", []string{"acme", "globex"}},
		{"admin", testTenants},
	} {
		tok, err := p.login(ctx, testAudience, tc.user, providerPassword)
		if err != nil {
			t.Fatalf("%s: %v", tc.user, err)
		}
		code, body := get(t, front.URL, query, tok)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.user, code, body)
		}
		if got := tenantsIn(query, []byte(body)); !slices.Equal(got, tc.want) {
			t.Errorf("%s sees tenants %v, want %v:\n%s", tc.user, got, tc.want, body)
		}
	}

	other, err := p.login(ctx, "other-app", "admin", providerPassword)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, front.URL, query, other); code != http.StatusUnauthorized || leaks(query, body) {
		t.Errorf("a token for another application: %d %s, want 401 and no data", code, body)
	}
	if _, err := p.login(ctx, testAudience, "acme", "wrong-password"); err == nil {
		t.Error("a wrong password gave an ID token")
	}
	if code, body := get(t, front.URL, query, ""); code != http.StatusUnauthorized || leaks(query, body) {
		t.Errorf("no token: %d %s, want 401 and no data", code, body)
	}
}

// leaks reports whether a refused answer shows data: a tenant or the queried metric.
func leaks(path, body string) bool {
	return len(tenantsIn(path, []byte(body))) > 0 || strings.Contains(body, "kof_test_value")
}
