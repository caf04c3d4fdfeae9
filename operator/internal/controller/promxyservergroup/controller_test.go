package promxyservergroup

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/promxy"
)

// promxyServer is a stand-in promxy on loopback that counts reload requests.
type promxyServer struct {
	server  *httptest.Server
	reloads atomic.Int32
	status  atomic.Int32
}

func newPromxyServer(t *testing.T) *promxyServer {
	p := &promxyServer{}
	p.status.Store(http.StatusOK)
	p.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.URL.Path == ReloadPath {
			p.reloads.Add(1)
		}
		w.WriteHeader(int(p.status.Load()))
	}))
	t.Cleanup(p.server.Close)
	return p
}

func (p *promxyServer) port(t *testing.T) int {
	_, port, err := net.SplitHostPort(strings.TrimPrefix(p.server.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fixture is one isolated set of namespaces for a test.
type fixture struct {
	ctx                context.Context
	promxyNS, ns1, ns2 string
	secret             string
	server             *promxyServer
	recorder           *events.FakeRecorder
	r                  *Reconciler
}

func create(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := k8sClient.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func newFixture(t *testing.T, prefix string) *fixture {
	ctx := context.Background()
	f := &fixture{ctx: ctx, promxyNS: prefix + "-kof", ns1: prefix + "-ns1", ns2: prefix + "-ns2", secret: prefix + "-promxy-config"}
	for _, ns := range []string{f.promxyNS, f.ns1, f.ns2} {
		create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	f.server = newPromxyServer(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.promxyNS, Name: "promxy-0", Labels: map[string]string{"app": "promxy"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "promxy", Image: "promxy"}}},
	}
	create(t, ctx, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"}
	if err := k8sClient.Status().Update(ctx, pod); err != nil {
		t.Fatalf("set pod status: %v", err)
	}
	// A pod that is not Running must not be asked to reload (its IP points nowhere).
	pending := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.promxyNS, Name: "promxy-1", Labels: map[string]string{"app": "promxy"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "promxy", Image: "promxy"}}},
	}
	create(t, ctx, pending)
	pending.Status = corev1.PodStatus{Phase: corev1.PodPending, PodIP: "192.0.2.1"}
	if err := k8sClient.Status().Update(ctx, pending); err != nil {
		t.Fatalf("set pod status: %v", err)
	}
	f.recorder = events.NewFakeRecorder(100)
	f.r = &Reconciler{
		Client: k8sClient, Recorder: f.recorder, Namespace: f.promxyNS,
		PodSelector: labels.SelectorFromSet(labels.Set{"app": "promxy"}),
		Options:     promxy.Options{AlertmanagerURL: "http://alertmanager:9093"},
		HTTPClient:  f.server.server.Client(), ReloadPort: f.server.port(t),
	}
	return f
}

func (f *fixture) group(t *testing.T, ns, name, cluster string, auth kofv1.BasicAuth) *kofv1.PromxyServerGroup {
	g := &kofv1.PromxyServerGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{kofv1.SecretNameLabel: f.secret}},
		Spec: kofv1.PromxyServerGroupSpec{
			ClusterName: cluster, Targets: []string{"vmauth." + cluster + ".example.com:443"},
			PathPrefix: "/vm/select/0/prometheus", Scheme: "https",
			HTTPClient: kofv1.HTTPClientConfig{DialTimeout: "5s", BasicAuth: auth},
		},
	}
	create(t, f.ctx, g)
	return g
}

func (f *fixture) reconcile(t *testing.T) error {
	t.Helper()
	_, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: f.promxyNS, Name: f.secret}})
	return err
}

func (f *fixture) config(t *testing.T) (promxy.Config, *corev1.Secret) {
	t.Helper()
	var s corev1.Secret
	if err := k8sClient.Get(f.ctx, types.NamespacedName{Namespace: f.promxyNS, Name: f.secret}, &s); err != nil {
		t.Fatalf("get config Secret: %v", err)
	}
	var cfg promxy.Config
	if err := yaml.UnmarshalStrict(s.Data[promxy.ConfigKey], &cfg); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	return cfg, &s
}

func getGroup(t *testing.T, ctx context.Context, g *kofv1.PromxyServerGroup) *kofv1.PromxyServerGroup {
	t.Helper()
	var out kofv1.PromxyServerGroup
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(g), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func credentials(t *testing.T, ctx context.Context, ns, name, password string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string][]byte{"username": []byte("admin-r1"), "password": []byte(password)},
	}
	create(t, ctx, s)
	return s
}

func TestTwoGroupsOneSecretStableOrderNoRewrite(t *testing.T) {
	f := newFixture(t, "order")
	creds := credentials(t, f.ctx, f.ns1, "kof-vmuser-creds-admin-r1", "s3cret-password-1")
	// Created in reverse order: the Secret must list ns1 before ns2 anyway.
	g2 := f.group(t, f.ns2, "promxy-server-group-b", "r2", kofv1.BasicAuth{})
	g1 := f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{
		CredentialsSecretName: creds.Name, UsernameKey: "username", PasswordKey: "password"})

	if err := f.reconcile(t); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	cfg, secret := f.config(t)
	if len(cfg.Promxy.ServerGroups) != 2 {
		t.Fatalf("server groups = %d, want 2", len(cfg.Promxy.ServerGroups))
	}
	var order []string
	for _, sg := range cfg.Promxy.ServerGroups {
		order = append(order, sg.Labels[promxy.ClusterNamespaceLabel]+"/"+sg.Labels[promxy.ClusterLabel])
	}
	if diff := cmp.Diff([]string{f.ns1 + "/r1", f.ns2 + "/r2"}, order); diff != "" {
		t.Errorf("server group order (-want +got):\n%s", diff)
	}
	want := &promxy.BasicAuth{Username: "admin-r1", Password: "s3cret-password-1"}
	if diff := cmp.Diff(want, cfg.Promxy.ServerGroups[0].HTTPClient.BasicAuth); diff != "" {
		t.Errorf("basic auth (-want +got):\n%s", diff)
	}
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("Secret type = %q, want Opaque", secret.Type)
	}
	if got := f.server.reloads.Load(); got != 1 {
		t.Errorf("reloads after first write = %d, want 1 (one Running pod)", got)
	}
	for _, g := range []*kofv1.PromxyServerGroup{g1, g2} {
		got := getGroup(t, f.ctx, g)
		ready := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || got.Status.ObservedGeneration != got.Generation {
			t.Errorf("%s status = %+v, want Ready True at generation %d", g.Name, got.Status, got.Generation)
		}
	}

	// Unchanged input: no write (resourceVersions unchanged) and no reload.
	before := map[string]string{"secret": secret.ResourceVersion,
		"g1": getGroup(t, f.ctx, g1).ResourceVersion, "g2": getGroup(t, f.ctx, g2).ResourceVersion}
	if err := f.reconcile(t); err != nil {
		t.Fatalf("second reconcile: %v", err)
	}
	_, secret = f.config(t)
	after := map[string]string{"secret": secret.ResourceVersion,
		"g1": getGroup(t, f.ctx, g1).ResourceVersion, "g2": getGroup(t, f.ctx, g2).ResourceVersion}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("resync wrote objects (-before +after):\n%s", diff)
	}
	if got := f.server.reloads.Load(); got != 1 {
		t.Errorf("reloads after unchanged resync = %d, want still 1", got)
	}

	// A new password in the referenced Secret changes the config: one write, one reload.
	creds.Data["password"] = []byte("s3cret-password-2")
	if err := k8sClient.Update(f.ctx, creds); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t); err != nil {
		t.Fatalf("third reconcile: %v", err)
	}
	cfg, _ = f.config(t)
	if got := cfg.Promxy.ServerGroups[0].HTTPClient.BasicAuth.Password; got != "s3cret-password-2" {
		t.Errorf("password = %q, want the new one", got)
	}
	if got := f.server.reloads.Load(); got != 2 {
		t.Errorf("reloads after credential change = %d, want 2", got)
	}
	if n := len(f.recorder.Events); n != 2 {
		t.Errorf("events = %d, want 2 (one Ready transition per group, none on resyncs)", n)
	}
}

func TestMissingCredentialsLeavesGroupOut(t *testing.T) {
	f := newFixture(t, "missing")
	good := f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{})
	bad := f.group(t, f.ns2, "promxy-server-group-b", "r2", kofv1.BasicAuth{
		CredentialsSecretName: "absent", UsernameKey: "username", PasswordKey: "password"})
	if err := f.reconcile(t); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	cfg, _ := f.config(t)
	if len(cfg.Promxy.ServerGroups) != 1 || cfg.Promxy.ServerGroups[0].Labels[promxy.ClusterLabel] != "r1" {
		t.Errorf("server groups = %+v, want only r1", cfg.Promxy.ServerGroups)
	}
	got := getGroup(t, f.ctx, bad)
	c := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionPromxyConfigured)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != kofv1.ReasonNotFound ||
		!strings.Contains(c.Message, "credentials_secret_name") {
		t.Errorf("condition = %+v, want False/NotFound naming credentials_secret_name", c)
	}
	if ready := meta.FindStatusCondition(getGroup(t, f.ctx, good).Status.Conditions, kofv1.ConditionReady); ready == nil || ready.Status != metav1.ConditionTrue {
		t.Errorf("good group Ready = %+v, want True", ready)
	}
	select {
	case e := <-f.recorder.Events:
		if !strings.Contains(e, "Warning") && !strings.Contains(e, "Normal") {
			t.Errorf("unexpected event %q", e)
		}
	default:
		t.Error("no event recorded")
	}
}

func TestReloadFailureIsRetried(t *testing.T) {
	f := newFixture(t, "reload")
	g := f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{})
	f.server.status.Store(http.StatusInternalServerError)
	err := f.reconcile(t)
	if err == nil || !strings.Contains(err.Error(), "reload promxy pod promxy-0") {
		t.Fatalf("reconcile error = %v, want a reload failure naming the pod", err)
	}
	c := meta.FindStatusCondition(getGroup(t, f.ctx, g).Status.Conditions, kofv1.ConditionReady)
	if c == nil || c.Reason != kofv1.ReasonReloadFailed {
		t.Errorf("Ready = %+v, want reason ReloadFailed", c)
	}
	// The config is already written; the retry must still reload although the Secret is unchanged.
	f.server.status.Store(http.StatusOK)
	if err := f.reconcile(t); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := f.server.reloads.Load(); got != 2 {
		t.Errorf("reload requests = %d, want 2 (failed one and the retry)", got)
	}
	c = meta.FindStatusCondition(getGroup(t, f.ctx, g).Status.Conditions, kofv1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready after retry = %+v, want True", c)
	}
}

func TestFollowUpReloadAfterSettleDelay(t *testing.T) {
	f := newFixture(t, "settle")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.r.Now = func() time.Time { return clock }
	f.r.SettleDelay = time.Minute
	f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{})
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: f.promxyNS, Name: f.secret}}

	res, err := f.r.Reconcile(f.ctx, req)
	if err != nil || res.RequeueAfter != time.Minute || f.server.reloads.Load() != 1 {
		t.Fatalf("after change: result %+v, err %v, reloads %d; want requeue after 1m and 1 reload", res, err, f.server.reloads.Load())
	}
	clock = clock.Add(20 * time.Second)
	res, err = f.r.Reconcile(f.ctx, req)
	if err != nil || res.RequeueAfter != 40*time.Second || f.server.reloads.Load() != 1 {
		t.Fatalf("before the delay: result %+v, err %v, reloads %d; want requeue after 40s and no reload", res, err, f.server.reloads.Load())
	}
	clock = clock.Add(40 * time.Second)
	res, err = f.r.Reconcile(f.ctx, req)
	if err != nil || res.RequeueAfter != 0 || f.server.reloads.Load() != 2 {
		t.Fatalf("at the delay: result %+v, err %v, reloads %d; want the follow-up reload and no requeue", res, err, f.server.reloads.Load())
	}
	clock = clock.Add(time.Hour)
	if _, err := f.r.Reconcile(f.ctx, req); err != nil || f.server.reloads.Load() != 2 {
		t.Fatalf("settled resync: err %v, reloads %d; want no more reloads", err, f.server.reloads.Load())
	}
}

func TestInvalidSecretNameLabel(t *testing.T) {
	f := newFixture(t, "badlabel")
	f.secret = "Not_A_Secret_Name"
	g := f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{})
	if err := f.reconcile(t); err != nil {
		t.Fatalf("reconcile: %v, want no error (invalid input is not retried)", err)
	}
	c := meta.FindStatusCondition(getGroup(t, f.ctx, g).Status.Conditions, kofv1.ConditionReady)
	if c == nil || c.Reason != kofv1.ReasonInvalidSpec || !strings.Contains(c.Message, kofv1.SecretNameLabel) {
		t.Errorf("Ready = %+v, want InvalidSpec naming the label", c)
	}
	if n := f.server.reloads.Load(); n != 0 {
		t.Errorf("reloads = %d, want 0", n)
	}
}

// TestNoPromxyPodsIsReported is correctness class 6: with no reloadable promxy pod (none match, or only a Pending
// one) the reconcile is no success: the groups get a False condition naming the selector, and the reload is
// retried until a pod runs.
func TestNoPromxyPodsIsReported(t *testing.T) {
	f := newFixture(t, "nopods")
	g := f.group(t, f.ns1, "promxy-server-group-a", "r1", kofv1.BasicAuth{})
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: f.promxyNS, Name: f.secret}}
	for _, sel := range []string{"app=absent", "app=pending-only"} {
		if sel == "app=pending-only" {
			pending := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.promxyNS, Name: "promxy-pending", Labels: map[string]string{"app": "pending-only"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "promxy", Image: "promxy"}}},
			}
			create(t, f.ctx, pending)
		}
		s, err := labels.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		f.r.PodSelector = s
		res, err := f.r.Reconcile(f.ctx, req)
		if err != nil || res.RequeueAfter != NoPodsRetry {
			t.Fatalf("%s: result %+v, err %v; want a retry after %s", sel, res, err, NoPodsRetry)
		}
		c := meta.FindStatusCondition(getGroup(t, f.ctx, g).Status.Conditions, kofv1.ConditionPromxyConfigured)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != kofv1.ReasonNoPromxyPods || !strings.Contains(c.Message, sel) {
			t.Errorf("%s: condition %+v, want False NoPromxyPods naming the selector", sel, c)
		}
	}
	if !strings.Contains(meta.FindStatusCondition(getGroup(t, f.ctx, g).Status.Conditions, kofv1.ConditionReady).Message,
		"promxy-pending Pending") {
		t.Error("the message does not name the Pending pod")
	}
	if got := f.server.reloads.Load(); got != 0 {
		t.Fatalf("reloads = %d, want 0", got)
	}
	// The Running promxy pod is selected again: the unchanged config is reloaded now.
	f.r.PodSelector = labels.SelectorFromSet(labels.Set{"app": "promxy"})
	if _, err := f.r.Reconcile(f.ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := f.server.reloads.Load(); got != 1 {
		t.Errorf("reloads after a pod runs = %d, want 1", got)
	}
	if c := meta.FindStatusCondition(getGroup(t, f.ctx, g).Status.Conditions, kofv1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready after a pod runs = %+v, want True", c)
	}
}
