package regional

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"strings"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/vmapi"
)

func psgOf(ns, cluster string) *kofv1.PromxyServerGroup {
	return &kofv1.PromxyServerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.PromxyServerGroup(ns, cluster)}}
}

func connOf(kind names.StorageKind, ns, cluster string) *kofv1.VMStorageConnection {
	return &kofv1.VMStorageConnection{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.StorageConnection(kind, ns, cluster)}}
}

func TestRegionless(t *testing.T) {
	psg := psgOf("kcm-system", "mothership")
	eventually(t, func() error { return get(psg) })
	want := kofv1.PromxyServerGroupSpec{
		ClusterName: "mothership", Targets: []string{"vmauth-cluster:8427"}, PathPrefix: "/vm/select/0/prometheus",
		Scheme: "http",
		HTTPClient: kofv1.HTTPClientConfig{BasicAuth: kofv1.BasicAuth{
			CredentialsSecretName: names.VMUserSecret(names.AdminVMUserBase("kcm-system", "mothership")),
			UsernameKey:           "username", PasswordKey: "password",
		}},
	}
	if diff := cmp.Diff(want, psg.Spec); diff != "" {
		t.Errorf("regionless PromxyServerGroup (-want +got):\n%s", diff)
	}
	if psg.Labels[kofv1.SecretNameLabel] != testConfig().PromxySecretName {
		t.Errorf("secret-name label = %q", psg.Labels[kofv1.SecretNameLabel])
	}
	for kind, w := range map[names.StorageKind]struct{ addr, ck, cn string }{
		names.StorageTraces:    {"http://vmauth-cluster:8427/vts", "VTCluster", "kof-traces"},
		names.StorageLogs:      {"http://vmauth-cluster:8427/vls", "VLCluster", "kof-logs"},
		names.StorageAuditLogs: {"http://vmauth-cluster:8427/vlas", "VLCluster", "kof-logs-audit"},
	} {
		c := connOf(kind, "kcm-system", "mothership")
		eventually(t, func() error { return get(c) })
		s := c.Spec
		if s.TargetStorageNode.Address != w.addr || s.ClusterRef.Kind != w.ck || s.ClusterRef.Name != w.cn || s.ClusterRef.Namespace != "kof" {
			t.Errorf("%s connection = %+v, want %+v", kind, s, w)
		}
		if s.TargetStorageNode.TLSConfig != nil {
			t.Errorf("%s connection TLS = %+v, want none for http", kind, s.TargetStorageNode.TLSConfig)
		}
		if c.Labels[kofv1.StorageClusterKindLabel] != w.ck || c.Labels[kofv1.StorageClusterNameLabel] != w.cn {
			t.Errorf("%s connection labels = %v", kind, c.Labels)
		}
	}
	// No propagation in regionless mode: the admin VMUser serves the management cluster's VMAuth.
	base := names.AdminVMUserBase("kcm-system", "mothership")
	if err := gone(&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}}); err != nil {
		t.Error(err)
	}
	// Deleted → cleaned up and recreated by the runnable.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kcm-system", Name: "kof-mothership"}}
	if err := get(cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[kofv1.RegionlessLabel] != "true" || cm.Data[discovery.KeyWriteMetrics] != "https://vmauth.mothership.kof.example.com/vm/insert/0/prometheus/api/v1/write" {
		t.Errorf("regionless configmap = %v %v", cm.Labels, cm.Data)
	}
	uid := cm.UID
	if err := env.Client.Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		fresh := &corev1.ConfigMap{ObjectMeta: cm.ObjectMeta}
		if err := get(fresh); err != nil {
			return err
		}
		if fresh.UID == uid || !fresh.DeletionTimestamp.IsZero() {
			return fmt.Errorf("regionless configmap not recreated yet")
		}
		return nil
	})
}

// regionalCM returns a regional ConfigMap as the ClusterDeployment controller writes it.
func regionalCM(t *testing.T, ns, cluster string, lbls, ann map[string]string) *corev1.ConfigMap {
	t.Helper()
	c := discovery.Cluster{Name: cluster, Namespace: ns, Role: "regional", Labels: lbls, Annotations: ann}
	data, _, err := discovery.RegionalData(c)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.RegionalConfigMap(cluster), Labels: map[string]string{
			kofv1.ClusterRoleLabel: "regional", kofv1.GeneratedLabel: "true", kofv1.ManagedByLabel: kofv1.ManagedBy}},
		Data: data,
	}
}

func TestAdminBundleLifecycle(t *testing.T) {
	ctx := context.Background()
	cm := regionalCM(t, "ns1", "r1", nil, map[string]string{kofv1.RegionalDomainAnnotation: "r1.example.com"})
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	base := names.AdminVMUserBase("ns1", "r1")
	if base != "admin-r1-"+names.Hash("kof-r1/ns1") {
		t.Fatalf("admin base = %s", base)
	}
	user := &vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "kof-vmuser-" + base}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "kof-vmuser-creds-" + base}}
	mcs := &kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}}
	psg := psgOf("ns1", "r1")
	// The reconcile writes its objects one after the other; the storage connection may come after the others, so
	// the resync below waits for it too (it read it before it existed in one run: "not found").
	logs := connOf(names.StorageLogs, "ns1", "r1")
	for _, o := range []client.Object{user, sec, mcs, psg, logs} {
		eventually(t, func() error { return get(o) })
	}
	for _, r := range user.Spec.TargetRefs {
		if len(r.QueryArgs) != 0 {
			t.Errorf("admin route %v has tenant filters %v", r.Paths, r.QueryArgs)
		}
	}
	if len(user.Spec.TargetRefs) != 8 {
		t.Errorf("admin VMUser has %d routes, want 8", len(user.Spec.TargetRefs))
	}
	if psg.Spec.Scheme != "https" || psg.Spec.Targets[0] != "vmauth.r1.example.com" || psg.Spec.PathPrefix != "/vm/select/0/prometheus" {
		t.Errorf("PromxyServerGroup spec = %+v", psg.Spec)
	}
	// A resync writes nothing.
	objs := []client.Object{user, sec, mcs, psg, logs, cm}
	before := versions(t, objs)
	if _, err := rec.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns1", Name: "kof-r1"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, versions(t, objs)); diff != "" {
		t.Errorf("resync changed resourceVersions (-before +after):\n%s", diff)
	}

	if err := env.Client.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{user, sec, mcs, psg, connOf(names.StorageTraces, "ns1", "r1"), cm} {
		eventually(t, func() error { return gone(o) })
	}
}

func versions(t *testing.T, objs []client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		if err := get(o); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%T %s", o, o.GetName())] = o.GetResourceVersion()
	}
	return out
}

func TestIstioRegional(t *testing.T) {
	cm := regionalCM(t, "ns2", "r-istio", map[string]string{kofv1.IstioRoleLabel: "member"}, nil)
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	psg := psgOf("ns2", "r-istio")
	eventually(t, func() error { return get(psg) })
	if psg.Spec.Scheme != "http" || psg.Spec.Targets[0] != "r-istio-vmauth:8427" || psg.Spec.PathPrefix != "/vm/select/0/prometheus" {
		t.Errorf("Istio PromxyServerGroup spec = %+v", psg.Spec)
	}
	c := connOf(names.StorageTraces, "ns2", "r-istio")
	eventually(t, func() error { return get(c) })
	if c.Spec.TargetStorageNode.Address != "http://r-istio-vmauth:8427/vts" {
		t.Errorf("Istio traces connection address = %q", c.Spec.TargetStorageNode.Address)
	}
}

// TestDroppedFieldsGo is correctness class 5: a regional annotated with
// `{"tls_config":{"insecure_skip_verify":true}}` gets it on its PromxyServerGroup and three VMStorageConnections;
// once the setting is gone from the ConfigMap, so is the field from all four (server-side apply removes what the
// operator no longer sets). Variant: a dial_timeout that is dropped the same way.
func TestDroppedFieldsGo(t *testing.T) {
	ctx := context.Background()
	ann := map[string]string{kofv1.RegionalDomainAnnotation: "tls.example.com",
		kofv1.HTTPConfigAnnotation: `{"dial_timeout":"7s","tls_config":{"insecure_skip_verify":true}}`}
	cm := regionalCM(t, "ns1", "r-tls", nil, ann)
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	psg := psgOf("ns1", "r-tls")
	conns := []*kofv1.VMStorageConnection{connOf(names.StorageTraces, "ns1", "r-tls"),
		connOf(names.StorageLogs, "ns1", "r-tls"), connOf(names.StorageAuditLogs, "ns1", "r-tls")}
	state := func() (bool, string, []bool, error) {
		if err := get(psg); err != nil {
			return false, "", nil, err
		}
		var skips []bool
		for _, c := range conns {
			if err := get(c); err != nil {
				return false, "", nil, err
			}
			skips = append(skips, c.Spec.TargetStorageNode.TLSConfig != nil && c.Spec.TargetStorageNode.TLSConfig.InsecureSkipVerify)
		}
		return psg.Spec.HTTPClient.TLSConfig.InsecureSkipVerify, psg.Spec.HTTPClient.DialTimeout, skips, nil
	}
	eventually(t, func() error {
		skip, timeout, conn, err := state()
		if err != nil {
			return err
		}
		if !skip || timeout != "7s" || fmt.Sprint(conn) != "[true true true]" {
			return fmt.Errorf("with the setting: PSG skip %v timeout %q, connections %v", skip, timeout, conn)
		}
		return nil
	})
	if err := get(cm); err != nil {
		t.Fatal(err)
	}
	cm.Data[discovery.KeyHTTPConfig] = ""
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		skip, timeout, conn, err := state()
		if err != nil {
			return err
		}
		if skip || timeout != "" || fmt.Sprint(conn) != "[false false false]" {
			return fmt.Errorf("after removal: PSG insecure_skip_verify %v dial_timeout %q, connections %v; want all gone\n%s",
				skip, timeout, conn, managed(psg)+fmt.Sprint(rec.mem().Condition(client.ObjectKeyFromObject(cm))))
		}
		return nil
	})
}

// TestMalformedHTTPConfigKeepsPromxy: a kof_http_config the regional ConfigMap cannot parse is reported on the
// ConfigMap and the PromxyServerGroup is made with the default HTTP client settings (correctness class 10).
func TestMalformedHTTPConfigKeepsPromxy(t *testing.T) {
	ctx := context.Background()
	cm := regionalCM(t, "ns2", "r-badhttp", nil, map[string]string{kofv1.RegionalDomainAnnotation: "bad.example.com"})
	cm.Data[discovery.KeyHTTPConfig] = `{"dial_timeout": 5}`
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	psg := psgOf("ns2", "r-badhttp")
	eventually(t, func() error { return get(psg) })
	if psg.Spec.HTTPClient.DialTimeout != "" || psg.Spec.Targets[0] != "vmauth.bad.example.com" {
		t.Errorf("PromxyServerGroup spec = %+v, want the endpoint with default client settings", psg.Spec)
	}
	eventually(t, func() error {
		c, ok := rec.mem().Condition(client.ObjectKeyFromObject(cm))
		if !ok || c.Reason != kofv1.ReasonInvalidRegionalConfig || !strings.Contains(c.Message, "data.kof_http_config") {
			return fmt.Errorf("condition = %+v, want InvalidRegionalConfig naming data.kof_http_config", c)
		}
		return nil
	})
}

func TestLegacyAdminBundleRemoved(t *testing.T) {
	ctx := context.Background()
	legacy := names.LegacyAdminVMUserBase("ns-legacy", "r-legacy")
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-legacy", Name: names.VMUserSecret(legacy)},
		StringData: map[string]string{"username": legacy, "password": "old-password-0123456789"}}
	if err := env.Client.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	cm := regionalCM(t, "ns-legacy", "r-legacy", nil, map[string]string{kofv1.RegionalDomainAnnotation: "legacy.example.com"})
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		return get(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-legacy", Name: names.VMUserSecret(names.AdminVMUserBase("ns-legacy", "r-legacy"))}})
	})
	eventually(t, func() error { return gone(old) })
}

// goneOrOrphaned is gone, or o still exists but only because envtest runs no garbage collector: every owner its
// ownerReferences name (a ConfigMap in its namespace) no longer exists with that UID, so a cluster's garbage
// collector deletes it.
func goneOrOrphaned(o client.Object) error {
	err := gone(o)
	if err == nil || len(o.GetOwnerReferences()) == 0 {
		return err
	}
	for _, ref := range o.GetOwnerReferences() {
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: ref.Name}}
		if ref.Kind != "ConfigMap" {
			return err
		}
		if getErr := get(owner); getErr == nil && owner.UID == ref.UID {
			return err
		} else if getErr != nil && !apierrors.IsNotFound(getErr) {
			return getErr
		}
	}
	return nil
}

func managed(o client.Object) string {
	var b strings.Builder
	for _, m := range o.GetManagedFields() {
		fmt.Fprintf(&b, "%s %s %s\n", m.Manager, m.Operation, m.FieldsV1.Raw)
	}
	return b.String()
}

// TestRegionlessConfigMapGoesInRegionalMode: with regionless mode off, the regionless ConfigMap the operator made
// (left by an earlier installation or mode) is removed with its PromxyServerGroup, connections and admin bundle.
func TestRegionlessConfigMapGoesInRegionalMode(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.RegionlessClusterName = "old-mothership"
	cm := outputs.RegionlessConfigMap(cfg)
	cm.Namespace = "ns1"
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	psg := psgOf("ns1", "old-mothership")
	eventually(t, func() error { return get(psg) }) // made by the regionless-mode controller of this package
	cfg.Regionless = false
	regionalMode := &Reconciler{Client: env.Client, Config: cfg}
	// This package's manager runs in regionless mode beside regionalMode and may re-make an object regionalMode just
	// removed while the ConfigMap still exists (envtest runs no garbage collector to remove it again), so reconcile
	// as a regional-mode operator would, until everything is gone.
	for _, o := range []client.Object{cm, psg, connOf(names.StorageLogs, "ns1", "old-mothership"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1",
			Name: names.VMUserSecret(names.AdminVMUserBase("ns1", "old-mothership"))}}} {
		eventually(t, func() error {
			if _, err := regionalMode.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}); err != nil {
				return err
			}
			return goneOrOrphaned(o)
		})
	}
}

// TestMalformedHTTPConfigKeepsLastValid: a kof_http_config made malformed after a valid one leaves the
// PromxyServerGroup with the valid settings (regression: promxy went back to the default HTTP client, TLS
// verification on again).
func TestMalformedHTTPConfigKeepsLastValid(t *testing.T) {
	ctx := context.Background()
	cm := regionalCM(t, "ns2", "r-keephttp", nil, map[string]string{kofv1.RegionalDomainAnnotation: "keep.example.com"})
	cm.Data[discovery.KeyHTTPConfig] = `{"dial_timeout":"7s","tls_config":{"insecure_skip_verify":true}}`
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	psg := psgOf("ns2", "r-keephttp")
	eventually(t, func() error {
		if err := get(psg); err != nil {
			return err
		}
		if psg.Spec.HTTPClient.DialTimeout != "7s" {
			return fmt.Errorf("dial_timeout %q, want 7s", psg.Spec.HTTPClient.DialTimeout)
		}
		return nil
	})
	eventually(t, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		cm.Data[discovery.KeyHTTPConfig] = `{"dial_timeout": 5}`
		return env.Client.Update(ctx, cm)
	})
	eventually(t, func() error {
		c, ok := rec.mem().Condition(client.ObjectKeyFromObject(cm))
		if !ok || c.Reason != kofv1.ReasonInvalidRegionalConfig || !strings.Contains(c.Message, "last valid settings") {
			return fmt.Errorf("condition = %+v, want InvalidRegionalConfig saying the last valid settings are kept", c)
		}
		return nil
	})
	if err := get(psg); err != nil {
		t.Fatal(err)
	}
	if psg.Spec.HTTPClient.DialTimeout != "7s" || !psg.Spec.HTTPClient.TLSConfig.InsecureSkipVerify {
		t.Errorf("PromxyServerGroup http_client = %+v after a malformed config, want the last valid one", psg.Spec.HTTPClient)
	}
}
