package scenarios

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/chartlib/values"
	"kof.dev/kof/operator/names"
)

// scenario is one scenario's semantic assertions on a successful render.
type scenario struct {
	name  string
	check func(t *testing.T, f *fleet.Fleet)
}

// scenarios are the scenarios that render (09 and 14 fail on purpose and have their own tests).
var scenarios = []scenario{
	{name: "01-regional-child", check: check01},
	{name: "02-regionless", check: checkRegionless},
	{name: "03-regionless-selfsigned", check: check03},
	{name: "04-regionless-istio", check: check04},
	{name: "05-m2m", check: checkM2M},
	{name: "06-m2m-non-k0s", check: check06},
	{name: "07-m2m-storage-overrides", check: check07},
	{name: "08-m2r", check: check08},
	{name: "10-third-party-cloudwatch", check: check10},
	{name: "11-annotation-overrides", check: check11},
	{name: "12-istio-regional-child", check: check12},
	{name: "13-audit-cluster-disabled", check: check13},
}

// TestScenarios renders each scenario's fleet, compares it with its golden tree and runs its assertions
// (testdata/README.md). Every cluster must render without error and every object must validate, except where a
// scenario expects a failure; no MultiClusterService values text may carry a layer-2 hazard (sveltos.Lint).
func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			f := mustRender(t, sc.name)
			checkGoldenTree(t, sc.name, f)
			if sc.name != "11-annotation-overrides" {
				noProblems(t, f)
			}
			for _, l := range f.Lint {
				t.Errorf("layer-2 hazard in a KOF chart's MultiClusterService: %s", l)
			}
			sc.check(t, f)
		})
	}
}

// check01: the Flux objects in dependsOn order; regional-1 receives storage and collectors with endpoints from its
// domain; child-1 is bound by cloud and region, child-2 by its label; both write to regional-1 with their own
// VMUser credentials.
func check01(t *testing.T, f *fleet.Fleet) {
	var got, nested []string
	for _, r := range f.Releases {
		if r.Parent != "" {
			nested = append(nested, r.Name+" < "+r.Parent)
			continue
		}
		got = append(got, r.Name)
	}
	// Regression (the preview shows what the management cluster gets): the management render served no Flux API,
	// so kof-operators rendered nothing and its operators were missing from the preview.
	if want := []string{"prometheus-operator-crds < kof/kof-operators",
		"opentelemetry-operator < kof/kof-operators", "kof-kube-prometheus-stack < kof/kof-dashboards",
		"grafana-operator < kof/kof-operators"}; !slices.Equal(nested, want) {
		t.Errorf("releases rendered by other releases = %v, want %v", nested, want)
	}
	if ops := service(t, f, "mgmt", "kof-operators"); ops.Objects == nil || len(ops.Objects.OfKind("HelmRelease")) != 3 {
		t.Errorf("mgmt/kof-operators renders no operator HelmReleases: %v", ops.Objects)
	}
	want := []string{"kof-operators", "victoria-metrics-operator", "kof-mothership", "kof-regional", "kof-child",
		"kof-dashboards"}
	if !slices.Equal(got, want) {
		t.Errorf("umbrella HelmReleases in install order = %v, want %v", got, want)
	}
	deps := map[string][]string{
		"kof-operators":             nil,
		"victoria-metrics-operator": {"kof/kof-operators"},
		"kof-mothership":            {"kof/kof-operators", "kof/victoria-metrics-operator"},
		"kof-regional":              {"kof/kof-mothership"},
		"kof-child":                 {"kof/kof-mothership"},
		"kof-dashboards":            {"kof/kof-mothership"},
	}
	for _, r := range f.Releases {
		if r.Parent != "" {
			continue
		}
		if !slices.Equal(r.DependsOn, deps[r.Name]) {
			t.Errorf("HelmRelease %s dependsOn = %v, want %v", r.Name, r.DependsOn, deps[r.Name])
		}
		if f.Umbrella.Get("HelmChart", kcmNamespace, r.Name) == nil {
			t.Errorf("no HelmChart for HelmRelease %s", r.Name)
		}
	}
	wantDashboardsOnManagement(t, f)
	wantMetricSources(t, f, nil)
	wantExternalDNS(t, f, "regional-1", "aws", "external-dns-credentials", "regional-1.kof.example.com",
		"gateway-httproute")
	regional := cluster(t, f, "regional-1")
	for _, s := range []string{"kof-operators", "kof-storage", "kof-collectors"} {
		if regional.Service(s) == nil {
			t.Errorf("regional-1 does not receive %s (receives %v)", s, serviceNames(regional))
		}
	}
	storage := service(t, f, "regional-1", "kof-storage")
	wantValue(t, "regional-1 kof-storage", storage.Values, "regional-1.kof.example.com", "domain")
	// The record rules reach the regional storage: kof-mothership's PrometheusRules → the operator's vmrules
	// ConfigMap (operator/rules) → the MCS valuesFrom → a VMRule.
	operatorObject(t, f, "ConfigMap", kcmNamespace, names.VMRulesConfigMap("regional-1"))
	if groups, _ := value(t, storage.Values, "vmrules", "groups").(map[string]any); len(groups) == 0 {
		t.Errorf("regional-1 kof-storage values carry no vmrules groups from valuesFrom")
	}
	if len(storage.Objects.OfKind("VMRule")) == 0 {
		t.Errorf("regional-1 kof-storage renders no VMRule from its vmrules values")
	}
	cm := operatorObject(t, f, "ConfigMap", kcmNamespace, names.RegionalConfigMap("regional-1"))
	wantValue(t, "regional-1 ConfigMap", cm.Object, "https://vmauth.regional-1.kof.example.com/vm/select/0/prometheus",
		"data", "read_metrics_endpoint")
	wantBoundTo(t, f, "child-1", "regional-1")
	wantValue(t, "child-1 ConfigMap (bound by cloud and region)",
		operatorObject(t, f, "ConfigMap", kcmNamespace, names.ChildConfigMap("child-1")).Object, "us-east-2", "data", "aws_region")
	wantBoundTo(t, f, "child-2", "regional-1")
	for _, child := range []string{"child-1", "child-2"} {
		wantWritesTo(t, f, child, "https://vmauth.regional-1.kof.example.com")
		wantChildCredentials(t, f, child)
	}
}

// checkRegionless (02): nothing lands on regional-1; the management cluster receives kof-storage and kof-collectors;
// children write to the management cluster's domain.
func checkRegionless(t *testing.T, f *fleet.Fleet) {
	wantDashboardsOnManagement(t, f)
	wantMetricSources(t, f, &openCostRead{"http://vmauth-cluster.kof:8427/vm/select/0/prometheus", names.VMUserSecret(names.AdminVMUserBase(kcmNamespace, "mothership"))})
	if svcs := serviceNames(cluster(t, f, "regional-1")); len(svcs) != 0 {
		t.Errorf("regional-1 receives %v in regionless mode, want nothing", svcs)
	}
	mgmt := cluster(t, f, "mgmt")
	for _, name := range []string{"kof-storage", "kof-collectors", "external-dns"} {
		s := mgmt.Service(name)
		if s == nil || !strings.HasPrefix(s.Via, "MultiClusterService ") {
			t.Errorf("management cluster does not receive %s through a MultiClusterService (receives %v)", name, serviceNames(mgmt))
		}
	}
	for _, child := range []string{"child-1", "child-2"} {
		wantBoundTo(t, f, child, "mothership")
		wantWritesTo(t, f, child, "https://vmauth.mothership.kof.example.com")
	}
}

// check03: as 02, plus a self-signed ClusterIssuer and exporters that skip TLS verification.
func check03(t *testing.T, f *fleet.Fleet) {
	checkRegionless(t, f)
	issuer := object(t, service(t, f, "mgmt", "kof-storage"), "ClusterIssuer", "", "kof-issuer")
	if _, ok, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); !ok {
		t.Errorf("ClusterIssuer kof-issuer is not self-signed: %v", issuer.Object["spec"])
	}
	for _, child := range []string{"child-1", "child-2"} {
		for _, c := range collectors(t, service(t, f, child, "kof-collectors")) {
			for signal, exp := range exporterOf {
				if _, ok, _ := unstructured.NestedMap(c.Object, "spec", "config", "exporters", exp.name); !ok {
					continue
				}
				skip, _, _ := unstructured.NestedBool(c.Object, "spec", "config", "exporters", exp.name, "tls", "insecure_skip_verify")
				if !skip {
					t.Errorf("%s collector %s: %s exporter %s lacks tls.insecure_skip_verify: true", child, c.GetName(), signal, exp.name)
				}
			}
		}
	}
}

// check04: as 02 in Istio mode: no cert-manager or gateway services; children write in-mesh to the management
// cluster's VMAuth.
func check04(t *testing.T, f *fleet.Fleet) {
	if svcs := serviceNames(cluster(t, f, "regional-1")); len(svcs) != 0 {
		t.Errorf("regional-1 receives %v in regionless mode, want nothing", svcs)
	}
	noThirdPartyIngress(t, f)
	for _, child := range []string{"child-1", "child-2"} {
		wantWritesTo(t, f, child, "http://mothership-vmauth:8427")
	}
	// Regionless Istio: every child is in the mesh (kof-child's Istio MCS selects them all), so the namespace MCS
	// selects every child too.
	wantIstioNamespace(t, f, map[string]string{"k0rdent.mirantis.com/kof-cluster-role": "child"},
		[]string{"child-1", "child-2"}, []string{"kof-istio-child-cluster"})
}

// checkM2M (05): the management-cluster MCS delivers kof-storage (promxy and multilevel select on, VictoriaMetrics
// off), then kof-collectors depending on it.
func checkM2M(t *testing.T, f *fleet.Fleet) {
	wantDashboardsOnManagement(t, f)
	wantMetricSources(t, f, &openCostRead{"http://vmselect-cluster.kof:8481/select/0/prometheus", ""})
	storage := service(t, f, "mgmt", "kof-storage")
	collectors := service(t, f, "mgmt", "kof-collectors")
	for _, s := range []*fleet.Service{storage, collectors} {
		if s.Via != "MultiClusterService kof-mgmt-cluster" {
			t.Errorf("management cluster's %s is delivered by %s, want MultiClusterService kof-mgmt-cluster", s.Name, s.Via)
		}
	}
	wantValue(t, "mgmt kof-storage", storage.Values, true, "promxy", "enabled")
	wantValue(t, "mgmt kof-storage", storage.Values, true, "multilevel", "enabled")
	wantValue(t, "mgmt kof-storage", storage.Values, false, "victoriametrics", "enabled")
	if len(storage.Objects.OfKind("VMCluster")) != 0 {
		t.Errorf("management cluster's kof-storage renders a VMCluster with VictoriaMetrics off")
	}
	if want := []string{storage.Namespace + "/kof-storage", storage.Namespace + "/kube-state-metrics", storage.Namespace + "/prometheus-node-exporter"}; !slices.Equal(collectors.DependsOn, want) {
		t.Errorf("management cluster's kof-collectors dependsOn = %v, want %v", collectors.DependsOn, want)
	}
}

// check06: as 05; the management cluster's collectors get PKI_PATH=etc/kubernetes.
func check06(t *testing.T, f *fleet.Fleet) {
	checkM2M(t, f)
	s := service(t, f, "mgmt", "kof-collectors")
	env := value(t, s.Values, "opentelemetry-kube-stack", "defaultCRConfig", "env").([]any)
	pki, ok := envValue(env, "PKI_PATH")
	if !ok || pki["value"] != "etc/kubernetes" {
		t.Errorf("management cluster collectors PKI_PATH = %v, want etc/kubernetes", pki)
	}
	for _, c := range collectors(t, s) {
		list, _, _ := unstructured.NestedSlice(c.Object, "spec", "env")
		if e, ok := envValue(list, "PKI_PATH"); ok && e["value"] != "etc/kubernetes" {
			t.Errorf("collector %s env PKI_PATH = %v, want etc/kubernetes", c.GetName(), e["value"])
		}
	}
}

// check07: as 05, with the guide's storage overrides on the management cluster's storage and the mothership's
// VMCluster retention.
func check07(t *testing.T, f *fleet.Fleet) {
	checkM2M(t, f)
	storage := service(t, f, "mgmt", "kof-storage")
	traces := object(t, storage, "VTCluster", "kof", "traces")
	wantValue(t, "VTCluster traces", traces.Object, "30d", "spec", "storage", "retentionPeriod")
	audit := object(t, storage, "VLCluster", "kof", "audit-logs")
	wantValue(t, "VLCluster audit-logs", audit.Object, "1y", "spec", "vlstorage", "retentionPeriod")
	for what, obj := range map[string]map[string]any{
		"VTCluster traces":     value(t, traces.Object, "spec", "storage", "storage", "volumeClaimTemplate", "spec").(map[string]any),
		"VLCluster audit-logs": value(t, audit.Object, "spec", "vlstorage", "storage", "volumeClaimTemplate", "spec").(map[string]any),
	} {
		wantValue(t, what, obj, "example-ssd", "storageClassName")
		wantValue(t, what, obj, "100Gi", "resources", "requests", "storage")
	}
	mothership := service(t, f, "mgmt", "kof-mothership")
	vmc := mothership.Objects.OfKind("VMCluster")
	if len(vmc) != 1 {
		t.Fatalf("kof-mothership renders %d VMClusters, want 1", len(vmc))
	}
	wantValue(t, "mothership VMCluster", vmc[0].Object, "30d", "spec", "retentionPeriod")
}

// check08: the management cluster's collectors write to regional-1 with its admin credentials; no kof-storage on the
// management cluster.
func check08(t *testing.T, f *fleet.Fleet) {
	if s := cluster(t, f, "mgmt").Service("kof-storage"); s != nil {
		t.Errorf("management cluster receives kof-storage (%s) in M2R mode", s.Via)
	}
	wantWritesTo(t, f, "mgmt", "https://vmauth.regional-1.kof.example.com")
	// The management cluster authenticates with regional-1's admin credentials, which the operator keeps.
	base := names.AdminVMUserBase(kcmNamespace, "regional-1")
	s := service(t, f, "mgmt", "kof-collectors")
	wantValue(t, "mgmt kof-collectors", s.Values, names.VMUserSecret(base), "kof", "credentials", "secretName")
	operatorObject(t, f, "Secret", kcmNamespace, names.VMUserSecret(base))
	object(t, service(t, f, "mgmt", "kof-vmuser-credentials"), "Secret", "kof", names.VMUserSecret(base))
}

// check10: the management cluster's collectors export to CloudWatch Logs only; AWS credentials only by reference.
func check10(t *testing.T, f *fleet.Fleet) {
	s := service(t, f, "mgmt", "kof-collectors")
	if !strings.HasPrefix(s.Via, "HelmRelease ") {
		t.Errorf("management cluster's kof-collectors delivered by %s, want the umbrella's HelmRelease", s.Via)
	}
	for _, c := range collectors(t, s) {
		exps, _, _ := unstructured.NestedMap(c.Object, "spec", "config", "exporters")
		if _, ok := exps["awscloudwatchlogs"]; !ok && c.GetName() == "kof-collectors-cluster" {
			t.Errorf("collector %s has no awscloudwatchlogs exporter: %v", c.GetName(), keys(exps))
		}
		for _, gone := range []string{"prometheusremotewrite", "otlphttp/logs", "otlphttp/traces"} {
			if _, ok := exps[gone]; ok {
				t.Errorf("collector %s keeps exporter %s that the values set to null", c.GetName(), gone)
			}
		}
		env, _, _ := unstructured.NestedSlice(c.Object, "spec", "env")
		for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
			e, ok := envValue(env, name)
			if !ok {
				t.Errorf("collector %s has no env %s", c.GetName(), name)
				continue
			}
			if _, literal := e["value"]; literal {
				t.Errorf("collector %s env %s carries a literal value", c.GetName(), name)
			}
			if _, ok, _ := unstructured.NestedMap(e, "valueFrom", "secretKeyRef"); !ok {
				t.Errorf("collector %s env %s is not a secretKeyRef: %v", c.GetName(), name, e)
			}
		}
	}
}

// keys returns the sorted keys of m.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// check11: annotations beat every other layer; child-bad fails alone, naming the annotation.
func check11(t *testing.T, f *fleet.Fleet) {
	// The external-dns annotations replace the provider and the Secret, and the values annotation its env.
	wantExternalDNS(t, f, "regional-1", "cloudflare", "cloudflare-api-token", "regional-1.kof.example.com",
		"gateway-httproute")
	dns := service(t, f, "regional-1", "external-dns")
	wantAt(t, "regional-1 external-dns", dns.Values, "CF_API_TOKEN_FILE", "env", "0", "name")
	vmc := object(t, service(t, f, "regional-1", "kof-storage"), "VMCluster", "kof", "cluster")
	wantValue(t, "regional-1 VMCluster", vmc.Object, "90d", "spec", "retentionPeriod")
	child := service(t, f, "child-1", "kof-collectors")
	wantValue(t, "child-1 kof-collectors", child.Values, "renamed-child", "opentelemetry-kube-stack", "clusterName")
	const annotated = "https://vmauth.custom.example.com/vm/insert/0/prometheus/api/v1/write"
	wantValue(t, "child-1 kof-collectors", child.Values, annotated, "kof", "metrics", "endpoint")
	wantExporters(t, child, "child-1", func(signal string) string {
		if signal == "metrics" {
			return annotated
		}
		return "https://vmauth.regional-1.kof.example.com" + writePaths[signal]
	})
	bad := cluster(t, f, "child-bad")
	probs := bad.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0], "k0rdent.mirantis.com/kof-collectors-values") {
		t.Errorf("child-bad problems = %q, want one naming k0rdent.mirantis.com/kof-collectors-values", probs)
	}
	for _, c := range f.Clusters {
		if c.Name != "child-bad" && c.Failed() {
			t.Errorf("cluster %s fails too: %v", c.Name, c.Problems())
		}
	}
}

// check12: the Istio clusters are selected only by the Istio MCS variants; no cert-manager or gateway; the regional
// VMAuth is published in-mesh and the child writes to it.
func check12(t *testing.T, f *fleet.Fleet) {
	for clusterName, mcs := range map[string]string{"regional-istio": "kof-istio-regional-cluster", "child-istio": "kof-istio-child-cluster"} {
		svcs := mcsServices(cluster(t, f, clusterName))
		if len(svcs) == 0 {
			t.Errorf("%s receives no service", clusterName)
		}
		for _, s := range svcs {
			if s.Via != "MultiClusterService "+mcs && s.Via != "MultiClusterService "+istioNamespaceMCS {
				t.Errorf("%s receives %s from %s, want only %s and %s", clusterName, s.Name, s.Via, mcs,
					istioNamespaceMCS)
			}
		}
	}
	for _, c := range f.Clusters {
		if c.Service("external-dns") != nil {
			t.Errorf("%s receives external-dns in Istio mode", c.Name)
		}
	}
	wantIstioNamespace(t, f, map[string]string{"k0rdent.mirantis.com/istio-role": "member"},
		[]string{"regional-istio", "child-istio"}, []string{"kof-istio-regional-cluster", "kof-istio-child-cluster"})
	noThirdPartyIngress(t, f)
	object(t, service(t, f, "regional-istio", "kof-storage"), "Service", "kof", "regional-istio-vmauth")
	wantWritesTo(t, f, "child-istio", "http://regional-istio-vmauth:8427")
}

// wantExternalDNS checks the external-dns service of a cluster (docs/storage-modes.md): the upstream chart by
// reference from its ServiceTemplate, the provider, the credentials Secret by name only (a volume, read-only), the
// cluster's domain as the only domain filter, its own TXT owner ID and the source the cluster publishes VMAuth with.
func wantExternalDNS(t *testing.T, f *fleet.Fleet, clusterName, provider, secret, domain, source string) {
	t.Helper()
	s := service(t, f, clusterName, "external-dns")
	if s.Local || s.Chart != "external-dns" || !strings.HasPrefix(s.Template, "external-dns-") {
		t.Errorf("%s external-dns: chart %q (local %v) from %s, want the upstream chart by reference", clusterName,
			s.Chart, s.Local, s.Template)
	}
	label := clusterName + " external-dns"
	wantAt(t, label, s.Values, provider, "provider", "name")
	wantAt(t, label, s.Values, secret, "extraVolumes", "0", "secret", "secretName")
	wantAt(t, label, s.Values, "/etc/kof/external-dns", "extraVolumeMounts", "0", "mountPath")
	wantAt(t, label, s.Values, true, "extraVolumeMounts", "0", "readOnly")
	wantAt(t, label, s.Values, []any{domain}, "domainFilters")
	wantAt(t, label, s.Values, []any{source}, "sources")
	wantAt(t, label, s.Values, "kof-"+clusterName, "txtOwnerId")
}

// wantAt is wantValue along a path that may index lists (a decimal path part).
func wantAt(t *testing.T, what string, v any, want any, path ...string) {
	t.Helper()
	for _, p := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				t.Errorf("%s: no %s at %s", what, p, strings.Join(path, "."))
				return
			}
			v = c[i]
		default:
			t.Errorf("%s: no value at %s", what, strings.Join(path, "."))
			return
		}
	}
	if !cmp.Equal(v, want) {
		t.Errorf("%s: %s = %v, want %v", what, strings.Join(path, "."), v, want)
	}
}

// istioNamespaceMCS is the MultiClusterService of kof-mothership that delivers the KOF namespace to Istio members.
const istioNamespaceMCS = "kof-istio-namespace"

// wantIstioNamespace checks the Istio namespace bootstrap: kof-mothership renders the ConfigMap
// kof-namespace-template (a Namespace `kof` labelled istio-injection: enabled), the ServiceTemplate of plain
// resources that delivers it and the MultiClusterService selecting matchLabels; every member receives the labelled
// namespace from it, and each of the dependent MultiClusterServices depends on it.
func wantIstioNamespace(t *testing.T, f *fleet.Fleet, matchLabels map[string]string, members, dependents []string) {
	t.Helper()
	ms := service(t, f, "mgmt", "kof-mothership")
	cm := object(t, ms, "ConfigMap", kcmNamespace, "kof-namespace-template")
	data, _, _ := unstructured.NestedString(cm.Object, "data", "namespace.yaml")
	if !strings.Contains(data, "kind: Namespace") || !strings.Contains(data, "istio-injection: enabled") {
		t.Errorf("kof-namespace-template holds no labelled Namespace:\n%s", data)
	}
	var st *unstructured.Unstructured
	for _, o := range ms.Objects.OfKind("ServiceTemplate") {
		if ref, _, _ := unstructured.NestedString(o.Object, "spec", "resources", "localSourceRef", "name"); ref == cm.GetName() {
			st = o
		}
	}
	if st == nil {
		t.Fatalf("no ServiceTemplate delivers ConfigMap %s", cm.GetName())
	}
	mcs := object(t, ms, "MultiClusterService", "", istioNamespaceMCS)
	if sel, _, _ := unstructured.NestedStringMap(mcs.Object, "spec", "clusterSelector", "matchLabels"); !maps.Equal(sel,
		matchLabels) {
		t.Errorf("%s selects %v, want %v", istioNamespaceMCS, sel, matchLabels)
	}
	for _, name := range members {
		s := service(t, f, name, "kof-namespace")
		if s.Via != "MultiClusterService "+istioNamespaceMCS || s.Template != st.GetName() || !s.Resources {
			t.Errorf("%s receives kof-namespace from %s (template %s), want %s with %s", name, s.Via, s.Template,
				istioNamespaceMCS, st.GetName())
		}
		ns := object(t, s, "Namespace", "", "kof")
		if ns.GetLabels()["istio-injection"] != "enabled" {
			t.Errorf("%s: Namespace kof labels %v, want istio-injection: enabled", name, ns.GetLabels())
		}
	}
	var all []*unstructured.Unstructured
	for _, s := range cluster(t, f, "mgmt").Services {
		if s.Objects != nil {
			all = append(all, s.Objects.OfKind("MultiClusterService")...)
		}
	}
	for _, name := range dependents {
		found := false
		for _, o := range all {
			if o.GetName() != name {
				continue
			}
			found = true
			if deps, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "dependsOn"); !slices.Equal(deps,
				[]string{istioNamespaceMCS}) {
				t.Errorf("MultiClusterService %s dependsOn %v, want [%s]", name, deps, istioNamespaceMCS)
			}
		}
		if !found {
			t.Errorf("no MultiClusterService %s", name)
		}
	}
}

// check13: no audit-logs VLCluster on regional clusters.
func check13(t *testing.T, f *fleet.Fleet) {
	for _, c := range f.Clusters {
		if c.Role != fleet.RoleRegional {
			continue
		}
		s := service(t, f, c.Name, "kof-storage")
		vls := s.Objects.OfKind("VLCluster")
		if len(vls) == 0 {
			t.Errorf("%s renders no VLCluster at all", c.Name)
		}
		for _, vl := range vls {
			if strings.Contains(vl.GetName(), "audit") {
				t.Errorf("%s renders VLCluster %s with the audit logs cluster disabled", c.Name, vl.GetName())
			}
		}
	}
}

// TestScenario09ModeConflict: M2M and M2R together fail the render with one message naming both keys, and nothing
// is rendered.
func TestScenario09ModeConflict(t *testing.T) {
	f, err := renderScenario(t, "09-m2m-and-m2r-conflict")
	if err == nil {
		t.Fatal("render succeeded; want the storage modes conflict")
	}
	if f != nil {
		t.Errorf("render returned a fleet of %d clusters with its error; want nothing rendered", len(f.Clusters))
	}
	msg := err.Error()
	for _, key := range []string{"kof-child.values.fromManagement.toManagementCluster.enabled",
		"kof-child.values.fromManagement.toRegionalCluster.name"} {
		if !strings.Contains(msg, key) {
			t.Errorf("error %q does not name %s", msg, key)
		}
	}
	if n := strings.Count(msg, "storage modes conflict"); n != 1 {
		t.Errorf("error %q reports the conflict %d times, want once", msg, n)
	}
}

// TestScenario14ValuesTypo: `kof check values` (chartlib/values) reports the misspelled key with its path and a
// suggestion, and the umbrella's schema validation (what `helm install` runs) rejects it naming its path; nothing is
// rendered.
func TestScenario14ValuesTypo(t *testing.T) {
	findings, err := values.NewChecker(chartsDir).CheckFiles("kof", []string{filepath.Join("testdata", "14-values-typo", "values.yaml")})
	if err != nil {
		t.Fatalf("check values: %v", err)
	}
	const want = "kof-child.values.fromManagement.toManagmentCluster"
	found := false
	for _, fd := range findings {
		if msg := fd.String(); strings.Contains(msg, want) {
			found = true
			if !strings.Contains(msg, "toManagementCluster?") {
				t.Errorf("finding %q does not suggest toManagementCluster", msg)
			}
		}
	}
	if !found {
		t.Errorf("kof check values findings %v do not name %s", findings, want)
	}
	f, err := renderScenario(t, "14-values-typo")
	if err == nil {
		t.Fatal("render succeeded; want a schema validation error")
	}
	if f != nil {
		t.Errorf("render returned a fleet with its error; want nothing rendered")
	}
	msg := err.Error()
	if !strings.Contains(msg, "/kof-child/values/fromManagement") || !strings.Contains(msg, "toManagmentCluster") {
		t.Errorf("error %q does not name kof-child.values.fromManagement.toManagmentCluster", msg)
	}
	if !strings.Contains(strings.ToLower(msg), "schema") {
		t.Errorf("error %q is not a schema validation error", msg)
	}
}

// TestScenariosModesAgree: the KOF charts write layer-2 values as one line of JSON so that Sveltos' double pass
// (v1.0.1-v1.15) and the single pass of later releases give every cluster the same values and the same failures.
func TestScenariosModesAgree(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			double := mustRender(t, sc.name)
			opts := options(t, sc.name)
			opts.Mode, opts.Validator = sveltos.SinglePass, nil
			single, err := fleet.Render(context.Background(), opts)
			if err != nil {
				t.Fatalf("single-pass render: %v", err)
			}
			for _, dc := range double.Clusters {
				sc := cluster(t, single, dc.Name)
				if len(sc.Services) != len(dc.Services) {
					t.Errorf("%s: %d services in single-pass, %d in double-pass", dc.Name, len(sc.Services), len(dc.Services))
					continue
				}
				for i, ds := range dc.Services {
					ss := sc.Services[i]
					if (ds.Err == nil) != (ss.Err == nil) {
						t.Errorf("%s/%s: double-pass error %v, single-pass error %v", dc.Name, ds.Name, ds.Err, ss.Err)
					}
					if diff := cmp.Diff(ds.Values, ss.Values); diff != "" {
						t.Errorf("%s/%s values differ (-double +single):\n%s", dc.Name, ds.Name, diff)
					}
				}
			}
		})
	}
}
