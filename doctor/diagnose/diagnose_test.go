package diagnose

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	libsveltosv1 "github.com/projectsveltos/libsveltos/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
)

const (
	ns       = "kcm-system"
	template = "aws-standalone-cp-1-0-0"
)

// cd returns a ClusterDeployment of the AWS template in region with labels.
func cd(name, region string, labels map[string]string) kcmv1.ClusterDeployment {
	raw, _ := json.Marshal(map[string]any{"region": region})
	return kcmv1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: kcmv1.ClusterDeploymentSpec{Template: template, Config: &apiextv1.JSON{Raw: raw}}}
}

func regional(name, region string) kcmv1.ClusterDeployment {
	c := cd(name, region, map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleRegional})
	c.Annotations = map[string]string{kofv1.RegionalDomainAnnotation: name + ".example.com"}
	return c
}

func child(name, region string, labels ...string) kcmv1.ClusterDeployment {
	l := map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleChild}
	for i := 0; i+1 < len(labels); i += 2 {
		l[labels[i]] = labels[i+1]
	}
	return cd(name, region, l)
}

// mcs returns a MultiClusterService selecting matchLabels with one service per template.
func mcs(name string, matchLabels map[string]string, templates ...string) kcmv1.MultiClusterService {
	m := kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
	m.Spec.ClusterSelector = metav1.LabelSelector{MatchLabels: matchLabels}
	for _, t := range templates {
		m.Spec.ServiceSpec.Services = append(m.Spec.ServiceSpec.Services, kcmv1.Service{Name: t, Namespace: "kof",
			Template: t + "-2-0-0"})
	}
	return m
}

// snapshot returns a live snapshot with the AWS ClusterTemplate, the operator environment of a regional install
// and the given ClusterDeployments and MultiClusterServices.
func snapshot(cds []kcmv1.ClusterDeployment, mcss ...kcmv1.MultiClusterService) *Snapshot {
	return &Snapshot{Namespace: "kof", Release: "kof", Deployments: cds, MCSs: mcss,
		Templates: []kcmv1.ClusterTemplate{{ObjectMeta: metav1.ObjectMeta{Name: template, Namespace: ns},
			Status: kcmv1.ClusterTemplateStatus{Providers: []string{"infrastructure-aws"}}}},
		OperatorEnv: operatorEnv(false)}
}

func operatorEnv(regionless bool) map[string]string {
	env := map[string]string{"RELEASE_NAMESPACE": "kof", "RELEASE_NAME": "kof-mothership", "KOF_VERSION": "2.0.0",
		"KOF_AUTO_UPGRADE": "true", "KOF_VL_CLUSTER_NAME": "kof-logs", "KOF_VL_AUDIT_CLUSTER_NAME": "kof-logs-audit",
		"KOF_VT_CLUSTER_NAME": "kof-traces", "KOF_PROPAGATION_TEMPLATE": "kof-propagation-2-0-0",
		"KOF_PROMXY_SECRET_NAME": "promxy", "KOF_PROMXY_POD_SELECTOR": "app=promxy",
		"KOF_PROMXY_RULES_CONFIGMAP": "kof-mothership-promxy-rules",
	}
	for _, k := range []string{"KOF_VMINSERT_URL", "KOF_VMSELECT_URL", "KOF_VLINSERT_URL", "KOF_VLSELECT_URL",
		"KOF_VLINSERT_AUDIT_URL", "KOF_VLSELECT_AUDIT_URL", "KOF_VTINSERT_URL", "KOF_VTSELECT_URL"} {
		env[k] = "http://storage:8080/"
	}
	if regionless {
		env["KOF_REGIONLESS_ENABLED"], env["KOF_REGIONLESS_DOMAIN"] = "true", "mothership.example.com"
	}
	return env
}

// run diagnoses s against an empty prediction (a fleet without operator outputs or services).
func run(s *Snapshot) *Diagnosis {
	return Diagnose(Input{Live: s, Predicted: &fleet.Fleet{}})
}

func findings(d *Diagnosis, cluster string, code Code) []Finding {
	var out []Finding
	for _, f := range d.AllFindings() {
		if f.Cluster == cluster && f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

func one(t *testing.T, d *Diagnosis, cluster string, code Code) Finding {
	t.Helper()
	fs := findings(d, cluster, code)
	if len(fs) != 1 {
		t.Fatalf("%s: %d %s findings, want 1; all: %v", cluster, len(fs), code, d.AllFindings())
	}
	return fs[0]
}

var childMCS = mcs("kof-child-cluster", map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleChild}, "kof-collectors")

func TestBinding(t *testing.T) {
	d := run(snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"),
		child("child-1", "us-east-2"), child("child-2", "eu-west-1", kofv1.RegionalClusterNameLabel, "regional-1"),
		child("child-3", "ap-south-1"), child("child-4", "us-east-2", kofv1.RegionalClusterNameLabel, "gone")},
		childMCS))
	for name, want := range map[string]string{"child-1": "same aws region us-east-2",
		"child-2": "label " + kofv1.RegionalClusterNameLabel} {
		c := d.Cluster(name)
		if c.Regional != ns+"/regional-1" || c.Binding != want {
			t.Errorf("%s bound to %q (%s), want %s/regional-1 (%s)", name, c.Regional, c.Binding, ns, want)
		}
		if got := findings(d, name, CodeNoRegional); len(got) != 0 {
			t.Errorf("%s: %v", name, got)
		}
	}
	f := one(t, d, "child-3", CodeNoRegional)
	if f.Field != "metadata.labels" || f.Message != "no regional: no regional cluster in the same aws region ap-south-1" ||
		!strings.Contains(f.Fix, "or use the same aws region as a regional (regional-1: aws us-east-2)") {
		t.Errorf("child-3: %+v", f)
	}
	f = one(t, d, "child-4", CodeNoRegional)
	if f.Field != "metadata.labels["+kofv1.RegionalClusterNameLabel+"]" || !strings.Contains(f.Message, ns+"/gone") ||
		!strings.Contains(f.Fix, "the labels name "+ns+"/gone; name an existing regional cluster ("+ns+"/regional-1)") {
		t.Errorf("child-4: %+v", f)
	}
	if c := d.Cluster("child-3"); c.State() != string(SeverityError) {
		t.Errorf("child-3 state %q, want error", c.State())
	}
}

func TestBindingUnknownCloud(t *testing.T) {
	c := child("child-x", "us-east-2")
	c.Spec.Template = "missing-template"
	d := run(snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), c}, childMCS))
	if f := one(t, d, "child-x", CodeNoRegional); f.Field != "spec.template" {
		t.Errorf("child-x: %+v, want the field spec.template", f)
	}
}

func TestBindingRegionless(t *testing.T) {
	s := snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), child("child-3", "ap-south-1")},
		childMCS)
	s.OperatorEnv = operatorEnv(true)
	d := run(s)
	if c := d.Cluster("child-3"); c.Regional != "mgmt/mgmt" || len(findings(d, "child-3", CodeNoRegional)) != 0 {
		t.Errorf("regionless child-3 bound to %q with %v, want the management cluster", c.Regional, c.Findings)
	}
	if got := findings(d, "regional-1", CodeNotSelected); len(got) != 0 {
		t.Errorf("regionless regional-1 is expected to receive nothing, yet: %v", got)
	}
}

// A regional without a domain and without endpoint annotations has no endpoints: it is reported, and so is the
// child bound to it, naming the regional.
func TestRegionalInvalid(t *testing.T) {
	r := regional("regional-1", "us-east-2")
	r.Annotations = nil
	d := run(snapshot([]kcmv1.ClusterDeployment{r, child("child-1", "us-east-2")}, childMCS,
		mcs("kof-regional-cluster", map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleRegional}, "kof-storage")))
	if f := one(t, d, "regional-1", CodeRegionalInvalid); !strings.Contains(f.Message, kofv1.RegionalDomainAnnotation) {
		t.Errorf("regional-1: %+v, want the annotation named", f)
	}
	f := one(t, d, "child-1", CodeRegionalUnusable)
	if f.Object != "ClusterDeployment "+ns+"/regional-1" || !strings.Contains(f.Message, ns+"/regional-1") {
		t.Errorf("child-1: %+v, want its regional named", f)
	}
}

func TestNotSelectedNamesTheFailingTerm(t *testing.T) {
	gated := mcs("kof-child-cluster", map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleChild,
		"k0rdent.mirantis.com/kof-version": "2.0.0"}, "kof-collectors")
	d := run(snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), child("child-1", "us-east-2")},
		gated))
	f := one(t, d, "child-1", CodeNotSelected)
	want := Finding{Code: CodeNotSelected, Severity: SeverityError, Cluster: "child-1",
		Object: "ClusterDeployment " + ns + "/child-1", Field: "metadata.labels[k0rdent.mirantis.com/kof-version]",
		Message: "no MultiClusterService selects it, so it receives no KOF service; the closest, kof-child-cluster, " +
			"fails: label k0rdent.mirantis.com/kof-version is not set",
		Fix: `set label k0rdent.mirantis.com/kof-version: "2.0.0"`}
	if f != want {
		t.Errorf("\n got %+v\nwant %+v", f, want)
	}
	sel := d.Cluster("child-1").Selections
	if len(sel) != 1 || sel[0].Matches || len(Failing(sel[0].Terms)) != 1 {
		t.Errorf("selections %+v", sel)
	}
}

func TestServiceStates(t *testing.T) {
	failed := child("child-1", "us-east-2")
	failed.Status.Services = []kcmv1.ServiceState{{Name: "kof-collectors", Namespace: "kof", State: kcmv1.ServiceStateFailed,
		FailureMessage: "chart not found"}}
	sveltos := child("child-2", "us-east-2")
	conflict := "release kof/kof-collectors is managed by another profile"
	summary := addonv1.ClusterSummary{ObjectMeta: metav1.ObjectMeta{Name: "p--child-2-49a75732-capi-child-2", Namespace: ns,
		Labels: map[string]string{summaryClusterLabel: "child-2", summaryProfileLabel: "child-2-49a75732"}},
		Status: addonv1.ClusterSummaryStatus{HelmReleaseSummaries: []addonv1.HelmChartSummary{{ReleaseName: "kof-collectors",
			ReleaseNamespace: "kof", Status: addonv1.HelmChartStatusConflict, ConflictMessage: conflict}}}}
	deployed := child("child-3", "us-east-2")
	deployed.Status.Services = []kcmv1.ServiceState{{Name: "other", Namespace: "kof", State: kcmv1.ServiceStateDeployed}}
	s := snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), failed, sveltos, deployed}, childMCS)
	s.Summaries = []addonv1.ClusterSummary{summary}
	d := run(s)
	if f := one(t, d, "child-1", CodeServiceFailed); !strings.HasSuffix(f.Message, "failed: chart not found") ||
		f.Field != "status.services" {
		t.Errorf("child-1: %+v", f)
	}
	if svc := d.Cluster("child-2").Services[0]; svc.State != kcmv1.ServiceStateFailed || svc.Message != conflict ||
		svc.StateSource != sourceSummary {
		t.Errorf("child-2's service from its ClusterSummary: %+v", svc)
	}
	one(t, d, "child-3", CodeServiceNotDelivered)
	if got := findings(d, "", CodeStatusNotReported); len(got) != 0 {
		t.Errorf("KCM reports states, yet %v", got)
	}
}

func TestSummaryFeatureStates(t *testing.T) {
	msg := "helm install timed out"
	sum := &addonv1.ClusterSummary{Status: addonv1.ClusterSummaryStatus{
		HelmReleaseSummaries: []addonv1.HelmChartSummary{{ReleaseName: "a", ReleaseNamespace: "kof",
			Status: addonv1.HelmChartStatusManaging}},
		FeatureSummaries: []addonv1.FeatureSummary{{FeatureID: libsveltosv1.FeatureHelm,
			Status: libsveltosv1.FeatureStatusFailed, FailureMessage: &msg}}}}
	if st, m, ok := summaryState(sum, "a", "kof"); !ok || st != kcmv1.ServiceStateFailed || m != msg {
		t.Errorf("failed Helm feature: %q %q %v", st, m, ok)
	}
	sum.Status.FeatureSummaries[0].Status = libsveltosv1.FeatureStatusProvisioned
	if st, _, _ := summaryState(sum, "a", "kof"); st != kcmv1.ServiceStateDeployed {
		t.Errorf("provisioned Helm feature: %q, want Deployed", st)
	}
	if _, _, ok := summaryState(sum, "b", "kof"); ok {
		t.Error("a release the ClusterSummary does not manage has a state")
	}
}

// The ServiceSet of a ClusterDeployment and a MultiClusterService is `<cd>-<hex of the first 4 bytes of
// sha256(mcs)>` in the cd's namespace; of the management cluster `management-<hash>` in the system namespace
// (k0rdent/kcm v1.10.0 internal/serviceset ObjectKey). The hashes were computed independently.
func TestServiceSetKey(t *testing.T) {
	c := cd("child-2", "", nil)
	if got := serviceSetKey(ns, &c, "kof-child-cluster"); got != ns+"/child-2-49a75732" {
		t.Errorf("ServiceSet of child-2 = %s", got)
	}
	if got := serviceSetKey(ns, nil, "kof-mgmt-cluster"); got != ns+"/management-4e27f341" {
		t.Errorf("ServiceSet of the management cluster = %s", got)
	}
}

func TestNotListed(t *testing.T) {
	m := childMCS
	m.Status.ObservedGeneration = 1
	m.Status.MatchingClusters = []kcmv1.MatchingCluster{{ObjectReference: &corev1.ObjectReference{Name: "child-1",
		Namespace: ns}}}
	d := run(snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), child("child-1", "us-east-2"),
		child("child-2", "us-east-2")}, m))
	one(t, d, "child-2", CodeNotListed)
	if got := findings(d, "child-1", CodeNotListed); len(got) != 0 {
		t.Errorf("listed child-1: %v", got)
	}
	for name, want := range map[string]string{"child-1": KCMNotDeployed, "child-2": KCMNotListed} {
		if got := d.Cluster(name).Selections[0].KCM; got != want {
			t.Errorf("%s: KCM says %q, want %q", name, got, want)
		}
	}
}

func TestOperatorObjects(t *testing.T) {
	base := names.ChildVMUserBase(ns, "child-1")
	predicted := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{"write_metrics_endpoint": "https://vmauth.regional-1.example.com/vm/insert"}}}
	predicted.SetNamespace(ns)
	predicted.SetName(names.ChildConfigMap("child-1"))
	predicted.SetLabels(map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy})
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	secret.SetNamespace(ns)
	secret.SetName(names.VMUserSecret(base))
	s := snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), child("child-1", "us-east-2")},
		childMCS)
	s.ConfigMaps = []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigMap("child-1"),
		Namespace: ns, Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}},
		Data: map[string]string{"write_metrics_endpoint": "https://other/vm/insert", "extra": "x"}}}
	s.Unreadable = []Unreadable{{What: "operator VMUsers", Reason: "forbidden"}}
	d := Diagnose(Input{Live: s, Predicted: &fleet.Fleet{Operator: []*unstructured.Unstructured{predicted, secret}}})
	f := one(t, d, "child-1", CodeOperatorObjectDiffers)
	for _, want := range []string{`data.extra: live "x", predicted absent`,
		`data.write_metrics_endpoint: live "https://other/vm/insert", predicted "https://vmauth.regional-1.example.com/vm/insert"`} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("difference %q missing from %q", want, f.Message)
		}
	}
	missing := one(t, d, "child-1", CodeOperatorObjectMissing)
	if missing.Object != "Secret "+ns+"/"+names.VMUserSecret(base) {
		t.Errorf("missing object %q, want the credentials Secret", missing.Object)
	}
	for _, o := range d.Cluster("child-1").Objects {
		if o.Kind == kindVMUser && !o.LiveUnknown {
			t.Errorf("VMUser %s: live unknown not set though VMUsers are unreadable", o.Name)
		}
	}
	if eps := d.Cluster("child-1").Endpoints; len(eps) != 4 || eps[0].Write != "https://other/vm/insert" || eps[0].Predicted {
		t.Errorf("endpoints %+v, want the live ConfigMap's", eps)
	}
	one(t, d, "", CodeUnreadable)
}

func TestOperatorWarningOnlyWithoutOwnError(t *testing.T) {
	ev := func(name, typ, reason string, sec int64) corev1.Event {
		return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: typ, Reason: reason,
			InvolvedObject:      corev1.ObjectReference{Kind: kcmv1.ClusterDeploymentKind, Namespace: ns, Name: "child-1"},
			ReportingController: "kof-clusterdeployment", LastTimestamp: metav1.Unix(sec, 0)}
	}
	s := snapshot([]kcmv1.ClusterDeployment{regional("regional-1", "us-east-2"), child("child-1", "us-east-2")},
		childMCS)
	s.Events = []corev1.Event{ev("b", corev1.EventTypeWarning, "InvalidAnnotation", 20), ev("a", corev1.EventTypeNormal,
		"Configured", 10)}
	s.sort()
	d := run(s)
	if f := one(t, d, "child-1", CodeOperatorWarning); !strings.Contains(f.Message, "InvalidAnnotation") {
		t.Errorf("%+v", f)
	}
	s.Events = []corev1.Event{ev("b", corev1.EventTypeWarning, "InvalidAnnotation", 10), ev("a", corev1.EventTypeNormal,
		"Configured", 20)}
	s.sort()
	if got := findings(run(s), "child-1", CodeOperatorWarning); len(got) != 0 {
		t.Errorf("a warning followed by a Normal event is reported: %v", got)
	}
}

func TestStatusNotReportedAndNoOperator(t *testing.T) {
	s := snapshot(nil, childMCS)
	s.OperatorEnv = nil
	d := run(s)
	one(t, d, "", CodeStatusNotReported)
	one(t, d, "", CodeOperatorMissing)
	d = Diagnose(Input{Live: s, Prediction: PredictionInfo{Error: "boom"}})
	if f := one(t, d, "", CodePredictionFailed); !strings.HasSuffix(f.Message, ": boom") {
		t.Errorf("%+v", f)
	}
}

func TestSubsetDiff(t *testing.T) {
	want := map[string]any{"a": "x", "list": []any{map[string]any{"n": int64(1)}}, "m": map[string]any{"k": true}}
	got := map[string]any{"a": "x", "list": []any{map[string]any{"n": int64(1), "defaulted": 3}},
		"m": map[string]any{"k": true}, "extra": 1}
	if d := subsetDiff("spec", want, got); len(d) != 0 {
		t.Errorf("defaults only: %v", d)
	}
	got["a"], got["list"] = "y", []any{}
	d := subsetDiff("spec", want, got)
	if len(d) != 2 || d[0] != `spec.a: live "y", predicted "x"` || d[1] != "spec.list: live 0 items, predicted 1 items" {
		t.Errorf("%q", d)
	}
}

func TestRuleSets(t *testing.T) {
	s := snapshot(nil)
	s.ConfigMaps = []corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "kof", Name: "kof-mothership-promxy-rules"}, Data: map[string]string{
			"kof-collectors.yaml": "groups:\n- name: kof-collectors\n  rules:\n  - alert: A\n    expr: up == 0\n",
			"__regional-1__kof-collectors.yaml": "groups:\n- name: __regional-1__kof-collectors\n  rules:\n" +
				"  - alert: A\n    expr: up == 1\n",
		}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.VMRulesConfigMap("regional-1"),
			Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}}, Data: map[string]string{
			"values": "vmrules:\n  groups:\n    kof-records:\n    - record: r:1\n      expr: sum(up)\n"}},
	}
	got := run(s).Rules
	if len(got) != 2 || got[0].Cluster != "" || got[1].Cluster != "regional-1" {
		t.Fatalf("rule sets %+v, want the defaults and regional-1", got)
	}
	want := []RuleGroup{
		{Name: "kof-collectors", Kind: "alert", Rules: []Rule{{Name: "A", Expr: "up == 1"}}},
		{Name: "kof-records", Kind: "record", Rules: []Rule{{Name: "r:1", Expr: "sum(up)"}}},
	}
	if diff := cmp.Diff(want, got[1].Groups); diff != "" {
		t.Errorf("regional-1 groups (-want +got):\n%s", diff)
	}
	if got[0].Groups[0].Rules[0].Expr != "up == 0" {
		t.Errorf("default group %+v", got[0].Groups)
	}
}

// A False Ready that summarises another False condition is reported once, by its cause; a False Ready alone is
// reported (regression: kof doctor on the demo listed PromxyConfigured and Ready of one PromxyServerGroup, both
// NoPromxyPods, as two errors).
func TestObjectNotReadyReportsTheCauseOnce(t *testing.T) {
	cause := Condition{Type: "PromxyConfigured", Status: "False", Reason: "ReloadFailed", Message: "reload refused"}
	ready := Condition{Type: "Ready", Status: "False", Reason: "ReloadFailed", Message: "reload refused"}
	for _, tt := range []struct {
		name  string
		conds []Condition
		want  []string
	}{
		{"ready summarises a cause", []Condition{cause, ready}, []string{"status.conditions[PromxyConfigured]"}},
		{"ready alone", []Condition{{Type: "Ready", Status: "True"}, ready}, []string{"status.conditions[Ready]"}},
		{"all true", []Condition{{Type: "PromxyConfigured", Status: "True"}, {Type: "Ready", Status: "True"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{Dir: "regional-1"}
			o := OperatorObject{Kind: "PromxyServerGroup", Namespace: ns, Name: "psg", Live: true, Conditions: tt.conds}
			(&builder{}).objectFindings(c, o, false)
			var got []string
			for _, f := range c.Findings {
				if f.Code != CodeObjectNotReady {
					t.Errorf("unexpected finding %+v", f)
				}
				got = append(got, f.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings' fields (-want +got):\n%s", diff)
			}
		})
	}
}

// No Running promxy pod is the management cluster's promxy Deployment's problem, not the regionals': however many
// PromxyServerGroups wait for it, one PromxyNotRunning warning on the management cluster, none on the regionals.
func TestPromxyNotRunningIsOneWarningOnTheManagementCluster(t *testing.T) {
	mgmt, r1, r2 := &Cluster{Name: "mgmt", Dir: "mgmt"}, &Cluster{Dir: "regional-1"}, &Cluster{Dir: "regional-2"}
	b := &builder{d: &Diagnosis{Clusters: []*Cluster{mgmt, r1, r2}}}
	conds := []Condition{
		{Type: "PromxyConfigured", Status: "False", Reason: "NoPromxyPods", Message: "no Running promxy pod to reload"},
		{Type: "Ready", Status: "False", Reason: "NoPromxyPods", Message: "no Running promxy pod to reload"},
	}
	for i, c := range []*Cluster{r1, r2} {
		b.objectFindings(c, OperatorObject{Kind: "PromxyServerGroup", Namespace: ns, Name: fmt.Sprint("psg-", i),
			Live: true, Conditions: conds}, false)
	}
	if len(r1.Findings)+len(r2.Findings) != 0 {
		t.Errorf("regional findings %+v %+v, want none", r1.Findings, r2.Findings)
	}
	if len(mgmt.Findings) != 1 || mgmt.Findings[0].Code != CodePromxyNotRunning ||
		mgmt.Findings[0].Severity != SeverityWarning || mgmt.Findings[0].Cluster != "mgmt" {
		t.Errorf("management findings %+v, want one PromxyNotRunning warning", mgmt.Findings)
	}
}

// st returns a ServiceTemplate of KCM's system namespace with labels and the status KCM wrote for generation 1.
func st(name string, labels map[string]string, valid bool, validationError string) kcmv1.ServiceTemplate {
	t := kcmv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Generation: 1}}
	t.Status.ObservedGeneration, t.Status.Valid, t.Status.ValidationError = 1, valid, validationError
	return t
}

// KCM's invalid verdict on a KOF ServiceTemplate, or on one a MultiClusterService uses, is an error naming KCM's
// message and the users; valid templates, templates not judged for their generation and other projects' unused
// templates are not reported.
func TestServiceTemplateInvalid(t *testing.T) {
	kof := map[string]string{partOfLabel: partOfKOF}
	s := snapshot(nil, mcs("kof-child-cluster", map[string]string{"a": "b"}, "kof-collectors", "cert-manager"))
	notServed := "no 'kof-collectors' chart with version matching '9.9.9' found"
	stale := st("kof-operators-2-0-0", kof, false, "old error")
	stale.Generation = 2
	s.ServiceTemplates = []kcmv1.ServiceTemplate{
		st("kof-collectors-2-0-0", nil, false, notServed),
		st("cert-manager-2-0-0", nil, true, ""),
		st("kof-storage-2-0-0", kof, false, "failed to download chart"),
		stale,
		st("someone-elses-1-0-0", nil, false, "not ours"),
	}
	got := findings(run(s), "", CodeServiceTemplateInvalid)
	var objects []string
	for _, f := range got {
		objects = append(objects, f.Object)
		if f.Severity != SeverityError {
			t.Errorf("%s: severity %s, want error", f.Object, f.Severity)
		}
	}
	want := []string{"ServiceTemplate kcm-system/kof-collectors-2-0-0", "ServiceTemplate kcm-system/kof-storage-2-0-0"}
	if d := cmp.Diff(want, objects, cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
		t.Fatalf("reported templates (-want +got):\n%s", d)
	}
	for _, f := range got {
		if f.Object == want[0] && (!strings.Contains(f.Message, notServed) ||
			!strings.Contains(f.Message, "kof-child-cluster")) {
			t.Errorf("message %q: want KCM's error and the MultiClusterService using the template", f.Message)
		}
	}
}
