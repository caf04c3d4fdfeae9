package rules

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/outputs"
	merge "kof.dev/kof/operator/rules"
)

// oddExpr has irregular spacing and a line break, so that any re-formatting shows.
const oddExpr = "sum by (cluster) (rate(otelcol_exporter_send_failed_metric_points_total[5m]))   >  0\n  # reviewed"

func create(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func getCM(t *testing.T, ctx context.Context, ns, name string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		t.Fatalf("get ConfigMap %s/%s: %v", ns, name, err)
	}
	return &cm
}

func TestRulesFlow(t *testing.T) {
	ctx := context.Background()
	const kof, kcm, rulesCM = "rules-kof", "rules-kcm", "kof-mothership-promxy-rules"
	for _, ns := range []string{kof, kcm} {
		create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	d := monitoringv1.Duration("5m")
	create(t, ctx, &monitoringv1.PrometheusRule{
		ObjectMeta: metav1.ObjectMeta{Namespace: kof, Name: "kof-mothership-default-rules"},
		Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{
			{Name: "kof-collectors", Rules: []monitoringv1.Rule{
				{Alert: "KOFCollectorExportFailing", Expr: intstr.FromString(oddExpr), For: &d,
					Labels: map[string]string{"severity": "warning"}},
			}},
			{Name: "kof-records", Rules: []monitoringv1.Rule{
				{Record: "kof:collectors_up:sum", Expr: intstr.FromString("sum by (cluster) (up)")},
			}},
		}},
	})
	create(t, ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kcm, Name: "kof-r1", Labels: map[string]string{
			kofv1.ClusterRoleLabel: kofv1.RoleRegional, kofv1.GeneratedLabel: kofv1.TrueValue}},
		Data: map[string]string{"regional_cluster_name": "r1", "regional_cluster_namespace": kcm},
	})
	alerts := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kcm, Name: "r1-alert-rules", Labels: map[string]string{kofv1.AlertRulesClusterLabel: "r1"}},
		Data:       map[string]string{"kof-collectors": "KOFCollectorExportFailing:\n  for: 10m\n"},
	}
	create(t, ctx, alerts)
	recorder := events.NewFakeRecorder(100)
	r := &Reconciler{Client: env.Client, Recorder: recorder, Namespace: kof, RulesConfigMap: rulesCM}
	reconcileOnce := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, reconcile.Request{}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	reconcileOnce()

	// A rule patch that sets only `for: 10m` keeps the original expr string.
	promxyCM := getCM(t, ctx, kof, rulesCM)
	var file struct{ Groups []merge.Group }
	if err := yaml.Unmarshal([]byte(promxyCM.Data["__r1__kof-collectors.yaml"]), &file); err != nil {
		t.Fatalf("cluster rules file: %v\n%v", err, promxyCM.Data)
	}
	if len(file.Groups) != 1 || len(file.Groups[0].Rules) != 1 {
		t.Fatalf("cluster rules file groups = %+v, want one group with one rule", file.Groups)
	}
	got := file.Groups[0].Rules[0]
	if got.Expr != oddExpr || got.For != "10m" || got.Labels["severity"] != "warning" {
		t.Errorf("patched rule = %+v, want expr unchanged, for 10m, labels kept", got)
	}
	if !strings.Contains(promxyCM.Data["kof-collectors.yaml"], "for: 5m") {
		t.Errorf("default file = %q, want the default for: 5m", promxyCM.Data["kof-collectors.yaml"])
	}
	vm := getCM(t, ctx, kcm, "kof-record-vmrules-r1")
	if !cmp.Equal(vm.Labels, vmRulesLabels("r1")) || !strings.Contains(vm.Data[VMRulesValuesKey], "record: kof:collectors_up:sum") {
		t.Errorf("vmrules ConfigMap = %v %q", vm.Labels, vm.Data[VMRulesValuesKey])
	}

	// A resync writes nothing.
	versions := func() []string {
		return []string{getCM(t, ctx, kof, rulesCM).ResourceVersion, getCM(t, ctx, kcm, "kof-record-vmrules-r1").ResourceVersion}
	}
	before := versions()
	reconcileOnce()
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("resync changed resourceVersions (-before +after):\n%s", diff)
	}

	// Bad YAML in one input: one Warning event on it (RulesMerged False), outputs unchanged, no repeated event on
	// resync; fixed again: one Normal event (RulesMerged True) and the outputs back to what they were.
	good := alerts.Data
	alerts.Data = map[string]string{"kof-collectors": "KOFCollectorExportFailing: [unclosed"}
	if err := env.Client.Update(ctx, alerts); err != nil {
		t.Fatal(err)
	}
	reconcileOnce()
	reconcileOnce()
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("bad input changed outputs (-before +after):\n%s", diff)
	}
	if n := len(recorder.Events); n != 1 {
		t.Fatalf("events = %d, want exactly 1", n)
	}
	if e := <-recorder.Events; !strings.HasPrefix(e, corev1.EventTypeWarning) || !strings.Contains(e, `data["kof-collectors"]`) {
		t.Errorf("event = %q, want a Warning naming the data key", e)
	}
	alerts.Data = good
	if err := env.Client.Update(ctx, alerts); err != nil {
		t.Fatal(err)
	}
	reconcileOnce()
	reconcileOnce()
	if n := len(recorder.Events); n != 1 {
		t.Fatalf("events after the fix = %d, want exactly 1", n)
	}
	if e := <-recorder.Events; !strings.HasPrefix(e, corev1.EventTypeNormal+" "+kofv1.ReasonSucceeded) {
		t.Errorf("event after the fix = %q, want Normal %s (RulesMerged True)", e, kofv1.ReasonSucceeded)
	}
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("fixed input changed outputs (-before +after):\n%s", diff)
	}

	// A record patch for r1 reaches its vmrules values.
	create(t, ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kcm, Name: "r1-record-rules", Labels: map[string]string{kofv1.RecordRulesClusterLabel: "r1"}},
		Data:       map[string]string{"kof-records": "kof:collectors_up:sum:\n  expr: count by (cluster) (up)\n"},
	})
	reconcileOnce()
	if v := getCM(t, ctx, kcm, "kof-record-vmrules-r1").Data[VMRulesValuesKey]; !strings.Contains(v, "count by (cluster) (up)") {
		t.Errorf("vmrules values = %q, want the patched expr", v)
	}

	// A cluster that stops being regional loses its vmrules ConfigMap.
	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcm, Name: "kof-r1"}}); err != nil {
		t.Fatal(err)
	}
	reconcileOnce()
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: kcm, Name: "kof-record-vmrules-r1"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("vmrules ConfigMap after the regional went away: err = %v, want NotFound", err)
	}
}

// Whichever controller creates the vmrules ConfigMap first, it carries both operator labels: here the regional
// controller creates it (TestRulesFlow covers the rules controller creating it, where
// `k0rdent.mirantis.com/kof-generated` was missing and kof doctor reported the live ConfigMap differing from the
// prediction).
func TestVMRulesKeepOperatorLabels(t *testing.T) {
	ctx := context.Background()
	const kof, kcm = "labels-kof", "labels-kcm"
	for _, ns := range []string{kof, kcm} {
		create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	create(t, ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kcm, Name: "kof-r2", Labels: map[string]string{
			kofv1.ClusterRoleLabel: kofv1.RoleRegional, kofv1.GeneratedLabel: kofv1.TrueValue}},
		Data: map[string]string{"regional_cluster_name": "r2", "regional_cluster_namespace": kcm},
	})
	// As the regional controller creates it before the rules controller runs.
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kcm,
		Name: "kof-record-vmrules-r2", Labels: outputs.Labels()}, Data: map[string]string{VMRulesValuesKey: "vmrules:\n  groups: {}\n"}},
		client.FieldOwner(apply.FieldManager)); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: env.Client, Recorder: events.NewFakeRecorder(10), Namespace: kof,
		RulesConfigMap: "kof-mothership-promxy-rules"}
	if _, err := r.Reconcile(ctx, reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(vmRulesLabels("r2"), getCM(t, ctx, kcm, "kof-record-vmrules-r2").Labels); diff != "" {
		t.Errorf("vmrules ConfigMap labels (-want +got):\n%s", diff)
	}
}

// vmRulesLabels returns the labels of cluster's vmrules ConfigMap: both operator labels and the cluster's name.
func vmRulesLabels(cluster string) map[string]string {
	l := outputs.Labels()
	l[kofv1.VMRulesClusterLabel] = cluster
	return l
}
