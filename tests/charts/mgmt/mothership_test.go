package mgmt

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

const (
	operatorName = "kof-mothership-operator"
	promxyName   = "kof-mothership-promxy"
	promxySecret = "kof-mothership-promxy-config"
	promxyRules  = "kof-mothership-promxy-rules"
	secretLabel  = "k0rdent.mirantis.com/secret-name"
	kcmNamespace = "kcm-system"
)

// operatorEnvNames are the variables kof-operator reads at start (docs/contract.md, "Operator environment"); the chart
// must always set them, whatever is enabled.
var operatorEnvNames = []string{
	"RELEASE_NAMESPACE", "RELEASE_NAME", "KOF_VERSION", "KOF_AUTO_UPGRADE", "KOF_REGIONLESS_ENABLED",
	"KOF_REGIONLESS_CLUSTER_NAME", "KOF_REGIONLESS_DOMAIN", "KOF_KCM_NAMESPACE", "KOF_PROPAGATION_TEMPLATE",
	"KOF_REGIONAL_CLUSTER_MCS_NAME", "KOF_ISTIO_REGIONAL_CLUSTER_MCS_NAME", "KOF_CHILD_CLUSTER_MCS_NAME",
	"KOF_ISTIO_CHILD_CLUSTER_MCS_NAME", "KOF_VL_CLUSTER_NAME", "KOF_VL_AUDIT_CLUSTER_NAME", "KOF_VT_CLUSTER_NAME",
	"KOF_VM_INSERT_URL", "KOF_VM_SELECT_URL", "KOF_VL_INSERT_URL", "KOF_VL_SELECT_URL", "KOF_VL_AUDIT_INSERT_URL",
	"KOF_VL_AUDIT_SELECT_URL", "KOF_VT_INSERT_URL", "KOF_VT_SELECT_URL", "KOF_PROMXY_POD_SELECTOR",
	"KOF_PROMXY_SECRET_NAME", "KOF_PROMXY_RULES_CONFIGMAP", "KOF_PROMXY_ALERTMANAGER_URL",
	"KOF_PROMXY_REMOTE_WRITE_URL", "KOF_WATCH_NAMESPACES",
}

// containers returns the containers of a Deployment's pod template.
func containers(t *testing.T, obj *unstructured.Unstructured) []map[string]any {
	t.Helper()
	list, ok := field(t, obj, "spec", "template", "spec", "containers").([]any)
	if !ok {
		t.Fatalf("%s %s: containers is not a list", obj.GetKind(), obj.GetName())
	}
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		out = append(out, c.(map[string]any))
	}
	return out
}

// operatorEnv returns the kof-operator container's environment as a map, failing on duplicates.
func operatorEnv(t *testing.T, res *render.Result) map[string]string {
	t.Helper()
	dep := mustGet(t, res, "Deployment", namespace, operatorName)
	env := map[string]string{}
	for _, e := range containers(t, dep)[0]["env"].([]any) {
		kv := e.(map[string]any)
		name := kv["name"].(string)
		if _, dup := env[name]; dup {
			t.Errorf("kof-operator env %s set twice", name)
		}
		value, _ := kv["value"].(string)
		env[name] = value
	}
	return env
}

// promxyConfig decodes config.yaml of the promxy config Secret.
func promxyConfig(t *testing.T, res *render.Result) map[string]any {
	t.Helper()
	secret := mustGet(t, res, "Secret", namespace, promxySecret)
	raw, err := base64.StdEncoding.DecodeString(str(t, secret, "data", "config.yaml"))
	if err != nil {
		t.Fatalf("promxy config is not base64: %v", err)
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("promxy config is not YAML: %v", err)
	}
	return cfg
}

// checkWorkloads asserts every container of every Deployment: restricted security context, resources, and, when
// registry is set, an image that starts with registry and carries no second registry.
func checkWorkloads(t *testing.T, res *render.Result, registry string) {
	t.Helper()
	wantSC := map[string]any{
		"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false,
		"seccompProfile": map[string]any{"type": "RuntimeDefault"}, "capabilities": map[string]any{"drop": []any{"ALL"}},
	}
	for _, dep := range res.OfKind("Deployment") {
		for _, c := range containers(t, dep) {
			if diff := cmp.Diff(wantSC, c["securityContext"]); diff != "" {
				t.Errorf("%s/%s securityContext (-want +got):\n%s", dep.GetName(), c["name"], diff)
			}
			if _, ok := c["resources"].(map[string]any)["requests"]; !ok {
				t.Errorf("%s/%s has no resource requests", dep.GetName(), c["name"])
			}
			image := c["image"].(string)
			if registry != "" && (!strings.HasPrefix(image, registry+"/") || strings.Count(image, registry) != 1) {
				t.Errorf("%s/%s image %q, want exactly one registry prefix %q", dep.GetName(), c["name"], image, registry)
			}
		}
		if got := field(t, dep, "spec", "template", "spec", "securityContext", "runAsNonRoot"); got != true {
			t.Errorf("%s pod securityContext runAsNonRoot = %v", dep.GetName(), got)
		}
	}
}

// wantServiceTemplates are the ServiceTemplates of the default catalog at chart version 2.0.0, with their sources.
var wantServiceTemplates = map[string]string{
	"kof-storage-2-0-0":                "kof-repo",
	"kof-collectors-2-0-0":             "kof-repo",
	"kof-operators-2-0-0":              "kof-repo",
	"kof-propagation-2-0-0":            "kof-repo",
	"cert-manager-v1-19-1":             "kof-templates-cert-manager",
	"envoy-gateway-v1-5-1":             "kof-templates-envoy-gateway",
	"external-dns-1-15-2":              "kof-templates-external-dns",
	"grafana-operator-v5-18-0":         "kof-templates-grafana-operator",
	"ingress-nginx-4-13-3":             "kof-templates-ingress-nginx",
	"victoria-metrics-operator-0-63-1": "kof-templates-victoria-metrics-operator",
	"opentelemetry-operator-0-99-0":    "kof-templates-opentelemetry-operator",
	"prometheus-operator-crds-24-0-1":  "kof-templates-prometheus-operator-crds",
	"kube-state-metrics-5-30-0":        "kof-templates-kube-state-metrics",
	"prometheus-node-exporter-4-45-3":  "kof-templates-prometheus-node-exporter",
	"opencost-2-5-29":                  "kof-templates-opencost",
}

func checkServiceTemplates(t *testing.T, res *render.Result) {
	t.Helper()
	got := map[string]string{}
	for _, st := range res.OfKind("ServiceTemplate") {
		got[st.GetName()] = str(t, st, "spec", "helm", "chartSpec", "sourceRef", "name")
		if st.GetNamespace() != kcmNamespace || st.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("ServiceTemplate %s: namespace %q, annotations %v; want kcm-system and resource-policy keep", st.GetName(), st.GetNamespace(), st.GetAnnotations())
		}
		repo := got[st.GetName()]
		if repo != "kof-repo" {
			hr := mustGet(t, res, "HelmRepository", kcmNamespace, repo)
			if hr.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("HelmRepository %s behind a kept ServiceTemplate is not kept itself", repo)
			}
		}
		chain := mustGet(t, res, "ServiceTemplateChain", kcmNamespace, st.GetName())
		supported := field(t, chain, "spec", "supportedTemplates").([]any)
		if first := supported[0].(map[string]any)["name"]; first != st.GetName() {
			t.Errorf("ServiceTemplateChain %s starts with %v, want the template itself", st.GetName(), first)
		}
	}
	if diff := cmp.Diff(wantServiceTemplates, got); diff != "" {
		t.Errorf("ServiceTemplates → HelmRepository (-want +got):\n%s", diff)
	}
	certManager := mustGet(t, res, "HelmRepository", kcmNamespace, "kof-templates-cert-manager")
	if str(t, certManager, "spec", "type") != "oci" || str(t, certManager, "spec", "url") != "oci://quay.io/jetstack/charts" {
		t.Errorf("cert-manager template repository %v", certManager.Object["spec"])
	}
}

func checkMothershipDefaults(t *testing.T, res *render.Result) {
	dep := mustGet(t, res, "Deployment", namespace, operatorName)
	if got := field(t, dep, "spec", "replicas"); got != int64(2) {
		t.Errorf("kof-operator replicas %v, want 2", got)
	}
	pdb := mustGet(t, res, "PodDisruptionBudget", namespace, operatorName)
	if diff := cmp.Diff(field(t, dep, "spec", "selector", "matchLabels"), field(t, pdb, "spec", "selector", "matchLabels")); diff != "" {
		t.Errorf("PodDisruptionBudget selects other pods than the kof-operator Deployment (-deployment +pdb):\n%s", diff)
	}
	manager := containers(t, dep)[0]
	if diff := cmp.Diff([]any{"--leader-elect=true", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081",
		"--workers=4", "--kube-api-qps=200", "--kube-api-burst=400", "--gc-percent=35"}, manager["args"]); diff != "" {
		t.Errorf("kof-operator args (-want +got):\n%s", diff)
	}
	if got := manager["image"]; got != "ghcr.io/k0rdent/kof/kof-operator:2.0.0" {
		t.Errorf("kof-operator image %v", got)
	}
	checkWorkloads(t, res, "")
	if got := containers(t, mustGet(t, res, "Deployment", namespace, promxyName))[0]["image"]; got != "quay.io/jacksontj/promxy:v0.0.93" {
		t.Errorf("promxy image %v", got)
	}
	env := operatorEnv(t, res)
	for _, name := range operatorEnvNames {
		if _, ok := env[name]; !ok {
			t.Errorf("kof-operator env lacks %s", name)
		}
	}
	// The operator must be told the names of the select clusters this chart renders.
	for envName, kind := range map[string]string{"KOF_VL_CLUSTER_NAME": "VLCluster", "KOF_VL_AUDIT_CLUSTER_NAME": "VLCluster", "KOF_VT_CLUSTER_NAME": "VTCluster"} {
		if res.Get(kind, namespace, env[envName]) == nil {
			t.Errorf("%s=%q names no rendered %s (have %v)", envName, env[envName], kind, names(res, kind))
		}
	}
	if res.Get("ServiceTemplate", kcmNamespace, env["KOF_PROPAGATION_TEMPLATE"]) == nil {
		t.Errorf("KOF_PROPAGATION_TEMPLATE=%q names no rendered ServiceTemplate", env["KOF_PROPAGATION_TEMPLATE"])
	}
	for k, want := range map[string]string{
		"RELEASE_NAMESPACE": namespace, "RELEASE_NAME": "kof-mothership", "KOF_VERSION": "2.0.0", "KOF_AUTO_UPGRADE": "true",
		"KOF_REGIONLESS_ENABLED": "false", "KOF_PROMXY_SECRET_NAME": promxySecret, "KOF_PROMXY_RULES_CONFIGMAP": promxyRules,
		"KOF_PROMXY_ALERTMANAGER_URL":   "http://vmalertmanager-cluster.kof.svc:9093",
		"KOF_PROMXY_REMOTE_WRITE_URL":   "http://vminsert-cluster.kof.svc:8480/insert/0/prometheus/api/v1/write",
		"KOF_REGIONAL_CLUSTER_MCS_NAME": "kof-regional-cluster", "KOF_ISTIO_CHILD_CLUSTER_MCS_NAME": "kof-istio-child-cluster",
	} {
		if env[k] != want {
			t.Errorf("kof-operator %s = %q, want %q", k, env[k], want)
		}
	}
	// The promxy pod selector the operator reloads by must select the promxy pods.
	promxy := mustGet(t, res, "Deployment", namespace, promxyName)
	podLabels := field(t, promxy, "spec", "template", "metadata", "labels").(map[string]any)
	for _, pair := range strings.Split(env["KOF_PROMXY_POD_SELECTOR"], ",") {
		k, v, _ := strings.Cut(pair, "=")
		if podLabels[k] != v {
			t.Errorf("KOF_PROMXY_POD_SELECTOR term %q does not match promxy pod labels %v", pair, podLabels)
		}
	}
	// The PromxyServerGroup label value is the promxy config Secret name.
	psgs := res.OfKind("PromxyServerGroup")
	if len(psgs) != 1 {
		t.Fatalf("PromxyServerGroups %v, want one for the mothership VMCluster", names(res, "PromxyServerGroup"))
	}
	if got := psgs[0].GetLabels()[secretLabel]; got != promxySecret || res.Get("Secret", namespace, got) == nil {
		t.Errorf("PromxyServerGroup label %s=%q, want the rendered promxy Secret %q", secretLabel, got, promxySecret)
	}
	if diff := cmp.Diff([]any{"vmselect-cluster.kof.svc:8481"}, field(t, psgs[0], "spec", "targets")); diff != "" {
		t.Errorf("PromxyServerGroup targets (-want +got):\n%s", diff)
	}
	cfg := promxyConfig(t, res)
	want := map[string]any{
		"global":     map[string]any{"evaluation_interval": "5s", "external_labels": map[string]any{"source": "promxy"}},
		"rule_files": []any{"/etc/promxy/rules/*.yaml"},
		"alerting": map[string]any{"alertmanagers": []any{map[string]any{
			"scheme": "http", "static_configs": []any{map[string]any{"targets": []any{"vmalertmanager-cluster.kof.svc:9093"}}},
		}}},
		"remote_write": []any{map[string]any{"url": env["KOF_PROMXY_REMOTE_WRITE_URL"]}},
		"promxy":       map[string]any{"server_groups": []any{}},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("promxy bootstrap config (-want +got):\n%s", diff)
	}
	volumes := field(t, promxy, "spec", "template", "spec", "volumes").([]any)
	if diff := cmp.Diff([]any{
		map[string]any{"name": "config", "secret": map[string]any{"secretName": promxySecret}},
		map[string]any{"name": "rules", "configMap": map[string]any{"name": promxyRules}},
	}, volumes); diff != "" {
		t.Errorf("promxy volumes (-want +got):\n%s", diff)
	}
	promxyContainers := containers(t, promxy)
	if len(promxyContainers) != 2 || promxyContainers[1]["name"] != "reloader" {
		t.Fatalf("promxy containers %v, want promxy and reloader", promxyContainers)
	}
	// kof-operator finds the reload port by the container port name `http`.
	if diff := cmp.Diff([]any{map[string]any{"name": "http", "containerPort": int64(8082), "protocol": "TCP"}}, promxyContainers[0]["ports"]); diff != "" {
		t.Errorf("promxy container ports (-want +got):\n%s", diff)
	}
	// POST /-/reload (sidecar and kof-operator) works only with promxy's lifecycle API on.
	if diff := cmp.Diff([]any{"--config=/etc/promxy/config/config.yaml", "--bind-addr=:8082", "--web.enable-lifecycle"}, promxyContainers[0]["args"]); diff != "" {
		t.Errorf("promxy args (-want +got):\n%s", diff)
	}
	if args := promxyContainers[1]["args"].([]any); args[len(args)-1] != "--webhook-url=http://127.0.0.1:8082/-/reload" {
		t.Errorf("reloader args %v, want promxy's /-/reload on 8082", args)
	}
	vmc := mustGet(t, res, "VMCluster", namespace, "cluster")
	if got := str(t, vmc, "spec", "retentionPeriod"); got != "14d" {
		t.Errorf("VMCluster retentionPeriod %q, want the default 14d", got)
	}
	vmalert := mustGet(t, res, "VMAlert", namespace, "cluster")
	if got := str(t, vmalert, "spec", "datasource", "url"); got != "http://kof-mothership-promxy.kof.svc:8082" {
		t.Errorf("VMAlert datasource %q, want promxy", got)
	}
	checkServiceTemplates(t, res)
	checkDefaultRules(t, res)
	checkServiceMonitors(t, res, []string{"kof-operator", "promxy"})
	crds := map[string]bool{}
	for _, crd := range res.Chart.CRDObjects() {
		crds[crd.Name] = true
	}
	for _, name := range []string{"crds/kof.k0rdent.mirantis.com_promxyservergroups.yaml", "crds/kof.k0rdent.mirantis.com_vmstorageconnections.yaml"} {
		if !crds[name] {
			t.Errorf("chart crds/ lacks %s (have %v)", name, crds)
		}
	}
}

// checkDefaultRules asserts KOF's default rule groups and that every alert has a severity and every rule an expr.
func checkDefaultRules(t *testing.T, res *render.Result) {
	t.Helper()
	rule := mustGet(t, res, "PrometheusRule", namespace, "kof-mothership-default-rules")
	var groups []string
	for _, g := range field(t, rule, "spec", "groups").([]any) {
		group := g.(map[string]any)
		groups = append(groups, group["name"].(string))
		for _, r := range group["rules"].([]any) {
			rr := r.(map[string]any)
			if rr["expr"] == nil || rr["expr"] == "" {
				t.Errorf("rule %v in group %s has no expr", rr, group["name"])
			}
			if _, alert := rr["alert"]; alert && dig(rr, "labels", "severity") == nil {
				t.Errorf("alert %v has no severity", rr["alert"])
			}
		}
	}
	sort.Strings(groups)
	if diff := cmp.Diff([]string{"kof-clusters", "kof-collectors", "kof-exporters", "kof-operator", "kof-promxy", "kof-records", "kof-storage"}, groups); diff != "" {
		t.Errorf("default rule groups (-want +got):\n%s", diff)
	}
}

func checkMothershipRegionless(t *testing.T, res *render.Result) {
	for _, kind := range []string{"VMCluster", "PromxyServerGroup"} {
		if got := names(res, kind); len(got) != 0 {
			t.Errorf("regionless renders %s %v, want none", kind, got)
		}
	}
	env := operatorEnv(t, res)
	for k, want := range map[string]string{
		"KOF_REGIONLESS_ENABLED": "true", "KOF_REGIONLESS_CLUSTER_NAME": "mgmt", "KOF_REGIONLESS_DOMAIN": "mothership.kof.example.com",
		"KOF_AUTO_UPGRADE": "false", "KOF_PROMXY_REMOTE_WRITE_URL": "",
	} {
		if env[k] != want {
			t.Errorf("kof-operator %s = %q, want %q", k, env[k], want)
		}
	}
	if _, ok := promxyConfig(t, res)["remote_write"]; ok {
		t.Error("regionless promxy config writes to the absent mothership VMCluster")
	}
	vmalert := mustGet(t, res, "VMAlert", namespace, "cluster")
	if _, ok := dig(vmalert.Object, "spec", "remoteWrite").(map[string]any); ok {
		t.Error("regionless VMAlert writes to the absent mothership VMCluster")
	}
}

func checkMothershipGrafanaCertificates(t *testing.T, res *render.Result) {
	checkWorkloads(t, res, "registry.example.com")
	grafana := mustGet(t, res, "Grafana", namespace, "kof-mothership-grafana")
	gc := field(t, grafana, "spec", "deployment", "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
	if gc["image"] != "registry.example.com/grafana/grafana:12.1.0" {
		t.Errorf("Grafana image %v", gc["image"])
	}
	selector := grafana.GetLabels()["k0rdent.mirantis.com/kof-grafana"]
	sources := map[string]string{}
	for _, ds := range res.OfKind("GrafanaDatasource") {
		if got := str(t, ds, "spec", "instanceSelector", "matchLabels", "k0rdent.mirantis.com/kof-grafana"); got != selector {
			t.Errorf("GrafanaDatasource %s selects %q, want the Grafana's %q", ds.GetName(), got, selector)
		}
		if got := field(t, ds, "spec", "datasource", "jsonData", "tlsSkipVerify"); got != true {
			t.Errorf("GrafanaDatasource %s tlsSkipVerify %v, want true (tls.insecureSkipVerify)", ds.GetName(), got)
		}
		sources[str(t, ds, "spec", "datasource", "type")+" "+str(t, ds, "spec", "datasource", "name")] = str(t, ds, "spec", "datasource", "url")
	}
	want := map[string]string{
		"prometheus KOF metrics":                         "http://kof-mothership-promxy.kof.svc:8082",
		"victoriametrics-logs-datasource KOF logs":       "http://vlselect-kof-logs.kof.svc:9471",
		"victoriametrics-logs-datasource KOF audit logs": "http://vlselect-kof-logs-audit.kof.svc:9471",
		"jaeger KOF traces":                              "http://vtselect-kof-traces.kof.svc:10471/select/jaeger",
	}
	if diff := cmp.Diff(want, sources); diff != "" {
		t.Errorf("Grafana datasources (-want +got):\n%s", diff)
	}
	issuer := mustGet(t, res, "ClusterIssuer", "", "kof-mothership-issuer")
	if got := str(t, issuer, "spec", "acme", "email"); got != "ops@example.com" {
		t.Errorf("ClusterIssuer e-mail %q", got)
	}
	solver := field(t, issuer, "spec", "acme", "solvers").([]any)[0].(map[string]any)
	if got := dig(solver, "http01", "gatewayHTTPRoute", "parentRefs"); !cmp.Equal(got, []any{map[string]any{"kind": "Gateway", "name": "kof-gateway", "namespace": namespace}}) {
		t.Errorf("ACME solver parentRefs %v, want the kof-gateway", got)
	}
	gw := mustGet(t, res, "Gateway", namespace, "kof-gateway")
	if gw.GetAnnotations()["cert-manager.io/cluster-issuer"] != "kof-mothership-issuer" {
		t.Errorf("Gateway annotations %v, want the ClusterIssuer", gw.GetAnnotations())
	}
	for _, l := range field(t, gw, "spec", "listeners").([]any) {
		if h := l.(map[string]any)["hostname"]; h != "kof.example.com" {
			t.Errorf("Gateway listener hostname %v", h)
		}
	}
	vmc := mustGet(t, res, "VMCluster", namespace, "cluster")
	if got := str(t, vmc, "spec", "retentionPeriod"); got != "30d" {
		t.Errorf("VMCluster retentionPeriod %q, want 30d", got)
	}
	if got := field(t, vmc, "spec", "replicationFactor"); got != int64(1) {
		t.Errorf("VMCluster replicationFactor %v: user values must merge over, not replace, the default spec", got)
	}
}

func checkMothershipMinimal(t *testing.T, res *render.Result) {
	for _, kind := range []string{"VMAlert", "VMAlertmanager", "VLCluster", "VTCluster", "PrometheusRule", "ServiceTemplate", "ServiceTemplateChain", "PromxyServerGroup", "Secret", "Role", "PodDisruptionBudget"} {
		if got := names(res, kind); len(got) != 0 {
			t.Errorf("minimal values render %s %v, want none", kind, got)
		}
	}
	if got := names(res, "Deployment"); !cmp.Equal(got, []string{operatorName}) {
		t.Errorf("Deployments %v, want only kof-operator", got)
	}
	dep := mustGet(t, res, "Deployment", namespace, operatorName)
	if got := field(t, dep, "spec", "replicas"); got != int64(1) {
		t.Errorf("replicas %v, want 1", got)
	}
	if got := containers(t, dep)[0]["args"].([]any)[0]; got != "--leader-elect=false" {
		t.Errorf("first operator arg %v, want --leader-elect=false", got)
	}
	issuer := mustGet(t, res, "ClusterIssuer", "", "kof-mothership-issuer")
	if diff := cmp.Diff(map[string]any{"selfSigned": map[string]any{}}, issuer.Object["spec"]); diff != "" {
		t.Errorf("self-signed ClusterIssuer spec (-want +got):\n%s", diff)
	}
	env := operatorEnv(t, res)
	for _, name := range []string{"KOF_VL_CLUSTER_NAME", "KOF_VT_CLUSTER_NAME", "KOF_PROMXY_SECRET_NAME", "KOF_PROMXY_POD_SELECTOR"} {
		if env[name] == "" {
			t.Errorf("kof-operator requires %s even when the chart does not render its object", name)
		}
	}
}

// checkServiceMonitors asserts that each ServiceMonitor selects a rendered Service, scrapes a port that Service
// has, and sets a job label that KOF's default alert rules watch (`job="<job>"`); jobs lists the expected jobs.
func checkServiceMonitors(t *testing.T, res *render.Result, jobs []string) {
	t.Helper()
	rule := mustGet(t, res, "PrometheusRule", namespace, "kof-mothership-default-rules")
	ruleYAML, err := yaml.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sm := range res.OfKind("ServiceMonitor") {
		selector := field(t, sm, "spec", "selector", "matchLabels").(map[string]any)
		endpoint := field(t, sm, "spec", "endpoints").([]any)[0].(map[string]any)
		job := dig(endpoint, "relabelings").([]any)[0].(map[string]any)["replacement"].(string)
		got = append(got, job)
		if !strings.Contains(string(ruleYAML), `job="`+job+`"`) {
			t.Errorf("ServiceMonitor %s sets job %q, which no default rule watches", sm.GetName(), job)
		}
		matched := false
		for _, svc := range res.OfKind("Service") {
			labels := svc.GetLabels()
			all := true
			for k, v := range selector {
				all = all && labels[k] == v
			}
			if !all {
				continue
			}
			for _, p := range field(t, svc, "spec", "ports").([]any) {
				matched = matched || p.(map[string]any)["name"] == endpoint["port"]
			}
		}
		if !matched {
			t.Errorf("ServiceMonitor %s selects no Service with port %v", sm.GetName(), endpoint["port"])
		}
	}
	if diff := cmp.Diff(jobs, got); diff != "" {
		t.Errorf("ServiceMonitor jobs (-want +got):\n%s", diff)
	}
}

// TestInstallDocNamesTheOperatorDeployment checks that the "Check the install" command of docs/install.md names the
// kof-operator Deployment kof-mothership renders as the umbrella's release kof-mothership in namespace kof
// (regression: the page said kof-mothership-kof-operator, which does not exist).
func TestInstallDocNamesTheOperatorDeployment(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-mothership"})
	var deployments []string
	for _, o := range res.Objects() {
		if o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == "operator" {
			deployments = append(deployments, o.GetName())
		}
	}
	if len(deployments) != 1 {
		t.Fatalf("kof-mothership renders operator Deployments %v, want one", deployments)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "kubectl -n " + namespace + " get deploy " + deployments[0] + "\n"; !strings.Contains(string(doc), want) {
		t.Errorf("docs/install.md lacks %q", want)
	}
}

// kof-mothership renders exactly one Deployment that kofv1.IsOperatorDeployment picks (the labels kof doctor and the
// harness find the kof-operator by), and its kofv1.OperatorContainer runs kof-operator.
func TestOperatorDeploymentLabelsPickTheOperator(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-mothership"})
	var picked []string
	for _, dep := range res.OfKind("Deployment") {
		if !kofv1.IsOperatorDeployment(dep.GetLabels()) {
			continue
		}
		picked = append(picked, dep.GetName())
		found := false
		for _, c := range containers(t, dep) {
			found = found || c["name"] == kofv1.OperatorContainer
		}
		if !found {
			t.Errorf("Deployment %s has no container %q", dep.GetName(), kofv1.OperatorContainer)
		}
	}
	if len(picked) != 1 || picked[0] != "kof-mothership-operator" {
		t.Errorf("Deployments with the operator labels: %v, want [kof-mothership-operator]", picked)
	}
}

// checkMothershipIstio checks ci/06-istio: the Istio namespace bootstrap (docs/storage-modes.md): the ConfigMap
// kof-namespace-template with the Namespace kof labelled istio-injection: enabled, the ServiceTemplate of plain
// resources that delivers it (remotely) and the MultiClusterService that selects the Istio members with it; none
// of them outside Istio mode (checkMothershipDefaults).
func checkMothershipIstio(t *testing.T, res *render.Result) {
	cm := mustGet(t, res, "ConfigMap", "kcm-system", "kof-namespace-template")
	docs, err := manifest.ParseDocuments("kof-namespace-template", []byte(str(t, cm, "data", "namespace.yaml")))
	if err != nil || len(docs) != 1 {
		t.Fatalf("kof-namespace-template: %v (%d documents)", err, len(docs))
	}
	if ns := docs[0]; ns.GetKind() != "Namespace" || ns.GetName() != "kof" || ns.GetLabels()["istio-injection"] != "enabled" {
		t.Errorf("kof-namespace-template holds %s %s labels %v, want Namespace kof with istio-injection: enabled",
			ns.GetKind(), ns.GetName(), ns.GetLabels())
	}
	st := mustGet(t, res, "ServiceTemplate", "kcm-system", "kof-namespace-2-0-0")
	if got := field(t, st, "spec", "resources"); !cmp.Equal(got, map[string]any{"deploymentType": "Remote",
		"localSourceRef": map[string]any{"kind": "ConfigMap", "name": "kof-namespace-template"}}) {
		t.Errorf("ServiceTemplate kof-namespace-2-0-0 resources %v", got)
	}
	mcs := mustGet(t, res, "MultiClusterService", "", "kof-istio-namespace")
	if got := field(t, mcs, "spec", "clusterSelector"); !cmp.Equal(got, map[string]any{"matchLabels": map[string]any{
		"k0rdent.mirantis.com/istio-role": "member"}}) {
		t.Errorf("kof-istio-namespace selector %v, want the Istio members", got)
	}
	if got := field(t, mcs, "spec", "serviceSpec", "services"); !cmp.Equal(got, []any{map[string]any{
		"name": "kof-namespace", "namespace": "kof", "template": "kof-namespace-2-0-0"}}) {
		t.Errorf("kof-istio-namespace services %v", got)
	}
}
