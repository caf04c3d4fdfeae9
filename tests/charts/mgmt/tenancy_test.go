package mgmt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/tenancy/proxy"
)

const tenantProxyName = "kof-mothership-tenant-proxy"

// checkMothershipTenantProxy asserts ci/05-tenant-proxy-values.yaml: the proxy's ConfigMap is a configuration the
// proxy itself loads (issuer and audience from grafana.oidc, the group map, the upstreams), its Deployment mounts it
// and rolls on change, Grafana logs in with generic OAuth taking the client secret from the Secret, and every data
// source goes through the proxy forwarding the OAuth identity, with no traces data source.
func checkMothershipTenantProxy(t *testing.T, res *render.Result) {
	cm := mustGet(t, res, "ConfigMap", namespace, tenantProxyName)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(str(t, cm, "data", "config.yaml")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := proxy.LoadConfig(path)
	if err != nil {
		t.Fatalf("the rendered proxy configuration does not load: %v", err)
	}
	if cfg.Issuer != "https://dex.example.com" || cfg.Audience != "kof-grafana" || cfg.TenantClaim != "groups" {
		t.Errorf("proxy issuer %q audience %q claim %q", cfg.Issuer, cfg.Audience, cfg.TenantClaim)
	}
	if diff := cmp.Diff(map[string][]string{"team-acme": {"acme", "acme-prod"}, "team-globex": {"globex"}}, cfg.Groups); diff != "" {
		t.Errorf("proxy groups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kof-platform-admins"}, cfg.AdminGroups); diff != "" {
		t.Errorf("proxy admin groups (-want +got):\n%s", diff)
	}
	want := proxy.Upstreams{Metrics: "http://kof-mothership-promxy.kof.svc:8082", Logs: "http://vlselect-kof-logs.kof.svc:9471",
		AuditLogs: "http://vlselect-kof-logs-audit.kof.svc:9471"}
	if cfg.Upstreams != want {
		t.Errorf("proxy upstreams %+v, want %+v", cfg.Upstreams, want)
	}
	dep := mustGet(t, res, "Deployment", namespace, tenantProxyName)
	c := containers(t, dep)[0]
	if diff := cmp.Diff([]any{"--addr=:8080", "--config=/etc/kof-tenant-proxy/config.yaml"}, c["args"]); diff != "" {
		t.Errorf("proxy args (-want +got):\n%s", diff)
	}
	if got := c["image"]; got != "ghcr.io/k0rdent/kof/kof-tenant-proxy:2.0.0" {
		t.Errorf("proxy image %v", got)
	}
	vols := field(t, dep, "spec", "template", "spec", "volumes").([]any)
	if got := dig(vols[0].(map[string]any), "configMap", "name"); got != tenantProxyName {
		t.Errorf("proxy mounts ConfigMap %v", got)
	}
	if sum := dep.Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"]; sum == nil {
		t.Error("proxy pods carry no config checksum")
	}
	svc := mustGet(t, res, "Service", namespace, tenantProxyName)
	if diff := cmp.Diff(field(t, dep, "spec", "selector", "matchLabels"), field(t, svc, "spec", "selector")); diff != "" {
		t.Errorf("proxy Service selects other pods than its Deployment (-deployment +service):\n%s", diff)
	}

	grafana := mustGet(t, res, "Grafana", namespace, "kof-mothership-grafana")
	oauth, _ := field(t, grafana, "spec", "config", "auth.generic_oauth").(map[string]any)
	for k, v := range map[string]string{"enabled": "true", "client_id": "kof-grafana", "auth_url": "https://dex.example.com/auth",
		"token_url": "https://dex.example.com/token", "api_url": "https://dex.example.com/userinfo", "use_pkce": "true"} {
		if oauth[k] != v {
			t.Errorf("Grafana auth.generic_oauth.%s = %v, want %s", k, oauth[k], v)
		}
	}
	if _, ok := oauth["client_secret"]; ok {
		t.Error("Grafana's OAuth client secret is in its config; it must come from the Secret")
	}
	if got := str(t, grafana, "spec", "config", "server", "root_url"); got != "https://grafana.example.com" {
		t.Errorf("Grafana root_url %q", got)
	}
	gc := field(t, grafana, "spec", "deployment", "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	var secretRef any
	for _, e := range gc["env"].([]any) {
		if e.(map[string]any)["name"] == "GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET" {
			secretRef = dig(e.(map[string]any), "valueFrom", "secretKeyRef")
		}
	}
	if diff := cmp.Diff(map[string]any{"name": "grafana-oidc", "key": "client-secret"}, secretRef); diff != "" {
		t.Errorf("Grafana client secret reference (-want +got):\n%s", diff)
	}
	sources := map[string]string{}
	for _, ds := range res.OfKind("GrafanaDatasource") {
		if got := field(t, ds, "spec", "datasource", "jsonData", "oauthPassThru"); got != true {
			t.Errorf("GrafanaDatasource %s oauthPassThru %v, want true", ds.GetName(), got)
		}
		sources[str(t, ds, "spec", "datasource", "name")] = str(t, ds, "spec", "datasource", "url")
	}
	proxyURL := "http://" + tenantProxyName + ".kof.svc:8080"
	if diff := cmp.Diff(map[string]string{"KOF metrics": proxyURL + proxy.MetricsPrefix, "KOF logs": proxyURL + proxy.LogsPrefix,
		"KOF audit logs": proxyURL + proxy.AuditLogsPrefix}, sources); diff != "" {
		t.Errorf("Grafana data sources (-want +got):\n%s", diff)
	}
	checkWorkloads(t, res, "")
}

// The tenant proxy is off by default, and Grafana keeps its data sources direct.
func TestMothershipTenantProxyOffByDefault(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-mothership"})
	if got := names(res, "Deployment"); strings.Contains(strings.Join(got, ","), "tenant-proxy") {
		t.Errorf("default values render the tenant proxy: %v", got)
	}
}

// Contradicting values fail the render naming both keys.
func TestMothershipTenantProxyValidation(t *testing.T) {
	for _, tt := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"grafana": map[string]any{"enabled": true, "oidc": map[string]any{"enabled": true}}}, "grafana.oidc.issuer"},
		{map[string]any{"grafana": map[string]any{"enabled": true, "oidc": map[string]any{"enabled": true, "issuer": "https://i",
			"authURL": "https://i/a", "tokenURL": "https://i/t", "clientID": "c"}}}, "grafana.oidc.clientSecret.name"},
		{map[string]any{"tenantProxy": map[string]any{"enabled": true}}, "tenantProxy.oidc.issuer"},
		{map[string]any{"tenantProxy": map[string]any{"enabled": true, "oidc": map[string]any{"issuer": "https://i", "audience": "a"}},
			"grafana": map[string]any{"enabled": true}}, "grafana.oidc.enabled"},
	} {
		err := renderError(t, renderSpec{chart: "kof-mothership", values: tt.values})
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %v: error %v, want one naming %s", tt.values, err, tt.want)
		}
	}
	err := renderError(t, renderSpec{chart: "kof-mothership", values: map[string]any{"tenantProxy": map[string]any{
		"enabled": true, "adminGroups": []any{"boss@example.com"}, "oidc": map[string]any{"issuer": "https://i", "audience": "a"}}}})
	if !strings.Contains(err.Error(), "adminGroups") {
		t.Errorf("an e-mail address as admin group: %v", err)
	}
}
