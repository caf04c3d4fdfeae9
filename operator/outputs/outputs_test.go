package outputs

import (
	"encoding/json"
	"strings"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
)

// testConfig is the configuration the kof-mothership chart's defaults give (regional mode).
func testConfig() config.Config {
	return config.Config{
		ReleaseNamespace: "kof", ReleaseName: "kof-mothership", AutoUpgrade: true,
		PropagationTemplate: "kof-propagation-2-0-0", KCMNamespace: "kcm-system", RegionlessClusterName: "mothership",
		RegionalMCS: config.DefaultRegionalMCS, IstioRegionalMCS: config.DefaultIstioRegionalMCS,
		ChildMCS: config.DefaultChildMCS, IstioChildMCS: config.DefaultIstioChildMCS,
		VTClusterName: "kof-traces", VLClusterName: "kof-logs", VLAuditClusterName: "kof-logs-audit",
		Storage: config.StorageURLs{
			VMInsert: "http://vminsert-cluster:8480/", VMSelect: "http://vmselect-cluster:8481/",
			VLInsert: "http://vlinsert:9481/", VLSelect: "http://vlselect:9471/",
			VLAuditInsert: "http://vlinsert-audit:9481/", VLAuditSelect: "http://vlselect-audit:9471/",
			VTInsert: "http://vtinsert:10481/", VTSelect: "http://vtselect:10471/",
		},
		PromxyPodSelector: labels.Everything(), PromxySecretName: "kof-mothership-promxy-config",
	}
}

func regionalView(name string, ann map[string]string) discovery.Cluster {
	return discovery.Cluster{Name: name, Namespace: "kcm-system", Role: kofv1.RoleRegional, Annotations: ann,
		Labels: map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleRegional}, Cloud: "aws",
		Location: discovery.Location{AWSRegion: "us-east-2"}}
}

func childView(name string, lbls, ann map[string]string) discovery.Cluster {
	l := map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleChild}
	for k, v := range lbls {
		l[k] = v
	}
	return discovery.Cluster{Name: name, Namespace: "kcm-system", Role: kofv1.RoleChild, Labels: l, Annotations: ann,
		Cloud: "aws", Location: discovery.Location{AWSRegion: "us-east-2"}}
}

func domain(d string) map[string]string { return map[string]string{kofv1.RegionalDomainAnnotation: d} }

func TestRegionalAndChildConfigMaps(t *testing.T) {
	r := ForRegional(testConfig(), regionalView("regional-1", domain("regional-1.kof.example.com")), nil)
	cm := r.ConfigMap()
	if cm.Name != "kof-regional-1" || cm.Namespace != "kcm-system" || len(cm.Data) != 17 {
		t.Errorf("regional ConfigMap = %s/%s with %d keys, want kcm-system/kof-regional-1 with 17", cm.Namespace,
			cm.Name, len(cm.Data))
	}
	wantLabels := map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy, kofv1.GeneratedLabel: "true",
		kofv1.ClusterRoleLabel: "regional"}
	if d := cmp.Diff(wantLabels, cm.Labels); d != "" {
		t.Errorf("regional labels (-want +got):\n%s", d)
	}
	ch := ForChild(testConfig(), childView("child-1", nil, nil), nil, []Regional{r}, nil)
	ccm := ch.ConfigMap()
	if ccm.Name != "kof-cluster-config-child-1" || ch.Regional != (discovery.Ref{Name: "regional-1", Namespace: "kcm-system"}) {
		t.Errorf("child ConfigMap %s bound to %v, want kof-cluster-config-child-1 bound to kcm-system/regional-1",
			ccm.Name, ch.Regional)
	}
	if ccm.Labels[kofv1.RegionalClusterNameLabel] != "regional-1" || ccm.Labels[kofv1.RegionalClusterNamespaceLabel] != "kcm-system" {
		t.Errorf("child labels %v do not name its regional", ccm.Labels)
	}
	if d := cmp.Diff(cm.Data, ccm.Data); d != "" {
		t.Errorf("child data is not the regional's (-regional +child):\n%s", d)
	}
	ccm.Data["x"] = "y"
	if _, shared := cm.Data["x"]; shared {
		t.Error("child data shares its map with the regional's")
	}
}

func TestRegionlessConfigMapAndBinding(t *testing.T) {
	cfg := testConfig()
	cfg.Regionless, cfg.RegionlessDomain = true, "mothership.kof.example.com"
	cm := RegionlessConfigMap(cfg)
	if cm.Name != "kof-mothership" || cm.Namespace != "kcm-system" || cm.Labels[kofv1.RegionlessLabel] != "true" {
		t.Errorf("regionless ConfigMap = %s/%s labels %v", cm.Namespace, cm.Name, cm.Labels)
	}
	want := "https://vmauth.mothership.kof.example.com/vm/insert/0/prometheus/api/v1/write"
	if got := cm.Data[discovery.KeyWriteMetrics]; got != want {
		t.Errorf("write_metrics_endpoint = %q, want %q", got, want)
	}
	if r := ForRegional(cfg, regionalView("regional-1", domain("r1.example.com")), nil); !r.Unused || r.ConfigMap() != nil {
		t.Errorf("regional ClusterDeployment in regionless mode: %+v, want unused without a ConfigMap", r)
	}
	ch := ForChild(cfg, childView("child-1", nil, nil), nil, nil, nil)
	if ch.Regional != (discovery.Ref{Name: "mothership", Namespace: "kcm-system"}) || ch.Data[discovery.KeyWriteMetrics] != want {
		t.Errorf("regionless child binds to %v writing to %q", ch.Regional, ch.Data[discovery.KeyWriteMetrics])
	}
	if b := ChildBundle(cfg, ch); b.Regional != "" {
		t.Errorf("regionless child bundle propagates to %q, want nowhere", b.Regional)
	}
	// A child reads from the URL it can reach (regression: it got the management cluster's in-cluster URL, and
	// OpenCost on the child read from it); readers on the management cluster keep the in-cluster URLs.
	wantRead := "https://vmauth.mothership.kof.example.com/vm/select/0/prometheus"
	if got := ch.Data[discovery.KeyReadMetrics]; got != wantRead {
		t.Errorf("regionless child read_metrics_endpoint = %q, want %q", got, wantRead)
	}
	in, _, err := ParseRegionalConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://vmauth-cluster:8427/vm/select/0/prometheus"; in.Reads.ReadMetrics != want {
		t.Errorf("management cluster's read of the regionless ConfigMap = %q, want the in-cluster %q", in.Reads.ReadMetrics, want)
	}
}

// TestBadSettingFailsOnlyWhatItConfigures is correctness class 10: a malformed promxy-side setting keeps the
// regional's endpoints and its children; a child of a regional without endpoints says so naming regional and key; a
// child write-endpoint annotation that is not an absolute http(s) URL is reported naming the key.
func TestBadSettingFailsOnlyWhatItConfigures(t *testing.T) {
	cfg := testConfig()
	ann := domain("regional-1.kof.example.com")
	ann[kofv1.HTTPConfigAnnotation] = `{"dial_timeout": 5}`
	r := ForRegional(testConfig(), regionalView("regional-1", ann), nil)
	if r.Data == nil || r.Data[discovery.KeyHTTPConfig] != "" {
		t.Fatalf("regional with a bad http config: data %v, want the endpoints and the default http config", r.Data)
	}
	if len(r.Problems) != 1 || r.Problems[0].Fatal || r.Problems[0].Reason != kofv1.ReasonInvalidAnnotation ||
		!strings.Contains(r.Problems[0].Error(), kofv1.HTTPConfigAnnotation) {
		t.Errorf("problems = %+v, want one non-fatal InvalidAnnotation naming %s", r.Problems, kofv1.HTTPConfigAnnotation)
	}
	ch := ForChild(cfg, childView("child-1", nil, nil), nil, []Regional{r}, nil)
	if ch.Data == nil || len(ch.Problems) != 0 {
		t.Errorf("child of that regional: data %v, problems %v; want bound without problems", ch.Data, ch.Problems)
	}

	// Variant: the regional has no endpoints at all; its child names it and the key.
	broken := ForRegional(testConfig(), regionalView("regional-2", nil), nil)
	ch = ForChild(cfg, childView("child-2", map[string]string{kofv1.RegionalClusterNameLabel: "regional-2"}, nil),
		nil, []Regional{r, broken}, nil)
	p := Fatal(ch.Problems)
	if ch.Data != nil || p == nil || p.Reason != kofv1.ReasonRegionalMisconfigured ||
		!strings.Contains(p.Error(), "regional cluster kcm-system/regional-2 is misconfigured") ||
		!strings.Contains(p.Error(), kofv1.RegionalDomainAnnotation) {
		t.Errorf("child of a misconfigured regional: problems %+v, want RegionalMisconfigured naming kcm-system/regional-2 and %s",
			ch.Problems, kofv1.RegionalDomainAnnotation)
	}

	for _, bad := range []string{"not a url", "vmauth.example.com/vm/insert"} {
		ch = ForChild(cfg, childView("child-3", nil, map[string]string{kofv1.WriteLogsEndpointAnnotation: bad}), nil,
			[]Regional{r}, nil)
		if ch.Data == nil || len(ch.Problems) != 1 || ch.Problems[0].Fatal ||
			ch.Problems[0].Reason != kofv1.ReasonInvalidAnnotation ||
			!strings.Contains(ch.Problems[0].Error(), kofv1.WriteLogsEndpointAnnotation) {
			t.Errorf("child write endpoint %q: data set %v, problems %+v; want the ConfigMap and one InvalidAnnotation naming %s",
				bad, ch.Data != nil, ch.Problems, kofv1.WriteLogsEndpointAnnotation)
		}
	}
	ch = ForChild(cfg, childView("child-4", nil, map[string]string{kofv1.WriteLogsEndpointAnnotation: "https://logs.example.com/insert"}),
		nil, []Regional{r}, nil)
	if len(ch.Problems) != 0 {
		t.Errorf("valid child write endpoint: problems %v", ch.Problems)
	}
}

// TestWatchScope is the operator half of correctness class 8: a regional outside KOF_WATCH_NAMESPACES is reported as
// outside the scope, not as "not found".
func TestWatchScope(t *testing.T) {
	cfg := testConfig()
	cfg.WatchNamespaces = []string{"team-a"}
	for _, ns := range []string{"team-b", "other"} {
		ch := ForChild(cfg, childView("child-1", map[string]string{kofv1.RegionalClusterNameLabel: "r1",
			kofv1.RegionalClusterNamespaceLabel: ns}, nil), nil, nil, nil)
		p := Fatal(ch.Problems)
		if p == nil || p.Reason != kofv1.ReasonOutsideWatchScope ||
			!strings.Contains(p.Error(), "namespace "+ns+" is outside KOF_WATCH_NAMESPACES") {
			t.Errorf("regional in %s: problems %+v, want OutsideWatchScope naming the namespace", ns, ch.Problems)
		}
	}
	out := Compute(Input{Config: cfg, ClusterDeployments: []kcmv1.ClusterDeployment{
		*cd("team-b", "regional-9", "regional", domain("r9.example.com")),
	}})
	p := Fatal(out.Problems["team-b/regional-9"])
	if len(out.Objects) != 0 || p == nil || p.Reason != kofv1.ReasonOutsideWatchScope {
		t.Errorf("regional outside the scope: %d objects, problems %+v; want none and OutsideWatchScope",
			len(out.Objects), out.Problems)
	}
}

func TestBundlePropagation(t *testing.T) {
	cfg := testConfig()
	b := Bundle{Base: "child-adopted-eea83bde02", Namespace: "kcm-system", Tenant: "t1", Regional: "regional-1",
		OwnerLabels: OwnerLabels("ClusterDeployment", "kcm-system", "child-adopted")}
	s := b.Secret("p4ssw0rd-of-24-characters")
	if s.Name != "kof-vmuser-creds-child-adopted-eea83bde02" || string(s.Data[UsernameKey]) != b.Base ||
		string(s.Data[PasswordKey]) != "p4ssw0rd-of-24-characters" {
		t.Errorf("secret %s data %v", s.Name, s.Data)
	}
	m, err := b.Propagation(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Correctness class 4, operator half: the propagation waits for the regional's MCS and for its own release.
	if d := cmp.Diff([]string{"kof-regional-cluster"}, m.Spec.DependsOn); d != "" {
		t.Errorf("dependsOn (-want +got):\n%s", d)
	}
	svc := m.Spec.ServiceSpec.Services[0]
	if svc.HelmOptions == nil || svc.HelmOptions.Wait == nil || !*svc.HelmOptions.Wait {
		t.Errorf("service helmOptions = %+v, want wait: true", svc.HelmOptions)
	}
	b.RegionalIstio = true
	if mi, _ := b.Propagation(cfg); mi.Spec.DependsOn[0] != "kof-istio-regional-cluster" {
		t.Errorf("Istio regional: dependsOn %v, want the Istio regional MCS", mi.Spec.DependsOn)
	}
	if strings.Contains(svc.Values, "p4ssw0rd") {
		t.Error("the password reaches the MCS values")
	}
	// Sveltos replaces the action by the Secret's data; the rest is JSON built from the Go types.
	const action = `{{ getField "KOFVMUserSecret" "data" | toJson }}`
	if strings.Count(svc.Values, action) != 1 {
		t.Fatalf("values %s: want the getField action once", svc.Values)
	}
	var v struct {
		Propagation struct {
			Enabled bool             `json:"enabled"`
			Data    []map[string]any `json:"data"`
		} `json:"propagation"`
	}
	if err := json.Unmarshal([]byte(strings.Replace(svc.Values, action, `{"password":"x","username":"y"}`, 1)), &v); err != nil {
		t.Fatalf("values after instantiation are not JSON: %v\n%s", err, svc.Values)
	}
	if !v.Propagation.Enabled || len(v.Propagation.Data) != 2 || v.Propagation.Data[0]["kind"] != "Secret" ||
		v.Propagation.Data[1]["kind"] != "VMUser" {
		t.Errorf("propagation values = %+v", v.Propagation)
	}
	if _, has := v.Propagation.Data[1]["status"]; has {
		t.Error("the propagated VMUser carries a status")
	}
	b.Regional = ""
	if m, err := b.Propagation(cfg); m != nil || err != nil {
		t.Errorf("bundle without regional: propagation %v, %v; want none", m, err)
	}
}

func TestRegionPropagation(t *testing.T) {
	cfg := testConfig()
	v := regionalView("region-1", domain("region-1.example.com"))
	v.Labels[kofv1.KCMRegionClusterLabel] = "true"
	mcss, err := RegionPropagation(cfg, ForRegional(testConfig(), v, nil))
	if err != nil || len(mcss) != 2 {
		t.Fatalf("region MCSs = %d, %v; want 2", len(mcss), err)
	}
	for _, m := range mcss {
		svc := m.Spec.ServiceSpec.Services[0]
		if m.Spec.DependsOn[0] != cfg.RegionalMCS || svc.HelmOptions == nil || !*svc.HelmOptions.Wait ||
			m.Spec.ClusterSelector.MatchLabels[kofv1.ClusterNameLabel] != "region-1" {
			t.Errorf("MCS %s: dependsOn %v, helmOptions %+v, selector %v", m.Name, m.Spec.DependsOn, svc.HelmOptions,
				m.Spec.ClusterSelector)
		}
	}
	if !strings.Contains(mcss[1].Spec.ServiceSpec.Services[0].Values,
		`"data":{{ getField "KOFVMRules" "data" | default (dict) | toJson }}`) {
		t.Errorf("vmrules propagation values = %s", mcss[1].Spec.ServiceSpec.Services[0].Values)
	}
	if mcss, _ := RegionPropagation(cfg, ForRegional(testConfig(), regionalView("r", domain("r.example.com")), nil)); mcss != nil {
		t.Errorf("regional without the KCM region label gets %d MCSs", len(mcss))
	}
}

// cd returns a ClusterDeployment of role with annotations and an aws template in us-east-2.
func cd(ns, name, role string, ann map[string]string) *kcmv1.ClusterDeployment {
	return &kcmv1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann,
			Labels: map[string]string{kofv1.ClusterRoleLabel: role}},
		Spec: kcmv1.ClusterDeploymentSpec{Template: "aws-standalone-cp-1-0-0",
			Config: &apiextv1.JSON{Raw: []byte(`{"region":"us-east-2"}`)}},
	}
}

func TestCompute(t *testing.T) {
	cfg := testConfig()
	tpl := kcmv1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "kcm-system", Name: "aws-standalone-cp-1-0-0"},
		Status: kcmv1.ClusterTemplateStatus{Providers: []string{"infrastructure-aws"}}}
	out := Compute(Input{Config: cfg, Password: "offline", ClusterTemplates: []kcmv1.ClusterTemplate{tpl},
		ClusterDeployments: []kcmv1.ClusterDeployment{
			*cd("kcm-system", "regional-1", "regional", domain("regional-1.kof.example.com")),
			*cd("kcm-system", "child-1", "child", nil),
			*cd("kcm-system", "child-bad", "child", map[string]string{kofv1.WriteMetricsEndpointAnnotation: "not a url"}),
		}})
	var got []string
	for _, o := range out.Objects {
		got = append(got, objectKey(o.Object))
		if o.Cluster.Name == "" || o.Management {
			t.Errorf("%s is made for %+v", objectKey(o.Object), o)
		}
	}
	admin := names.AdminVMUserBase("kcm-system", "regional-1")
	child := names.ChildVMUserBase("kcm-system", "child-1")
	bad := names.ChildVMUserBase("kcm-system", "child-bad")
	want := []string{
		"ConfigMap/kcm-system/kof-cluster-config-child-1", "ConfigMap/kcm-system/kof-cluster-config-child-bad",
		"ConfigMap/kcm-system/kof-record-vmrules-regional-1", "ConfigMap/kcm-system/kof-regional-1",
		"MultiClusterService//" + names.VMUserPropagation(admin), "MultiClusterService//" + names.VMUserPropagation(child),
		"MultiClusterService//" + names.VMUserPropagation(bad),
		"PromxyServerGroup/kcm-system/" + names.PromxyServerGroup("kcm-system", "regional-1"),
		"Secret/kcm-system/" + names.VMUserSecret(admin), "Secret/kcm-system/" + names.VMUserSecret(child),
		"Secret/kcm-system/" + names.VMUserSecret(bad),
		"VMStorageConnection/kcm-system/" + names.StorageConnection(names.StorageAuditLogs, "kcm-system", "regional-1"),
		"VMStorageConnection/kcm-system/" + names.StorageConnection(names.StorageLogs, "kcm-system", "regional-1"),
		"VMStorageConnection/kcm-system/" + names.StorageConnection(names.StorageTraces, "kcm-system", "regional-1"),
		"VMUser/kcm-system/" + names.VMUser(admin), "VMUser/kcm-system/" + names.VMUser(child),
		"VMUser/kcm-system/" + names.VMUser(bad),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
	if ps := out.Problems["kcm-system/child-bad"]; len(ps) != 1 || ps[0].Reason != kofv1.ReasonInvalidAnnotation {
		t.Errorf("child-bad problems = %+v, want one InvalidAnnotation", ps)
	}
	if len(out.Problems["kcm-system/child-1"]) != 0 || len(out.Problems["kcm-system/regional-1"]) != 0 {
		t.Errorf("problems = %+v, want none for regional-1 and child-1", out.Problems)
	}
}

func TestTargetRefs(t *testing.T) {
	u := config.StorageURLs{VMInsert: "http://i", VMSelect: "http://s", VLInsert: "http://li", VLSelect: "http://ls",
		VLAuditInsert: "http://ai", VLAuditSelect: "http://as", VTInsert: "http://ti", VTSelect: "http://ts"}
	refs := TargetRefs(u, "PLATFORM")
	got := map[string][2]string{}
	for _, r := range refs {
		got[r.Paths[0]] = [2]string{r.Static.URL, r.QueryArgs[0].Name + "=" + r.QueryArgs[0].Values[0]}
	}
	want := map[string][2]string{
		"/vm/insert/.*": {"http://i", "extra_label=tenant=PLATFORM"},
		"/vm/select/.*": {"http://s", `extra_filters={tenant="PLATFORM"}`},
		"/vli/.*":       {"http://li", "extra_fields=tenant=PLATFORM"},
		"/vls/.*":       {"http://ls", `extra_filters="tenant":="PLATFORM"`},
		"/vlai/.*":      {"http://ai", "extra_fields=tenant=PLATFORM"},
		"/vlas/.*":      {"http://as", `extra_filters="tenant":="PLATFORM"`},
		"/vti/.*":       {"http://ti", "extra_fields=resource_attr:tenant=PLATFORM"},
		"/vts/.*":       {"http://ts", `extra_filters="resource_attr:tenant":="PLATFORM"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	for _, r := range TargetRefs(u, "") {
		if len(r.QueryArgs) != 0 {
			t.Errorf("admin route %s has query args %v", r.Paths[0], r.QueryArgs)
		}
	}
}

// TestKeepHTTPConfig: a malformed `kof-http-config` keeps the last valid value of the regional ConfigMap (and so of
// its children's copies), and the problem says so; a valid one always wins, and a malformed one without a valid
// previous value leaves the defaults.
func TestKeepHTTPConfig(t *testing.T) {
	const last = `{"dial_timeout":"7s","tls_config":{"insecure_skip_verify":true}}`
	previous := map[string]string{discovery.KeyHTTPConfig: last}
	ann := domain("regional-1.kof.example.com")
	ann[kofv1.HTTPConfigAnnotation] = `{"dial_timeout": 5}`
	r := ForRegional(testConfig(), regionalView("regional-1", ann), nil).KeepHTTPConfig(previous)
	if r.Data[discovery.KeyHTTPConfig] != last {
		t.Errorf("kof_http_config = %q, want the last valid %q", r.Data[discovery.KeyHTTPConfig], last)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Error(), "keep the last valid settings") {
		t.Errorf("problems = %v, want one saying the last valid settings are kept", r.Problems)
	}
	ch := ForChild(testConfig(), childView("child-1", nil, nil), nil, []Regional{r}, nil)
	if ch.Data[discovery.KeyHTTPConfig] != last {
		t.Errorf("child copy kof_http_config = %q, want %q", ch.Data[discovery.KeyHTTPConfig], last)
	}
	if got := ForRegional(testConfig(), regionalView("regional-1", ann), nil).KeepHTTPConfig(
		map[string]string{discovery.KeyHTTPConfig: "{broken"}).Data[discovery.KeyHTTPConfig]; got != "" {
		t.Errorf("with a broken previous value kof_http_config = %q, want the defaults", got)
	}
	ann[kofv1.HTTPConfigAnnotation] = `{"dial_timeout":"3s"}`
	if got := ForRegional(testConfig(), regionalView("regional-1", ann), nil).KeepHTTPConfig(previous).Data[discovery.KeyHTTPConfig]; !strings.Contains(got, `"dial_timeout":"3s"`) {
		t.Errorf("valid annotation: kof_http_config = %q, want the annotation's", got)
	}
}
