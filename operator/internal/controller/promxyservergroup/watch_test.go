package promxyservergroup

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/promxy"
)

// TestWatches runs the controller in a manager whose cache holds only Secrets labelled managed-by kof-operator, as
// kof-operator's main does: group creation, a credential change and a group deletion each reach the config Secret
// (made beforehand by the chart, without that label) with no reconcile called by hand.
func TestWatches(t *testing.T) {
	f := newFixture(t, "watch")
	create(t, f.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.promxyNS, Name: f.secret, Labels: map[string]string{kofv1.ManagedByLabel: "Helm"}},
		Data:       map[string][]byte{promxy.ConfigKey: []byte("{}")},
	})
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Cache:      cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: ours}},
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.r.Client, f.r.APIReader = mgr.GetClient(), mgr.GetAPIReader()
	if err := f.r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	waitFor := func(what string, ok func(promxy.Config) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var s corev1.Secret
			if err := k8sClient.Get(f.ctx, ctrlKey(f), &s); err == nil {
				var cfg promxy.Config
				if yamlErr := unmarshal(s.Data[promxy.ConfigKey], &cfg); yamlErr == nil && ok(cfg) {
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s", what)
	}

	creds := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns1, Name: "kof-vmuser-creds-admin-r1", Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}},
		Data:       map[string][]byte{"username": []byte("admin-r1"), "password": []byte("first-password-123")},
	}
	create(t, f.ctx, creds)
	f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{
		CredentialsSecretName: creds.Name, UsernameKey: "username", PasswordKey: "password"})
	g2 := f.group(t, f.ns2, "promxy-server-group-b", "r2", kofv1.BasicAuth{})
	waitFor("two server groups", func(c promxy.Config) bool { return len(c.Promxy.ServerGroups) == 2 })

	creds.Data["password"] = []byte("second-password-456")
	if err := k8sClient.Update(f.ctx, creds); err != nil {
		t.Fatal(err)
	}
	waitFor("the new password", func(c promxy.Config) bool {
		return len(c.Promxy.ServerGroups) == 2 && c.Promxy.ServerGroups[0].HTTPClient.BasicAuth.Password == "second-password-456"
	})

	if err := k8sClient.Delete(f.ctx, g2); err != nil {
		t.Fatal(err)
	}
	waitFor("the deleted group to leave", func(c promxy.Config) bool {
		return len(c.Promxy.ServerGroups) == 1 && c.Promxy.ServerGroups[0].Labels[promxy.ClusterLabel] == "r1"
	})

	// The chart's Secret stays outside the cache, yet a resync compares against it and writes nothing.
	var before corev1.Secret
	if err := k8sClient.Get(f.ctx, ctrlKey(f), &before); err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: ctrlKey(f)}); err != nil {
		t.Fatalf("resync: %v", err)
	}
	var after corev1.Secret
	if err := k8sClient.Get(f.ctx, ctrlKey(f), &after); err != nil {
		t.Fatal(err)
	}
	if before.ResourceVersion != after.ResourceVersion || after.Labels[kofv1.ManagedByLabel] != "Helm" {
		t.Errorf("resync: resourceVersion %s → %s, labels %v; want no write and the chart's label kept",
			before.ResourceVersion, after.ResourceVersion, after.Labels)
	}
}

// ctrlKey is the key of the fixture's config Secret.
func ctrlKey(f *fixture) types.NamespacedName {
	return types.NamespacedName{Namespace: f.promxyNS, Name: f.secret}
}

// unmarshal reads a promxy config strictly.
func unmarshal(data []byte, cfg *promxy.Config) error { return yaml.UnmarshalStrict(data, cfg) }
