package rules

import (
	"context"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// TestWatches runs the controller in a manager: a new PrometheusRule and a new rule ConfigMap reach the promxy
// rules ConfigMap, and a deleted output is recreated, with no reconcile called by hand.
func TestWatches(t *testing.T) {
	ctx := context.Background()
	const kof, rulesCM = "watch-kof", "watch-promxy-rules"
	create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kof}})
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Recorder: events.NewFakeRecorder(100), Namespace: kof, RulesConfigMap: rulesCM}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	waitFor := func(what string, ok func(map[string]string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var cm corev1.ConfigMap
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: kof, Name: rulesCM}, &cm); err == nil && ok(cm.Data) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s", what)
	}

	create(t, ctx, &monitoringv1.PrometheusRule{
		ObjectMeta: metav1.ObjectMeta{Namespace: kof, Name: "defaults"},
		Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{Name: "watch-group", Rules: []monitoringv1.Rule{
			{Alert: "WatchAlert", Expr: intstr.FromString("up == 0")},
		}}}},
	})
	waitFor("the default file", func(d map[string]string) bool { return strings.Contains(d["watch-group.yaml"], "WatchAlert") })

	create(t, ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: kof, Name: "watch-c1-alerts", Labels: map[string]string{kofv1.AlertRulesClusterLabel: "watch-c1"}},
		Data:       map[string]string{"watch-group": "WatchAlert:\n  for: 10m\n"},
	})
	waitFor("the cluster file", func(d map[string]string) bool {
		return strings.Contains(d["__watch-c1__watch-group.yaml"], "for: 10m")
	})

	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: kof, Name: rulesCM}}); err != nil {
		t.Fatal(err)
	}
	waitFor("the deleted output to come back", func(d map[string]string) bool {
		return strings.Contains(d["__watch-c1__watch-group.yaml"], "for: 10m")
	})
}
