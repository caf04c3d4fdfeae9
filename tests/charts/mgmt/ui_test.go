package mgmt

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/render"
)

const uiName = "kof-mothership-ui"

// readVerbs are the only verbs the kof-ui reader ClusterRole may grant.
var readVerbs = []string{"get", "list", "watch"}

// checkMothershipUI asserts the in-cluster kof-ui of ci/04-ui-values.yaml: its Deployment passes the permission,
// audiences and TLS files to kof-ui, its ServiceAccount may only read (never Secrets unless asked) and may review
// tokens, and the viewer ClusterRole grants exactly the permission kof-ui checks.
func checkMothershipUI(t *testing.T, res *render.Result) {
	dep := mustGet(t, res, "Deployment", namespace, uiName)
	c := containers(t, dep)[0]
	want := []any{"--addr=:8443", "--namespace=kof", "--release=kof", "--authz-group=kof.k0rdent.mirantis.com",
		"--authz-resource=fleet", "--authz-verb=get", "--token-audiences=kof-ui",
		"--tls-cert-file=/etc/kof-ui/tls/tls.crt", "--tls-key-file=/etc/kof-ui/tls/tls.key"}
	if diff := cmp.Diff(want, c["args"]); diff != "" {
		t.Errorf("kof-ui args (-want +got):\n%s", diff)
	}
	if got := c["image"]; got != "ghcr.io/k0rdent/kof/kof-ui:2.0.0" {
		t.Errorf("kof-ui image %v", got)
	}
	vols := field(t, dep, "spec", "template", "spec", "volumes").([]any)
	if diff := cmp.Diff([]any{map[string]any{"name": "tls", "secret": map[string]any{"secretName": "kof-ui-tls"}}}, vols); diff != "" {
		t.Errorf("kof-ui volumes (-want +got):\n%s", diff)
	}
	if got := dig(c, "readinessProbe", "httpGet", "scheme"); got != "HTTPS" {
		t.Errorf("readiness probe scheme %v, want HTTPS with a TLS Secret", got)
	}
	sa := field(t, dep, "spec", "template", "spec", "serviceAccountName")
	if res.Get("ServiceAccount", namespace, sa.(string)) == nil {
		t.Errorf("kof-ui runs as ServiceAccount %v, which the chart does not render", sa)
	}
	reader := mustGet(t, res, "ClusterRole", "", uiName)
	for _, r := range field(t, reader, "rules").([]any) {
		rule := r.(map[string]any)
		for _, v := range rule["verbs"].([]any) {
			if !slices.Contains(readVerbs, v.(string)) {
				t.Errorf("kof-ui ClusterRole grants %v on %v: it must only read", v, rule["resources"])
			}
		}
		if slices.Contains(rule["resources"].([]any), any("secrets")) {
			t.Errorf("kof-ui ClusterRole reads Secrets without ui.readSecretNames")
		}
	}
	viewer := mustGet(t, res, "ClusterRole", "", uiName+"-viewer")
	if diff := cmp.Diff([]any{map[string]any{"apiGroups": []any{"kof.k0rdent.mirantis.com"},
		"resources": []any{"fleet"}, "verbs": []any{"get"}}}, field(t, viewer, "rules")); diff != "" {
		t.Errorf("viewer ClusterRole rules (-want +got):\n%s", diff)
	}
	delegator := mustGet(t, res, "ClusterRoleBinding", "", uiName+"-auth-delegator")
	if got := str(t, delegator, "roleRef", "name"); got != "system:auth-delegator" {
		t.Errorf("auth delegator binding names %q", got)
	}
	for _, b := range []string{uiName, uiName + "-auth-delegator"} {
		subj := field(t, mustGet(t, res, "ClusterRoleBinding", "", b), "subjects").([]any)[0].(map[string]any)
		if subj["name"] != sa || subj["namespace"] != namespace {
			t.Errorf("ClusterRoleBinding %s binds %v, want the kof-ui ServiceAccount %v", b, subj, sa)
		}
	}
	svc := mustGet(t, res, "Service", namespace, uiName)
	if diff := cmp.Diff(field(t, dep, "spec", "selector", "matchLabels"), field(t, svc, "spec", "selector")); diff != "" {
		t.Errorf("kof-ui Service selects other pods than its Deployment (-deployment +service):\n%s", diff)
	}
	checkWorkloads(t, res, "")
}

// The in-cluster UI is off by default: no kof-ui object is rendered.
func TestMothershipUIOffByDefault(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-mothership"})
	for _, o := range res.Objects() {
		if strings.HasPrefix(o.GetName(), uiName) {
			t.Errorf("defaults render %s %s", o.GetKind(), o.GetName())
		}
	}
}
