// Package regional reconciles regional ConfigMaps (`kof-<c>`, label `k0rdent.mirantis.com/kof-cluster-role:
// regional`), whether written by the ClusterDeployment controller or, in regionless mode, by the Regionless runnable
// of this package. For each one it keeps the record rules ConfigMap `kof-record-vmrules-<c>` (created empty, filled
// by the rules controller), the regional admin VMUser bundle, the PromxyServerGroup and the three
// VMStorageConnections (traces, logs, audit logs) pointing at the regional's read endpoints (in-cluster endpoints in
// regionless mode, in-mesh endpoints in Istio mode), and refreshes the data of its children's ConfigMaps. A finalizer
// on the ConfigMap removes all of them, cluster-scoped propagation included, when it is deleted.
//
// ConfigMaps have no status: failures and transitions are reported as Events on the ConfigMap.
package regional

import (
	"context"
	"fmt"
	"strings"
	"sync"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/endpoints"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/bundle"
	"kof.dev/kof/operator/names"
)

// Event reasons of this controller.
const (
	ReasonConfigured   = "RegionalConfigured"
	ReasonInvalidInput = "InvalidRegionalConfig"
)

// emptyVMRules is the initial `values` of a record rules ConfigMap (docs/contract.md, "vmrules ConfigMap").
const emptyVMRules = "vmrules:\n  groups: {}\n"

// VMRulesKey is the data key of the record rules ConfigMap.
const VMRulesKey = "values"

// Reconciler reconciles regional ConfigMaps.
type Reconciler struct {
	Client   client.Client
	Config   config.Config
	Recorder events.EventRecorder
	// APIReader reads the API server directly; optional. When set, the admin bundle an earlier KOF release named
	// with decimal Adler-32 is removed once its replacement exists (the cache holds only labelled objects).
	APIReader client.Reader

	mu     sync.Mutex
	last   map[types.NamespacedName]string
	legacy bundle.LegacyCleaner
}

func (r *Reconciler) applier() apply.Applier {
	return apply.Applier{Reader: r.Client, Writer: r.Client}
}

// Reconcile implements reconcile.Reconciler: Get → cleanup on deletion → finalizer → phases (rules ConfigMap, admin
// bundle, PromxyServerGroup, storage connections, children refresh) → event when the outcome changed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get configmap %s: %w", req.NamespacedName, err)
	}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if !cm.DeletionTimestamp.IsZero() || cm.Labels[kofv1.ClusterRoleLabel] != kofv1.RoleRegional {
		return reconcile.Result{}, r.cleanup(ctx, cm)
	}
	if !controllerutil.ContainsFinalizer(cm, kofv1.RegionalConfigMapFinalizer) {
		base := cm.DeepCopy()
		controllerutil.AddFinalizer(cm, kofv1.RegionalConfigMapFinalizer)
		if err := r.Client.Patch(ctx, cm, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to configmap %s: %w", req.NamespacedName, err)
		}
	}
	in, err := Parse(cm)
	if err != nil {
		r.publish(cm, "Warning", ReasonInvalidInput, err.Error())
		return reconcile.Result{}, nil // invalid input: wait for the ConfigMap to change
	}
	for _, phase := range []func(context.Context, *corev1.ConfigMap, Input) error{
		r.ensureVMRules, r.ensureAdmin, r.ensurePromxy, r.ensureConnections, r.refreshChildren,
	} {
		if err := phase(ctx, cm, in); err != nil {
			return reconcile.Result{}, err
		}
	}
	r.publish(cm, "Normal", ReasonConfigured, fmt.Sprintf("admin VMUser, PromxyServerGroup %s and storage connections of %s are up to date",
		names.PromxyServerGroup(cm.Namespace, in.Cluster), in.Cluster))
	return reconcile.Result{}, nil
}

// publish emits an Event when the reason or note differs from the last one for cm.
func (r *Reconciler) publish(cm *corev1.ConfigMap, kind, reason, note string) {
	key := types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
	r.mu.Lock()
	if r.last == nil {
		r.last = map[types.NamespacedName]string{}
	}
	changed := r.last[key] != reason+"\x00"+note
	r.last[key] = reason + "\x00" + note
	r.mu.Unlock()
	if changed && r.Recorder != nil {
		r.Recorder.Eventf(cm, nil, kind, reason, "Reconcile", "%s", note)
	}
}

// Input is what a regional ConfigMap says about its cluster.
type Input struct {
	// Cluster is the regional cluster's name (data key regional_cluster_name, else the ConfigMap name without `kof-`).
	Cluster string
	// Regionless is true for the regionless ConfigMap (label `k0rdent.mirantis.com/kof-regionless: "true"`).
	Regionless bool
	// Reads are the read endpoints the management cluster uses.
	Reads endpoints.Set
	// HTTP is the parsed `kof_http_config`.
	HTTP kofv1.HTTPClientConfig
}

// Parse returns the Input of a regional ConfigMap: in-cluster reads for regionless, in-mesh reads for Istio, the
// stored read endpoints otherwise. Errors name the data key and the fix.
func Parse(cm *corev1.ConfigMap) (Input, error) {
	in := Input{Cluster: cm.Data[discovery.KeyRegionalClusterName], Regionless: cm.Labels[kofv1.RegionlessLabel] == kofv1.TrueValue}
	if in.Cluster == "" {
		c, ok := strings.CutPrefix(cm.Name, names.RegionalConfigMapPrefix)
		if !ok || c == "" {
			return in, fmt.Errorf("data.%s: missing; set it to the regional cluster's name", discovery.KeyRegionalClusterName)
		}
		in.Cluster = c
	}
	switch {
	case in.Regionless:
		in.Reads = endpoints.InCluster().ReadOnly()
	case cm.Data[discovery.KeyIstioRole] == kofv1.IstioMember:
		in.Reads = endpoints.Istio(in.Cluster).ReadOnly()
	default:
		in.Reads = discovery.SetFromData(cm.Data).ReadOnly()
	}
	for key, u := range map[string]string{
		discovery.KeyReadMetrics: in.Reads.ReadMetrics, discovery.KeyReadLogs: in.Reads.ReadLogs,
		discovery.KeyReadAuditLogs: in.Reads.ReadAuditLogs, discovery.KeyReadTraces: in.Reads.ReadTraces,
	} {
		if err := endpoints.CheckURL(u); err != nil {
			return in, fmt.Errorf("data.%s: %w", key, err)
		}
	}
	hc, err := endpoints.ParseHTTPConfig(cm.Data[discovery.KeyHTTPConfig])
	if err != nil {
		return in, fmt.Errorf("data.%s: %w", discovery.KeyHTTPConfig, err)
	}
	in.HTTP = hc
	return in, nil
}

// ownerRef returns a controller owner reference to cm.
func ownerRef(cm *corev1.ConfigMap) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}}
}

// ensureVMRules creates the record rules ConfigMap when it is missing; its content belongs to the rules controller.
func (r *Reconciler) ensureVMRules(ctx context.Context, cm *corev1.ConfigMap, in Input) error {
	key := types.NamespacedName{Namespace: cm.Namespace, Name: names.VMRulesConfigMap(in.Cluster)}
	err := r.Client.Get(ctx, key, &corev1.ConfigMap{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get configmap %s: %w", key, err)
	}
	rules := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: bundle.Labels(), OwnerReferences: ownerRef(cm)},
		Data:       map[string]string{VMRulesKey: emptyVMRules},
	}
	if err := r.Client.Create(ctx, rules, client.FieldOwner(apply.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create configmap %s: %w", key, err)
	}
	return nil
}

// adminBase returns the admin bundle base of the ConfigMap's cluster.
func adminBase(cm *corev1.ConfigMap, in Input) string {
	return names.AdminVMUserBase(cm.Namespace, in.Cluster)
}

// ensureAdmin keeps the admin VMUser bundle (no tenant filter), propagated to the regional cluster unless regionless.
func (r *Reconciler) ensureAdmin(ctx context.Context, cm *corev1.ConfigMap, in Input) error {
	regional := in.Cluster
	if in.Regionless {
		regional = ""
	}
	if _, err := (bundle.Keeper{Applier: r.applier(), Config: r.Config}).Ensure(ctx, bundle.Spec{
		Base: adminBase(cm, in), Namespace: cm.Namespace, Owner: cm, Regional: regional,
		OwnerLabels: bundle.OwnerLabels("ConfigMap", cm.Namespace, cm.Name),
	}); err != nil {
		return err
	}
	return r.removeLegacy(ctx, cm, in)
}

// removeLegacy deletes, once per ConfigMap and process, the admin bundle of an earlier KOF release.
func (r *Reconciler) removeLegacy(ctx context.Context, cm *corev1.ConfigMap, in Input) error {
	if r.APIReader == nil {
		return nil
	}
	key := types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
	k := bundle.Keeper{Applier: apply.Applier{Reader: r.APIReader, Writer: r.Client}, Config: r.Config}
	if err := r.legacy.Remove(ctx, k, key, cm.Namespace, names.LegacyAdminVMUserBase(cm.Namespace, in.Cluster)); err != nil {
		return fmt.Errorf("remove legacy admin bundle of %s: %w", key, err)
	}
	return nil
}

// cleanup deletes everything the ConfigMap caused and removes the finalizer.
func (r *Reconciler) cleanup(ctx context.Context, cm *corev1.ConfigMap) error {
	if !controllerutil.ContainsFinalizer(cm, kofv1.RegionalConfigMapFinalizer) {
		return nil
	}
	in, _ := Parse(cm) // only the cluster name is needed; it is set even when other data is invalid
	if in.Cluster != "" {
		a := r.applier()
		objs := []client.Object{
			&kofv1.PromxyServerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: names.PromxyServerGroup(cm.Namespace, in.Cluster)}},
		}
		for _, k := range []names.StorageKind{names.StorageTraces, names.StorageLogs, names.StorageAuditLogs} {
			objs = append(objs, &kofv1.VMStorageConnection{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace,
				Name: names.StorageConnection(k, cm.Namespace, in.Cluster)}})
		}
		for _, o := range objs {
			if _, err := a.Delete(ctx, o); err != nil {
				return err
			}
		}
		if _, err := (bundle.Keeper{Applier: a, Config: r.Config}).Remove(ctx, cm.Namespace, adminBase(cm, in)); err != nil {
			return err
		}
		if _, err := (bundle.Keeper{Applier: a, Config: r.Config}).Remove(ctx, cm.Namespace,
			names.LegacyAdminVMUserBase(cm.Namespace, in.Cluster)); err != nil {
			return err
		}
	}
	var mcs kcmv1.MultiClusterServiceList
	if err := r.Client.List(ctx, &mcs, client.MatchingLabels(bundle.OwnerLabels("ConfigMap", cm.Namespace, cm.Name))); err != nil {
		return fmt.Errorf("list multiclusterservices of configmap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	for i := range mcs.Items {
		if _, err := r.applier().Delete(ctx, &mcs.Items[i]); err != nil {
			return err
		}
	}
	base := cm.DeepCopy()
	controllerutil.RemoveFinalizer(cm, kofv1.RegionalConfigMapFinalizer)
	if err := r.Client.Patch(ctx, cm, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of configmap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}
