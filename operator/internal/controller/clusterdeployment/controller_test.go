package clusterdeployment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/vmapi"
)

const awsTpl = "aws-standalone-cp-1-0-0"

func domainAnn(d string) map[string]string {
	return map[string]string{kofv1.RegionalDomainAnnotation: d}
}

func TestRegionalConfigMapEndpoints(t *testing.T) {
	const d = "regional-1.kof.example.com"
	create(t,
		newCD("kcm-system", "regional-1", "regional", awsTpl, `{"region":"us-east-2"}`, nil, domainAnn(d)),
		newCD("kcm-system", "regional-ovr", "regional", awsTpl, `{"region":"eu-north-1"}`, nil, map[string]string{
			kofv1.RegionalDomainAnnotation:      "ovr.example.com",
			kofv1.ReadMetricsEndpointAnnotation: "https://metrics.example.net/select/0/prometheus",
		}),
		newCD("kcm-system", "regional-istio", "regional", awsTpl, `{"region":"eu-north-2"}`,
			map[string]string{kofv1.IstioRoleLabel: kofv1.IstioMember}, nil),
	)
	want := map[string]string{
		discovery.KeyWriteMetrics:        "https://vmauth." + d + "/vm/insert/0/prometheus/api/v1/write",
		discovery.KeyReadMetrics:         "https://vmauth." + d + "/vm/select/0/prometheus",
		discovery.KeyWriteLogs:           "https://vmauth." + d + "/vli/insert/opentelemetry/v1/logs",
		discovery.KeyReadLogs:            "https://vmauth." + d + "/vls",
		discovery.KeyWriteAuditLogs:      "https://vmauth." + d + "/vlai/insert/opentelemetry/v1/logs",
		discovery.KeyReadAuditLogs:       "https://vmauth." + d + "/vlas",
		discovery.KeyWriteTraces:         "https://vmauth." + d + "/vti/insert/opentelemetry/v1/traces",
		discovery.KeyReadTraces:          "https://vmauth." + d + "/vts",
		discovery.KeyRegionalClusterName: "regional-1", discovery.KeyRegionalClusterCloud: "aws",
		discovery.KeyAWSRegion: "us-east-2",
	}
	eventually(t, func() error {
		data, err := getCM("kcm-system", "kof-regional-1")
		if err != nil {
			return err
		}
		if len(data) != 17 {
			return fmt.Errorf("kof-regional-1 has %d keys, want 17", len(data))
		}
		for k, v := range want {
			if data[k] != v {
				return fmt.Errorf("kof-regional-1 %s = %q, want %q", k, data[k], v)
			}
		}
		return nil
	})
	eventually(t, func() error {
		data, err := getCM("kcm-system", "kof-regional-ovr")
		if err != nil {
			return err
		}
		if got := data[discovery.KeyReadMetrics]; got != "https://metrics.example.net/select/0/prometheus" {
			return fmt.Errorf("override read metrics = %q", got)
		}
		if got := data[discovery.KeyReadLogs]; got != "https://vmauth.ovr.example.com/vls" {
			return fmt.Errorf("default read logs = %q", got)
		}
		return nil
	})
	eventually(t, func() error {
		data, err := getCM("kcm-system", "kof-regional-istio")
		if err != nil {
			return err
		}
		wantIstio := map[string]string{
			discovery.KeyReadMetrics:   "http://regional-istio-vmauth:8427/vm/select/0/prometheus",
			discovery.KeyReadLogs:      "http://regional-istio-vmauth:8427/vls",
			discovery.KeyReadAuditLogs: "http://regional-istio-vmauth:8427/vlas",
			discovery.KeyReadTraces:    "http://regional-istio-vmauth:8427/vts",
			discovery.KeyWriteMetrics:  "",
			discovery.KeyWriteTraces:   "",
			discovery.KeyIstioRole:     "member",
		}
		for k, v := range wantIstio {
			if data[k] != v {
				return fmt.Errorf("kof-regional-istio %s = %q, want %q", k, data[k], v)
			}
		}
		return nil
	})
}

func TestChildBinding(t *testing.T) {
	create(t,
		newCD("kcm-system", "bind-regional", "regional", awsTpl, `{"region":"ap-east-1"}`, nil, domainAnn("bind.example.com")),
		newCD("kcm-system", "bind-by-region", "child", awsTpl, `{"region":"ap-east-1"}`, nil, nil),
		newCD("kcm-system", "bind-by-label", "child", awsTpl, `{"region":"sa-east-1"}`,
			map[string]string{kofv1.RegionalClusterNameLabel: "bind-regional"}, nil),
		newCD("kcm-system", "bind-hetzner", "child", "hetzner-cp-1-0-0", `{"location":"fsn1"}`,
			map[string]string{kofv1.RegionalClusterNameLabel: "bind-regional"}, nil),
		newCD("kcm-system", "bind-none", "child", awsTpl, `{"region":"me-south-1"}`, nil, nil),
	)
	var regional map[string]string
	eventually(t, func() (err error) { regional, err = getCM("kcm-system", "kof-bind-regional"); return err })
	for _, c := range []string{"bind-by-region", "bind-by-label", "bind-hetzner"} {
		eventually(t, func() error {
			data, err := getCM("kcm-system", names.ChildConfigMap(c))
			if err != nil {
				return err
			}
			if diff := cmp.Diff(regional, data); diff != "" {
				return fmt.Errorf("child %s data differs from its regional (-regional +child):\n%s", c, diff)
			}
			return nil
		})
	}
	key := types.NamespacedName{Namespace: "kcm-system", Name: "bind-none"}
	eventually(t, func() error {
		c, ok := rec.Condition(key)
		if !ok || c.Status != metav1.ConditionFalse || c.Reason != kofv1.ReasonNoRegional {
			return fmt.Errorf("condition of bind-none = %+v", c)
		}
		for _, l := range []string{kofv1.RegionalClusterNameLabel, kofv1.RegionalClusterNamespaceLabel} {
			if !strings.Contains(c.Message, l) {
				return fmt.Errorf("message %q does not name label %s", c.Message, l)
			}
		}
		notes, err := eventFor("kcm-system", "bind-none", kofv1.ReasonNoRegional)
		if err != nil || len(notes) != 1 {
			return fmt.Errorf("events NoRegionalCluster of bind-none = %v (err %v), want exactly 1", notes, err)
		}
		return nil
	})
	if err := gone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kcm-system", Name: names.ChildConfigMap("bind-none")}}); err != nil {
		t.Errorf("unbound child got a ConfigMap: %v", err)
	}
}

func TestNoSpecConfig(t *testing.T) {
	create(t,
		newCD("kcm-system", "noconf-regional", "regional", awsTpl, "", nil, nil),
		newCD("kcm-system", "noconf-child", "child", awsTpl, "", nil, nil),
		newCD("kcm-system", "badconf-child", "child", awsTpl, `{"clusterAnnotations":"oops"}`, nil, nil),
	)
	cases := map[string]struct{ reason, text string }{
		"noconf-regional": {kofv1.ReasonInvalidAnnotation, kofv1.RegionalDomainAnnotation},
		"noconf-child":    {kofv1.ReasonNoRegional, kofv1.RegionalClusterNameLabel},
		"badconf-child":   {kofv1.ReasonInvalidConfig, "spec.config.clusterAnnotations"},
	}
	for name, want := range cases {
		eventually(t, func() error {
			c, ok := rec.Condition(types.NamespacedName{Namespace: "kcm-system", Name: name})
			if !ok || c.Status != metav1.ConditionFalse || c.Reason != want.reason || !strings.Contains(c.Message, want.text) {
				return fmt.Errorf("condition of %s = %+v, want False %s naming %s", name, c, want.reason, want.text)
			}
			return nil
		})
	}
}

func TestChildTenantRoutes(t *testing.T) {
	create(t,
		newCD("ns-a", "tenant-regional", "regional", "", "", nil, domainAnn("tenant.example.com")),
		newCD("ns-a", "tenant-child", "child", "", "", map[string]string{
			kofv1.RegionalClusterNameLabel: "tenant-regional", kofv1.TenantLabel: "t1"}, nil),
	)
	base := names.ChildVMUserBase("ns-a", "tenant-child")
	var user vmapi.VMUser
	var sec corev1.Secret
	var mcs kcmv1.MultiClusterService
	// The reconcile writes the VMUser, its Secret and the propagation MultiClusterService one after another: each is
	// pending until it exists (reading the later ones right after the first once failed on a busy machine).
	eventually(t, func() error {
		ctx := context.Background()
		return errors.Join(env.Client.Get(ctx, client.ObjectKey{Namespace: "ns-a", Name: names.VMUser(base)}, &user),
			env.Client.Get(ctx, client.ObjectKey{Namespace: "ns-a", Name: names.VMUserSecret(base)}, &sec),
			env.Client.Get(ctx, client.ObjectKey{Name: names.VMUserPropagation(base)}, &mcs))
	})
	got := map[string]string{}
	for _, r := range user.Spec.TargetRefs {
		if len(r.Paths) != 1 || len(r.QueryArgs) != 1 || len(r.QueryArgs[0].Values) != 1 {
			t.Fatalf("route %+v: want one path and one query arg", r)
		}
		got[r.Paths[0]] = r.QueryArgs[0].Name + "=" + r.QueryArgs[0].Values[0]
		if r.DropSrcPathPrefixParts == nil || *r.DropSrcPathPrefixParts != 1 {
			t.Errorf("route %s does not drop the first path part", r.Paths[0])
		}
	}
	want := map[string]string{
		"/vm/insert/.*": "extra_label=tenant=t1",
		"/vm/select/.*": `extra_filters={tenant="t1"}`,
		"/vli/.*":       "extra_fields=tenant=t1",
		"/vls/.*":       `extra_filters="tenant":="t1"`,
		"/vlai/.*":      "extra_fields=tenant=t1",
		"/vlas/.*":      `extra_filters="tenant":="t1"`,
		"/vti/.*":       "extra_fields=resource_attr:tenant=t1",
		"/vts/.*":       `extra_filters="resource_attr:tenant":="t1"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tenant filters (-want +got):\n%s", diff)
	}
	if string(sec.Data["username"]) != base || len(sec.Data["password"]) < 16 {
		t.Errorf("secret username %q, password length %d", sec.Data["username"], len(sec.Data["password"]))
	}
	if got := mcs.Spec.ClusterSelector.MatchLabels[kofv1.ClusterNameLabel]; got != "tenant-regional" {
		t.Errorf("propagation selects %q, want tenant-regional", got)
	}
	if strings.Contains(mcs.Spec.ServiceSpec.Services[0].Values, string(sec.Data["password"])) {
		t.Error("propagation MCS values contain the password")
	}
	// The password is kept: a forced reconcile does not change the Secret.
	rv := sec.ResourceVersion
	if err := reconcileOnce(rec, types.NamespacedName{Namespace: "ns-a", Name: "tenant-child"}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(&sec), &sec); err != nil || sec.ResourceVersion != rv {
		t.Errorf("secret rewritten by a resync: resourceVersion %s → %s (err %v)", rv, sec.ResourceVersion, err)
	}
}

func TestDeleteRemovesEverything(t *testing.T) {
	regional := newCD("ns-b", "del-regional", "regional", "", "", map[string]string{kofv1.KCMRegionClusterLabel: "true"}, domainAnn("del.example.com"))
	child := newCD("ns-b", "del-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "del-regional"}, nil)
	create(t, regional, child)
	base := names.ChildVMUserBase("ns-b", "del-child")
	clusterScoped := []client.Object{
		&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}},
		&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigPropagation("ns-b", "del-regional")}},
		&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMRulesPropagation("ns-b", "del-regional")}},
	}
	for _, o := range clusterScoped {
		eventually(t, func() error { return env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o) })
	}
	for _, cd := range []*kcmv1.ClusterDeployment{regional, child} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(cd), cd); err != nil {
			t.Fatal(err)
		}
		// No finalizer: deleting a cluster never waits for the operator.
		if len(cd.Finalizers) != 0 {
			t.Errorf("%s: finalizers %v, want none", cd.Name, cd.Finalizers)
		}
		// Only a regional carries its name label: the propagation MCSs select regionals by it and nothing a child.
		if want := map[bool]string{true: cd.Name}[cd == regional]; cd.Labels[kofv1.ClusterNameLabel] != want {
			t.Errorf("%s: label %s = %q, want %q", cd.Name, kofv1.ClusterNameLabel, cd.Labels[kofv1.ClusterNameLabel], want)
		}
		if err := env.Client.Delete(context.Background(), cd); err != nil {
			t.Fatal(err)
		}
	}
	namespaced := []client.Object{
		&vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.VMUser(base)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.VMUserSecret(base)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.ChildConfigMap("del-child")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.RegionalConfigMap("del-regional")}},
		regional, child,
	}
	for _, o := range append(clusterScoped, namespaced...) {
		eventually(t, func() error { return gone(o) })
	}
}

// Objects whose ClusterDeployment is gone (deleted while the operator was not running: after a restart they
// arrive in the initial list) are removed: the owner-labelled MCS and the ConfigMap controlled by a
// ClusterDeployment of that name.
func TestOrphansOfAGoneClusterRemoved(t *testing.T) {
	ctx := context.Background()
	mcs := &kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "kof-orphan-propagation",
		Labels: merged(outputs.Labels(), outputs.OwnerLabels(kcmv1.ClusterDeploymentKind, "ns-b", "vanished"))}}
	mcs.Spec.ClusterSelector.MatchLabels = map[string]string{kofv1.ClusterNameLabel: "nowhere"}
	yes := true
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.ChildConfigMap("vanished"),
		Labels: outputs.Labels(),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: kcmv1.GroupVersion.String(), Kind: kcmv1.ClusterDeploymentKind,
			Name: "vanished", UID: "00000000-0000-0000-0000-000000000001", Controller: &yes}}}}
	// Not owned: same name pattern, no controller reference to a ClusterDeployment; it stays.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.RegionalConfigMap("vanished")}}
	create(t, mcs, cm, other)
	for _, o := range []client.Object{mcs, cm} {
		eventually(t, func() error { return gone(o) })
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Errorf("a ConfigMap the operator did not make was touched: %v", err)
	}
}

func merged(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// A ClusterDeployment with the finalizer of earlier releases loses it (one patch) and is deleted without waiting.
func TestLegacyFinalizerRemoved(t *testing.T) {
	ctx := context.Background()
	cd := newCD("ns-b", "old-finalizer", "child", "", "", nil, nil)
	cd.Finalizers = []string{kofv1.ClusterDeploymentFinalizer}
	create(t, cd)
	eventually(t, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cd), cd); err != nil {
			return err
		}
		if controllerutil.ContainsFinalizer(cd, kofv1.ClusterDeploymentFinalizer) {
			return fmt.Errorf("finalizers %v", cd.Finalizers)
		}
		return nil
	})
	if err := env.Client.Delete(ctx, cd); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error { return gone(cd) })
}

func TestOutdatedMCSCorrectedAndResyncWritesNothing(t *testing.T) {
	create(t,
		newCD("ns-a", "mcs-regional", "regional", "", "", nil, domainAnn("mcs.example.com")),
		newCD("ns-a", "mcs-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "mcs-regional"}, nil),
	)
	ctx := context.Background()
	mcs := &kcmv1.MultiClusterService{}
	key := client.ObjectKey{Name: names.VMUserPropagation(names.ChildVMUserBase("ns-a", "mcs-child"))}
	eventually(t, func() error { return env.Client.Get(ctx, key, mcs) })
	want := mcs.Spec.DeepCopy()
	// An outdated MCS, as an earlier operator version could have left it.
	mcs.Spec.ClusterSelector.MatchLabels[kofv1.ClusterNameLabel] = "somewhere-else"
	mcs.Spec.ServiceSpec.Services[0].Template = "kof-propagation-1-0-0"
	if err := env.Client.Update(ctx, mcs); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		if err := env.Client.Get(ctx, key, mcs); err != nil {
			return err
		}
		if diff := cmp.Diff(*want, mcs.Spec); diff != "" {
			return fmt.Errorf("MCS not corrected (-want +got):\n%s", diff)
		}
		return nil
	})
	// A forced resync of both clusters writes nothing.
	objs := []client.Object{
		mcs,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-a", Name: "kof-mcs-regional"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-a", Name: names.ChildConfigMap("mcs-child")}},
		&vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-a", Name: names.VMUser(names.ChildVMUserBase("ns-a", "mcs-child"))}},
		&kcmv1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-a", Name: "mcs-child"}},
	}
	before := versions(t, objs)
	for _, n := range []string{"mcs-regional", "mcs-child"} {
		if _, err := rec.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns-a", Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(before, versions(t, objs)); diff != "" {
		t.Errorf("resync changed resourceVersions (-before +after):\n%s", diff)
	}
}

func versions(t *testing.T, objs []client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%T %s", o, o.GetName())] = o.GetResourceVersion()
	}
	return out
}

func TestSameNameTwoNamespacesKCMRegion(t *testing.T) {
	lbl := map[string]string{kofv1.KCMRegionClusterLabel: "true"}
	create(t,
		newCD("ns-a", "region-x", "regional", "", "", lbl, domainAnn("a.example.com")),
		newCD("ns-b", "region-x", "regional", "", "", lbl, domainAnn("b.example.com")),
	)
	a, b := names.ChildConfigPropagation("ns-a", "region-x"), names.ChildConfigPropagation("ns-b", "region-x")
	if a == b {
		t.Fatalf("one propagation name %s for two namespaces", a)
	}
	for ns, n := range map[string]string{"ns-a": a, "ns-b": b} {
		eventually(t, func() error {
			var mcs kcmv1.MultiClusterService
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: n}, &mcs); err != nil {
				return err
			}
			if mcs.Labels[kofv1.OwnerNamespaceLabel] != ns {
				return fmt.Errorf("MCS %s owner namespace %q, want %s", n, mcs.Labels[kofv1.OwnerNamespaceLabel], ns)
			}
			if !strings.Contains(mcs.Spec.ServiceSpec.Services[0].Values, strings.TrimPrefix(ns, "ns-")+".example.com") {
				return fmt.Errorf("MCS %s does not carry %s's regional data", n, ns)
			}
			// The shipped configuration names the chart MCS it waits for (regression: `dependsOn: [""]`).
			if want := []string{testConfig().RegionalMCS}; !slices.Equal(mcs.Spec.DependsOn, want) || want[0] == "" {
				return fmt.Errorf("MCS %s dependsOn %q, want %q", n, mcs.Spec.DependsOn, want)
			}
			return nil
		})
	}
}

func TestLegacyBundleRemoved(t *testing.T) {
	ctx := context.Background()
	// A namespace no reconcile visited yet: the operator lists the names of earlier releases' objects once per
	// namespace, at the first visit, as an upgrade leaves them behind before it starts.
	legacy := names.LegacyChildVMUserBase("ns-legacy", "legacy-child")
	// What a KOF release with Adler-32 names left behind (no kof-operator labels).
	old := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-legacy", Name: names.VMUserSecret(legacy)},
			StringData: map[string]string{"username": legacy, "password": "old-password-0123456789"}},
		&vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-legacy", Name: names.VMUser(legacy)},
			Spec: vmapi.VMUserSpec{TargetRefs: []vmapi.TargetRef{{Static: &vmapi.StaticRef{URL: "http://x"}, Paths: []string{"/"}}}}},
	}
	create(t, old...)
	create(t,
		newCD("ns-legacy", "legacy-regional", "regional", "", "", nil, domainAnn("legacy.example.com")),
		newCD("ns-legacy", "legacy-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "legacy-regional"}, nil),
	)
	base := names.ChildVMUserBase("ns-legacy", "legacy-child")
	eventually(t, func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: "ns-legacy", Name: names.VMUser(base)}, &vmapi.VMUser{})
	})
	for _, o := range old {
		eventually(t, func() error { return gone(o) })
	}
}

func TestRoleChangeRemovesOldRoleObjects(t *testing.T) {
	ctx := context.Background()
	create(t,
		newCD("ns-b", "switch-regional", "regional", "", "", nil, domainAnn("switch.example.com")),
		newCD("ns-b", "switch", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "switch-regional"}, nil),
	)
	base := names.ChildVMUserBase("ns-b", "switch")
	childObjs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.ChildConfigMap("switch")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.VMUserSecret(base)}},
		&vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: names.VMUser(base)}},
		&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}},
	}
	for _, o := range childObjs {
		eventually(t, func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(o), o) })
	}
	cd := &kcmv1.ClusterDeployment{}
	eventually(t, func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "ns-b", Name: "switch"}, cd); err != nil {
			return err
		}
		cd.Labels[kofv1.ClusterRoleLabel] = kofv1.RoleRegional
		cd.Annotations = domainAnn("switched.example.com")
		return env.Client.Update(ctx, cd)
	})
	eventually(t, func() error {
		_, err := getCM("ns-b", names.RegionalConfigMap("switch"))
		return err
	})
	for _, o := range childObjs {
		eventually(t, func() error { return gone(o) })
	}
}

// condition waits for the KOFConfigured condition of ns/name to satisfy ok and returns it.
func condition(t *testing.T, ns, name string, ok func(metav1.Condition) bool) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	eventually(t, func() error {
		got, found := rec.Condition(types.NamespacedName{Namespace: ns, Name: name})
		if !found || !ok(got) {
			return fmt.Errorf("condition of %s/%s = %+v", ns, name, got)
		}
		c = got
		return nil
	})
	return c
}

// TestBadSettingFailsOnlyWhatItConfigures is correctness class 10 against a real API server: a regional whose
// `kof-http-config` is malformed keeps its ConfigMap (default http config) and its child; the regional says which
// key, as condition and event. A child of a regional without endpoints names that regional and the key; a child
// write-endpoint annotation that is not an absolute URL is rejected by name while its ConfigMap is still written.
func TestBadSettingFailsOnlyWhatItConfigures(t *testing.T) {
	ann := domainAnn("badhttp.example.com")
	ann[kofv1.HTTPConfigAnnotation] = `{"dial_timeout": 5}`
	create(t,
		newCD("ns-a", "badhttp-regional", "regional", "", "", nil, ann),
		newCD("ns-a", "badhttp-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "badhttp-regional"}, nil),
		newCD("ns-a", "noep-regional", "regional", "", "", nil, nil),
		newCD("ns-a", "noep-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "noep-regional"}, nil),
		newCD("ns-a", "badurl-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "badhttp-regional"},
			map[string]string{kofv1.WriteMetricsEndpointAnnotation: "not a url"}),
	)
	var data map[string]string
	eventually(t, func() (err error) { data, err = getCM("ns-a", "kof-badhttp-regional"); return err })
	if data[discovery.KeyHTTPConfig] != "" || data[discovery.KeyReadMetrics] != "https://vmauth.badhttp.example.com/vm/select/0/prometheus" {
		t.Errorf("regional data = %v, want the endpoints with the default http config", data)
	}
	c := condition(t, "ns-a", "badhttp-regional", func(c metav1.Condition) bool { return c.Status == metav1.ConditionFalse })
	if c.Reason != kofv1.ReasonInvalidAnnotation || !strings.Contains(c.Message, kofv1.HTTPConfigAnnotation) {
		t.Errorf("regional condition = %+v, want InvalidAnnotation naming %s", c, kofv1.HTTPConfigAnnotation)
	}
	eventually(t, func() error {
		notes, err := eventFor("ns-a", "badhttp-regional", kofv1.ReasonInvalidAnnotation)
		if err != nil || len(notes) != 1 || !strings.Contains(notes[0], kofv1.HTTPConfigAnnotation) {
			return fmt.Errorf("events of badhttp-regional = %v (err %v), want one naming the annotation", notes, err)
		}
		return nil
	})
	condition(t, "ns-a", "badhttp-child", func(c metav1.Condition) bool { return c.Status == metav1.ConditionTrue })
	child, err := getCM("ns-a", names.ChildConfigMap("badhttp-child"))
	if err != nil || child[discovery.KeyWriteMetrics] != "https://vmauth.badhttp.example.com/vm/insert/0/prometheus/api/v1/write" {
		t.Errorf("child of the regional with a bad http config: data %v (err %v)", child, err)
	}

	c = condition(t, "ns-a", "noep-child", func(c metav1.Condition) bool { return c.Reason == kofv1.ReasonRegionalMisconfigured })
	if !strings.Contains(c.Message, "regional cluster ns-a/noep-regional is misconfigured") ||
		!strings.Contains(c.Message, kofv1.RegionalDomainAnnotation) {
		t.Errorf("child of a regional without endpoints: %q, want the regional and %s named", c.Message,
			kofv1.RegionalDomainAnnotation)
	}

	c = condition(t, "ns-a", "badurl-child", func(c metav1.Condition) bool { return c.Reason == kofv1.ReasonInvalidAnnotation })
	// The child's form of the mistake gives an example URL as the regional's does (regression: it gave none).
	if !strings.Contains(c.Message, kofv1.WriteMetricsEndpointAnnotation) || !strings.Contains(c.Message, `"not a url"`) ||
		!strings.Contains(c.Message, "; for example https://vmauth.regional.example.com/vm/insert/0/prometheus/api/v1/write") {
		t.Errorf("child with a bad write endpoint: %q, want the annotation, the value and an example", c.Message)
	}
	eventually(t, func() error { _, err := getCM("ns-a", names.ChildConfigMap("badurl-child")); return err })
}

// TestWatchScopeMiss is the operator half of correctness class 8: a child naming a regional in a namespace outside
// KOF_WATCH_NAMESPACES is told so, not that the regional is missing.
func TestWatchScopeMiss(t *testing.T) {
	create(t,
		newCD("ns-b", "scope-regional", "regional", "", "", nil, domainAnn("scope.example.com")),
		newCD("ns-a", "scope-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "scope-regional",
			kofv1.RegionalClusterNamespaceLabel: "ns-b"}, nil),
	)
	cfg := testConfig()
	cfg.WatchNamespaces = []string{"ns-a"}
	// The manager's cached client: the regionals are read through its role index.
	scoped := &Reconciler{Client: rec.Client, Config: cfg}
	key := types.NamespacedName{Namespace: "ns-a", Name: "scope-child"}
	for _, k := range []types.NamespacedName{key, {Namespace: "ns-b", Name: "scope-regional"}} {
		eventually(t, func() error { return rec.Client.Get(context.Background(), k, &kcmv1.ClusterDeployment{}) })
	}
	if err := reconcileOnce(scoped, key); err != nil {
		t.Fatal(err)
	}
	c, _ := scoped.Condition(key)
	if c.Reason != kofv1.ReasonOutsideWatchScope || !strings.Contains(c.Message, "namespace ns-b is outside KOF_WATCH_NAMESPACES") {
		t.Errorf("condition = %+v, want OutsideWatchScope naming ns-b", c)
	}
	// Variant: the same child under the operator watching everything binds.
	condition(t, "ns-a", "scope-child", func(c metav1.Condition) bool { return c.Status == metav1.ConditionTrue })
}

// TestChildConfigMapFollowsRegional: the ClusterDeployment controller, the child ConfigMap's only writer, copies a
// changed regional domain into the child's ConfigMap.
func TestChildConfigMapFollowsRegional(t *testing.T) {
	ctx := context.Background()
	regional := newCD("ns-b", "follow-regional", "regional", "", "", nil, domainAnn("old.example.com"))
	// The long name's ConfigMap is shortened and hashed (names.ChildConfigMap): the child is found by the
	// ConfigMap's controller, not its name.
	long := "follow-child-with-a-name-longer-than-a-configmap-allows"
	create(t, regional,
		newCD("ns-b", "follow-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "follow-regional"}, nil),
		newCD("ns-b", long, "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "follow-regional"}, nil))
	if strings.Contains(names.ChildConfigMap(long), long) {
		t.Fatalf("ConfigMap name %q keeps the whole cluster name; the test needs one that does not", names.ChildConfigMap(long))
	}
	wait := func(want string) {
		t.Helper()
		for _, child := range []string{"follow-child", long} {
			eventually(t, func() error {
				data, err := getCM("ns-b", names.ChildConfigMap(child))
				if err != nil {
					return err
				}
				if data[discovery.KeyReadLogs] != want {
					return fmt.Errorf("child %s read logs = %q, want %q", child, data[discovery.KeyReadLogs], want)
				}
				return nil
			})
		}
	}
	wait("https://vmauth.old.example.com/vls")
	eventually(t, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(regional), regional); err != nil {
			return err
		}
		regional.Annotations = domainAnn("new.example.com")
		return env.Client.Update(ctx, regional)
	})
	wait("https://vmauth.new.example.com/vls")
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "ns-b", Name: names.ChildConfigMap("follow-child")}, &cm); err != nil {
		t.Fatal(err)
	}
	for _, m := range cm.ManagedFields {
		if m.Manager != "kof-operator" || m.Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("child ConfigMap written by %s (%s); want the operator's apply only", m.Manager, m.Operation)
		}
	}
}

// TestRegionlessModeRegionalGetsNothing: in regionless mode a regional ClusterDeployment gets no ConfigMap (promxy
// would otherwise be pointed at a cluster without storage), and the one made before is removed; the preview
// (operator/outputs.Compute) says the same, as the end-to-end test of scenario 02 checks.
func TestRegionlessModeRegionalGetsNothing(t *testing.T) {
	ctx := context.Background()
	create(t, newCD("ns-b", "rl-regional", "regional", "", "", nil, domainAnn("rl.example.com")))
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-b", Name: "kof-rl-regional"}}
	eventually(t, func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(before), before) })
	cfg := testConfig()
	cfg.Regionless, cfg.RegionlessDomain = true, "mothership.example.com"
	regionless := &Reconciler{Client: env.Client, Config: cfg}
	key := types.NamespacedName{Namespace: "ns-b", Name: "rl-regional"}
	if _, err := regionless.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	// The manager of this package runs in regional mode and writes the ConfigMap again: it must be another one.
	after := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(before), after); client.IgnoreNotFound(err) != nil ||
		(err == nil && after.UID == before.UID) {
		t.Errorf("regional ConfigMap kept in regionless mode (uid %s, err %v)", after.UID, err)
	}
	if c, _ := regionless.Condition(key); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "regionless mode") {
		t.Errorf("condition = %+v, want True saying regionless mode", c)
	}
}

// reconcileOnce runs r for key, again when the API server reports a conflict: the manager's own reconciler writes
// the same ClusterDeployment concurrently, and a conflict is what controller-runtime retries too.
func reconcileOnce(r *Reconciler, key types.NamespacedName) error {
	var err error
	for range 10 {
		if _, err = r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); !apierrors.IsConflict(err) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// The mappers that enqueue children for a regional's or a template's change mark the regionals snapshot outdated
// before they return: the event handlers of one informer run in no fixed order, so a child reconcile they cause
// must not find the snapshot of before the change (TestChildConfigMapFollowsRegional failed now and then so).
func TestMappersOutdateTheRegionalsSnapshot(t *testing.T) {
	ctx := context.Background()
	regional := newCD("ns-a", "snap-regional", "regional", "", "", nil, nil)
	tpl := &kcmv1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "kcm-system", Name: awsTpl}}
	for name, mapper := range map[string]func() []reconcile.Request{
		"childrenOfRegional": func() []reconcile.Request { return rec.childrenOfRegional(ctx, regional) },
		"usersOfTemplate":    func() []reconcile.Request { return rec.usersOfTemplate(ctx, tpl) },
	} {
		before := rec.snapshot.changes.Load()
		mapper()
		if rec.snapshot.changes.Load() == before {
			t.Errorf("%s left the regionals snapshot current", name)
		}
	}
}

// A regional that is gone, or no longer regional, leaves no kept view behind (the views are keyed by UID, which a
// NotFound reconcile does not know).
func TestGoneRegionalViewForgotten(t *testing.T) {
	ctx := context.Background()
	regional := newCD("ns-b", "views-regional", "regional", "", "", nil, domainAnn("views.example.com"))
	child := newCD("ns-b", "views-child", "child", "", "", map[string]string{kofv1.RegionalClusterNameLabel: "views-regional"}, nil)
	create(t, regional, child)
	eventually(t, func() error { _, err := getCM("ns-b", names.ChildConfigMap("views-child")); return err })
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(regional), regional); err != nil {
		t.Fatal(err)
	}
	uid := regional.UID
	if err := env.Client.Delete(ctx, regional); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error { return gone(regional) })
	eventually(t, func() error {
		if _, err := rec.regionals(ctx); err != nil {
			return err
		}
		rec.views.mu.Lock()
		_, kept := rec.views.m[uid]
		n := len(rec.views.m)
		rec.views.mu.Unlock()
		if kept {
			return fmt.Errorf("view of deleted regional %s still kept (%d views)", uid, n)
		}
		return nil
	})
}

// TestMalformedHTTPConfigKeepsLastValid: a regional's `kof-http-config` made malformed after a valid one keeps the
// valid settings in its ConfigMap and its child's copy (regression: they fell back to the defaults, turning TLS
// verification back on for a regional with a self-signed certificate), and the condition says so.
func TestMalformedHTTPConfigKeepsLastValid(t *testing.T) {
	ctx := context.Background()
	const valid = `{"dial_timeout":"7s","tls_config":{"insecure_skip_verify":true}}`
	ann := domainAnn("keephttp.example.com")
	ann[kofv1.HTTPConfigAnnotation] = valid
	regional := newCD("ns-a", "keephttp-regional", "regional", "", "", nil, ann)
	create(t, regional, newCD("ns-a", "keephttp-child", "child", "", "",
		map[string]string{kofv1.RegionalClusterNameLabel: "keephttp-regional"}, nil))
	var kept string
	eventually(t, func() error {
		data, err := getCM("ns-a", "kof-keephttp-regional")
		if err != nil || data[discovery.KeyHTTPConfig] == "" {
			return fmt.Errorf("regional http config %q (err %v), want the valid one", data[discovery.KeyHTTPConfig], err)
		}
		kept = data[discovery.KeyHTTPConfig]
		return nil
	})
	eventually(t, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(regional), regional); err != nil {
			return err
		}
		regional.Annotations[kofv1.HTTPConfigAnnotation] = `{"dial_timeout": 5}`
		return env.Client.Update(ctx, regional)
	})
	c := condition(t, "ns-a", "keephttp-regional", func(c metav1.Condition) bool {
		return c.Reason == kofv1.ReasonInvalidAnnotation
	})
	if !strings.Contains(c.Message, "keep the last valid settings") {
		t.Errorf("regional condition %q does not say the last valid settings are kept", c.Message)
	}
	for _, name := range []string{"kof-keephttp-regional", names.ChildConfigMap("keephttp-child")} {
		eventually(t, func() error {
			data, err := getCM("ns-a", name)
			if err != nil || data[discovery.KeyHTTPConfig] != kept {
				return fmt.Errorf("%s http config %q (err %v), want the last valid %q", name, data[discovery.KeyHTTPConfig], err, kept)
			}
			return nil
		})
	}
}
