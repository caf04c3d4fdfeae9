package vmstorageconnection

import (
	"context"
	"kof.dev/kof/operator/vmapi"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

const credsName = "kof-vmuser-creds-admin-r1-75bac0fcc3"

type fixture struct {
	ctx               context.Context
	clusterNS, connNS string
	recorder          *events.FakeRecorder
	r                 *Reconciler
}

func create(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func newFixture(t *testing.T, prefix string) *fixture {
	ctx := context.Background()
	f := &fixture{ctx: ctx, clusterNS: prefix + "-kof", connNS: prefix + "-kcm", recorder: events.NewFakeRecorder(100)}
	for _, ns := range []string{f.clusterNS, f.connNS} {
		create(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	f.r = &Reconciler{Client: env.Client, Recorder: f.recorder}
	// The chart's VLCluster: an arg and a mount of its own that the controller must keep.
	create(t, ctx, &vmapi.VLCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: "kof-logs"},
		Spec: vmapi.VLClusterSpec{VLSelect: &vmapi.SelectComponent{
			ExtraArgs: map[string]string{"search.maxQueryDuration": "30s"}, Secrets: []string{"tls-ca"},
		}},
	})
	create(t, ctx, &vmapi.VTCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: "kof-traces"}})
	create(t, ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.connNS, Name: credsName},
		Data:       map[string][]byte{"username": []byte("admin-r1"), "password": []byte("0123456789abcdef")},
	})
	return f
}

func (f *fixture) conn(t *testing.T, name, kind, cluster, addr string, secret bool) *kofv1.VMStorageConnection {
	c := &kofv1.VMStorageConnection{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.connNS, Name: name},
		Spec: kofv1.VMStorageConnectionSpec{
			ClusterRef:        kofv1.ClusterRef{Name: cluster, Namespace: f.clusterNS, Kind: kind},
			TargetStorageNode: kofv1.TargetStorageNode{Address: addr},
		},
	}
	if secret {
		c.Spec.TargetStorageNode.Secret = &kofv1.SecretKeys{Name: credsName, UsernameKey: "username", PasswordKey: "password"}
		c.Spec.TargetStorageNode.TLSConfig = &kofv1.StorageTLSConfig{Enabled: true}
	}
	create(t, f.ctx, c)
	return c
}

func (f *fixture) reconcile(t *testing.T, c *kofv1.VMStorageConnection) {
	t.Helper()
	if _, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)}); err != nil {
		t.Fatalf("reconcile %s: %v", c.Name, err)
	}
}

func (f *fixture) vlselect(t *testing.T) (*vmapi.VLCluster, *vmapi.SelectComponent) {
	t.Helper()
	var cl vmapi.VLCluster
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.clusterNS, Name: "kof-logs"}, &cl); err != nil {
		t.Fatal(err)
	}
	if cl.Spec.VLSelect == nil {
		t.Fatal("VLCluster has no vlselect")
	}
	return &cl, cl.Spec.VLSelect
}

func get[T client.Object](t *testing.T, ctx context.Context, obj T) T {
	t.Helper()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("get %s: %v", obj.GetName(), err)
	}
	return obj
}

func TestConnectionsResyncHelmResetAndFinalizer(t *testing.T) {
	f := newFixture(t, "flow")
	a := f.conn(t, "kof-logs-storage-connection-a", kofv1.KindVLCluster, "kof-logs", "vmauth.r1.example.com:443/vls", true)
	b := f.conn(t, "kof-logs-storage-connection-b", kofv1.KindVLCluster, "kof-logs", "vmauth-cluster:8427/vls", false)
	c := f.conn(t, "kof-traces-storage-connection-a", kofv1.KindVTCluster, "kof-traces", "vmauth-cluster:8427/vts", false)
	for _, conn := range []*kofv1.VMStorageConnection{a, b, c} {
		f.reconcile(t, conn)
	}

	_, sel := f.vlselect(t)
	wantArgs := map[string]string{
		"search.maxQueryDuration": "30s",
		ArgStorageNode:            "vmauth.r1.example.com:443/vls,vmauth-cluster:8427/vls",
		ArgUsernameFile:           "/etc/vm/secrets/" + credsName + "/username,",
		ArgPasswordFile:           "/etc/vm/secrets/" + credsName + "/password,",
		ArgTLS:                    "true,false",
		ArgTLSInsecureSkipVerify:  "false,false",
	}
	if diff := cmp.Diff(wantArgs, sel.ExtraArgs); diff != "" {
		t.Errorf("vlselect extraArgs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{credsName, "tls-ca"}, sel.Secrets); diff != "" {
		t.Errorf("vlselect secrets (-want +got):\n%s", diff)
	}
	var vt vmapi.VTCluster
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.clusterNS, Name: "kof-traces"}, &vt); err != nil {
		t.Fatal(err)
	}
	if vt.Spec.Select == nil || vt.Spec.Select.ExtraArgs[ArgStorageNode] != "vmauth-cluster:8427/vts" {
		t.Errorf("VTCluster select = %+v, want storageNode vmauth-cluster:8427/vts", vt.Spec.Select)
	}
	copied := get(t, f.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: credsName}})
	if string(copied.Data["password"]) != "0123456789abcdef" || copied.Annotations[kofv1.SourceSecretAnnotation] != f.connNS+"/"+credsName {
		t.Errorf("credentials copy = %v %v, want the source's data and annotation", copied.Annotations, copied.Data)
	}
	gotA := get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: a.ObjectMeta})
	if gotA.Labels[kofv1.StorageClusterNameLabel] != "kof-logs" || gotA.Labels[kofv1.StorageClusterKindLabel] != kofv1.KindVLCluster {
		t.Errorf("index labels = %v", gotA.Labels)
	}
	if !strings.Contains(strings.Join(gotA.Finalizers, ","), kofv1.VMStorageConnectionFinalizer) {
		t.Errorf("finalizers = %v, want %s", gotA.Finalizers, kofv1.VMStorageConnectionFinalizer)
	}
	ready := meta.FindStatusCondition(gotA.Status.Conditions, kofv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || gotA.Status.ObservedGeneration != gotA.Generation {
		t.Errorf("status = %+v, want Ready True at generation %d", gotA.Status, gotA.Generation)
	}

	// A resync writes nothing.
	objs := []client.Object{
		&vmapi.VLCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: "kof-logs"}},
		&vmapi.VTCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: "kof-traces"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: credsName}},
		&kofv1.VMStorageConnection{ObjectMeta: a.ObjectMeta}, &kofv1.VMStorageConnection{ObjectMeta: b.ObjectMeta},
		&kofv1.VMStorageConnection{ObjectMeta: c.ObjectMeta},
	}
	versions := func() []string {
		var out []string
		for _, o := range objs {
			out = append(out, get(t, f.ctx, o).GetResourceVersion())
		}
		return out
	}
	before := versions()
	eventsBefore := len(f.recorder.Events)
	for _, conn := range []*kofv1.VMStorageConnection{a, b, c} {
		f.reconcile(t, conn)
	}
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("resync changed resourceVersions (-before +after):\n%s", diff)
	}
	if n := len(f.recorder.Events); n != eventsBefore {
		t.Errorf("resync emitted %d events", n-eventsBefore)
	}

	// A Helm upgrade that resets the args (a plain update by another manager) is repaired.
	cl, _ := f.vlselect(t)
	cl.Spec.VLSelect.ExtraArgs = map[string]string{"search.maxQueryDuration": "30s"}
	if err := env.Client.Update(f.ctx, cl, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, b)
	if _, sel := f.vlselect(t); sel.ExtraArgs[ArgStorageNode] != wantArgs[ArgStorageNode] {
		t.Errorf("after reset, storageNode = %q, want %q", sel.ExtraArgs[ArgStorageNode], wantArgs[ArgStorageNode])
	}

	// Deleting a connection removes its node, its mount and the unused copy, then the finalizer.
	if err := env.Client.Delete(f.ctx, a); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, a)
	_, sel = f.vlselect(t)
	wantAfter := map[string]string{"search.maxQueryDuration": "30s", ArgStorageNode: "vmauth-cluster:8427/vls"}
	if diff := cmp.Diff(wantAfter, sel.ExtraArgs); diff != "" {
		t.Errorf("extraArgs after delete (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tls-ca"}, sel.Secrets); diff != "" {
		t.Errorf("secrets after delete (-want +got):\n%s", diff)
	}
	err := env.Client.Get(f.ctx, client.ObjectKeyFromObject(a), &kofv1.VMStorageConnection{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("connection after finalize: err = %v, want NotFound", err)
	}
	err = env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.clusterNS, Name: credsName}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("credentials copy after last user deleted: err = %v, want NotFound", err)
	}
}

func TestMissingClusterAndSecret(t *testing.T) {
	f := newFixture(t, "missing")
	noCluster := f.conn(t, "no-cluster", kofv1.KindVLCluster, "absent", "n:1", false)
	f.reconcile(t, noCluster)
	got := get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: noCluster.ObjectMeta})
	c := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionStorageConnected)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != kofv1.ReasonNotFound || !strings.Contains(c.Message, "spec.cluster_ref") {
		t.Errorf("condition = %+v, want False/NotFound naming spec.cluster_ref", c)
	}

	long := f.conn(t, "long-name", kofv1.KindVLCluster, strings.Repeat("x", 70), "n:3", false)
	f.reconcile(t, long)
	gotLong := get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: long.ObjectMeta})
	if _, ok := gotLong.Labels[kofv1.StorageClusterNameLabel]; ok || gotLong.Labels[kofv1.StorageClusterKindLabel] != kofv1.KindVLCluster {
		t.Errorf("labels for a 70-character cluster name = %v, want only the kind label", gotLong.Labels)
	}

	noSecret := &kofv1.VMStorageConnection{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.connNS, Name: "no-secret"},
		Spec: kofv1.VMStorageConnectionSpec{
			ClusterRef: kofv1.ClusterRef{Name: "kof-logs", Namespace: f.clusterNS, Kind: kofv1.KindVLCluster},
			TargetStorageNode: kofv1.TargetStorageNode{Address: "n:2",
				Secret: &kofv1.SecretKeys{Name: "absent", UsernameKey: "u", PasswordKey: "p"}},
		},
	}
	create(t, f.ctx, noSecret)
	f.reconcile(t, noSecret)
	got = get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: noSecret.ObjectMeta})
	c = meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.target_storage_node.secret.name") {
		t.Errorf("condition = %+v, want False naming spec.target_storage_node.secret.name", c)
	}
	if _, sel := f.vlselect(t); sel.ExtraArgs[ArgStorageNode] != "" {
		t.Errorf("storageNode = %q, want unset while the only connection lacks its Secret", sel.ExtraArgs[ArgStorageNode])
	}
	select {
	case e := <-f.recorder.Events:
		if !strings.HasPrefix(e, corev1.EventTypeWarning) {
			t.Errorf("event %q, want a Warning", e)
		}
	default:
		t.Error("no event for the failure")
	}
}

// TestWatchRepairsReset runs the controller in a manager and checks that the cluster watch repairs args another
// writer removed, with no reconcile called by hand.
func TestWatchRepairsReset(t *testing.T) {
	f := newFixture(t, "watch")
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Recorder: f.recorder}
	if err := r.SetupWithManager(mgr); err != nil {
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
	f.conn(t, "kof-logs-storage-connection-w", kofv1.KindVLCluster, "kof-logs", "vmauth-cluster:8427/vls", false)
	waitFor := func(what string, ok func(*vmapi.SelectComponent) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var cl vmapi.VLCluster
			if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.clusterNS, Name: "kof-logs"}, &cl); err == nil &&
				cl.Spec.VLSelect != nil && ok(cl.Spec.VLSelect) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s", what)
	}
	hasNode := func(s *vmapi.SelectComponent) bool { return s.ExtraArgs[ArgStorageNode] == "vmauth-cluster:8427/vls" }
	waitFor("the storage node", hasNode)
	cl, _ := f.vlselect(t)
	cl.Spec.VLSelect.ExtraArgs = map[string]string{"search.maxQueryDuration": "30s"}
	if err := env.Client.Update(f.ctx, cl, client.FieldOwner("helm")); err != nil {
		t.Fatal(err)
	}
	waitFor("the storage node to come back after a reset", hasNode)
}

func TestMovedConnectionLeavesPreviousCluster(t *testing.T) {
	f := newFixture(t, "moved")
	create(t, f.ctx, &vmapi.VLCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: "kof-logs-audit"}})
	c := f.conn(t, "kof-audit-logs-storage-connection-a", kofv1.KindVLCluster, "kof-logs", "vmauth-cluster:8427/vlas", false)
	f.reconcile(t, c)
	if _, sel := f.vlselect(t); sel.ExtraArgs[ArgStorageNode] != "vmauth-cluster:8427/vlas" {
		t.Fatalf("storageNode = %q before the move", sel.ExtraArgs[ArgStorageNode])
	}
	c = get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: c.ObjectMeta})
	c.Spec.ClusterRef.Name = "kof-logs-audit"
	if err := env.Client.Update(f.ctx, c); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, c)
	if _, sel := f.vlselect(t); sel.ExtraArgs[ArgStorageNode] != "" {
		t.Errorf("old cluster storageNode = %q, want it removed after the move", sel.ExtraArgs[ArgStorageNode])
	}
	var audit vmapi.VLCluster
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.clusterNS, Name: "kof-logs-audit"}, &audit); err != nil {
		t.Fatal(err)
	}
	if audit.Spec.VLSelect == nil || audit.Spec.VLSelect.ExtraArgs[ArgStorageNode] != "vmauth-cluster:8427/vlas" {
		t.Errorf("new cluster vlselect = %+v, want the node", audit.Spec.VLSelect)
	}
	got := get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: c.ObjectMeta})
	if want := kofv1.KindVLCluster + "/" + f.clusterNS + "/kof-logs-audit"; got.Annotations[kofv1.ClusterRefAnnotation] != want ||
		got.Labels[kofv1.StorageClusterNameLabel] != "kof-logs-audit" {
		t.Errorf("annotation/label = %q/%q, want %q and kof-logs-audit", got.Annotations[kofv1.ClusterRefAnnotation],
			got.Labels[kofv1.StorageClusterNameLabel], want)
	}
}

func TestCopyNeverOverwritesForeignSecret(t *testing.T) {
	f := newFixture(t, "foreign")
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.clusterNS, Name: credsName},
		Data:       map[string][]byte{"username": []byte("someone-else")},
	}
	create(t, f.ctx, foreign)
	c := f.conn(t, "kof-logs-storage-connection-a", kofv1.KindVLCluster, "kof-logs", "n:1", true)
	f.reconcile(t, c)
	got := get(t, f.ctx, &kofv1.VMStorageConnection{ObjectMeta: c.ObjectMeta})
	cond := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "is not a copy") {
		t.Errorf("Ready = %+v, want False saying the Secret is not a copy", cond)
	}
	kept := get(t, f.ctx, &corev1.Secret{ObjectMeta: foreign.ObjectMeta})
	if string(kept.Data["username"]) != "someone-else" || kept.Annotations[kofv1.SourceSecretAnnotation] != "" {
		t.Errorf("foreign Secret changed: %v %v", kept.Annotations, kept.Data)
	}
}
