// Package regional reconciles regional ConfigMaps (`kof-<c>`, label `k0rdent.mirantis.com/kof-cluster-role:
// regional`), whether written by the ClusterDeployment controller or, in regionless mode, by the Regionless runnable
// of this package. For each one it keeps the regional admin VMUser bundle, the PromxyServerGroup and the three
// VMStorageConnections (traces, logs, audit logs) pointing at the regional's read endpoints (in-cluster endpoints in
// regionless mode, in-mesh endpoints in Istio mode), every object the one operator/outputs defines. A finalizer on
// the ConfigMap removes all of them, cluster-scoped propagation included, when it is deleted. The vmrules
// ConfigMap belongs to the rules controller and the child ConfigMaps to the ClusterDeployment controller.
//
// ConfigMaps have no status: the RegionalConfigured condition of each reconcile (one pure function of the phase
// outcomes) is published as an Event on the ConfigMap when it changes.
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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/bundle"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// Reconciler reconciles regional ConfigMaps.
type Reconciler struct {
	Client   client.Client
	Config   config.Config
	Recorder events.EventRecorder
	// APIReader reads the API server directly; optional. When set, the admin bundle an earlier KOF release named
	// with decimal Adler-32 is removed once its replacement exists (the cache holds only labelled objects).
	APIReader client.Reader
	// Metadata, optional, sends the applies and reads back only the answers' metadata (apply.MetadataWriter).
	Metadata *apply.MetadataWriter

	once   sync.Once
	memory *phase.Memory
	legacy bundle.LegacyCleaner
	// written and passwords keep what this process applied while the cache lags (apply.Written, bundle.Passwords).
	written   apply.Written
	passwords bundle.Passwords
}

// state is one reconcile of one regional ConfigMap.
type state struct {
	cm *corev1.ConfigMap
	in outputs.RegionalInput
}

func (r *Reconciler) mem() *phase.Memory {
	r.once.Do(func() { r.memory = &phase.Memory{Recorder: r.Recorder, Action: kofv1.ActionConfigureRegional} })
	return r.memory
}

func (r *Reconciler) applier() apply.Applier {
	return apply.Applier{Reader: r.Client, Writer: r.Client, Written: &r.written, Metadata: r.Metadata}
}

// Reconcile implements reconcile.Reconciler in the one shape (operator/internal/phase).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return phase.Reconcile[*state](ctx, r, req)
}

// Get reads the ConfigMap; a gone one is forgotten.
func (r *Reconciler) Get(ctx context.Context, req reconcile.Request) (*state, bool, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			r.mem().Forget(req.NamespacedName)
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("get configmap %s: %w", req.NamespacedName, err)
	}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return &state{cm: cm}, true, nil
}

// Finalize cleans up a ConfigMap being deleted or no longer regional, removes the regionless ConfigMap the
// operator made when regionless mode is off (switched off, or left by an earlier installation: its promxy server
// group and storage connections must go), and otherwise adds the finalizer.
func (r *Reconciler) Finalize(ctx context.Context, s *state) (bool, error) {
	cm := s.cm
	if !cm.DeletionTimestamp.IsZero() || cm.Labels[kofv1.ClusterRoleLabel] != kofv1.RoleRegional {
		return true, r.cleanup(ctx, cm)
	}
	if cm.Labels[kofv1.RegionlessLabel] == kofv1.TrueValue && !r.Config.Regionless &&
		cm.Labels[kofv1.ManagedByLabel] == kofv1.ManagedBy {
		if err := r.cleanup(ctx, cm); err != nil {
			return true, err
		}
		if _, err := r.applier().Delete(ctx, cm); err != nil {
			return true, err
		}
		return true, nil
	}
	if controllerutil.ContainsFinalizer(cm, kofv1.RegionalConfigMapFinalizer) {
		return false, nil
	}
	base := cm.DeepCopy()
	controllerutil.AddFinalizer(cm, kofv1.RegionalConfigMapFinalizer)
	if err := r.Client.Patch(ctx, cm, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("add finalizer to configmap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return false, nil
}

// Phases returns parse → admin bundle → PromxyServerGroup → storage connections.
func (r *Reconciler) Phases(*state) []phase.Phase[*state] {
	apply := kofv1.ReasonApplyFailed
	return []phase.Phase[*state]{
		{Name: "parse", Run: r.parse},
		{Name: "admin-bundle", FailReason: apply, Run: r.ensureAdmin},
		{Name: "promxy-server-group", FailReason: apply, Run: r.ensurePromxy},
		{Name: "storage-connections", FailReason: apply, Run: r.ensureConnections},
	}
}

// Publish emits the RegionalConfigured condition of the outcomes when it changed.
func (r *Reconciler) Publish(_ context.Context, s *state, outcomes []phase.Outcome) error {
	r.mem().Publish(s.cm, Configured(outcomes))
	return nil
}

// Configured returns the RegionalConfigured condition of the phase outcomes of a regional ConfigMap.
func Configured(outcomes []phase.Outcome) metav1.Condition {
	return phase.Summary(kofv1.ConditionRegionalConfigured, outcomes, kofv1.ReasonRegionalConfigured, "configured", 0)
}

// parse reads the ConfigMap (outputs.ParseRegionalConfigMap): unusable data stops the reconcile until the
// ConfigMap changes; a malformed http config is reported and the last valid settings, those of the existing
// PromxyServerGroup, are kept (the defaults when there is none).
func (r *Reconciler) parse(ctx context.Context, s *state) (phase.Outcome, error) {
	in, ignored, err := outputs.ParseRegionalConfigMap(s.cm)
	if err != nil {
		s.in = in
		return phase.Invalid(kofv1.ReasonInvalidRegionalConfig, err.Error()), nil
	}
	if in.HTTPMalformed {
		var psg kofv1.PromxyServerGroup
		key := types.NamespacedName{Namespace: in.Namespace, Name: names.PromxyServerGroup(in.Namespace, in.Cluster)}
		switch err := r.Client.Get(ctx, key, &psg); {
		case err == nil:
			in.HTTP = psg.Spec.HTTPClient
		case !apierrors.IsNotFound(err):
			return phase.Outcome{}, fmt.Errorf("get promxyservergroup %s: %w", key, err)
		}
	}
	s.in = in
	if len(ignored) > 0 {
		msgs := make([]string, len(ignored))
		for i, e := range ignored {
			msgs[i] = e.Error()
		}
		return phase.Degraded(kofv1.ReasonInvalidRegionalConfig, strings.Join(msgs, "; ")), nil
	}
	return phase.Done(""), nil
}

// ensureAdmin keeps the admin VMUser bundle (outputs.AdminBundle), then removes the one of an earlier release.
func (r *Reconciler) ensureAdmin(ctx context.Context, s *state) (phase.Outcome, error) {
	if _, err := (bundle.Keeper{Applier: r.applier(), Config: r.Config, Passwords: &r.passwords}).Ensure(ctx, outputs.AdminBundle(s.in), s.cm); err != nil {
		return phase.Outcome{}, err
	}
	if r.APIReader != nil {
		key := types.NamespacedName{Namespace: s.cm.Namespace, Name: s.cm.Name}
		k := bundle.Keeper{Applier: apply.Applier{Reader: r.APIReader, Writer: r.Client}, Config: r.Config}
		if err := r.legacy.Remove(ctx, k, key, s.cm.Namespace, names.LegacyAdminVMUserBase(s.cm.Namespace, s.in.Cluster)); err != nil {
			return phase.Outcome{}, fmt.Errorf("remove legacy admin bundle of %s: %w", key, err)
		}
	}
	return phase.Done("admin VMUser " + names.VMUser(names.AdminVMUserBase(s.in.Namespace, s.in.Cluster)) + " is up to date"), nil
}

// ensurePromxy applies the PromxyServerGroup (outputs.PromxyServerGroup), controlled by the ConfigMap.
func (r *Reconciler) ensurePromxy(ctx context.Context, s *state) (phase.Outcome, error) {
	psg, err := outputs.PromxyServerGroup(r.Config, s.in)
	if err != nil {
		return phase.Invalid(kofv1.ReasonInvalidRegionalConfig, err.Error()), nil
	}
	a := r.applier()
	if err := a.Own(psg, s.cm); err != nil {
		return phase.Outcome{}, err
	}
	if _, err := a.Apply(ctx, psg); err != nil {
		return phase.Outcome{}, err
	}
	return phase.Done("PromxyServerGroup " + psg.Name + " is up to date"), nil
}

// ensureConnections applies the three storage connections (outputs.StorageConnections), controlled by the ConfigMap.
func (r *Reconciler) ensureConnections(ctx context.Context, s *state) (phase.Outcome, error) {
	a := r.applier()
	for _, conn := range outputs.StorageConnections(r.Config, s.in) {
		if err := a.Own(conn, s.cm); err != nil {
			return phase.Outcome{}, err
		}
		if _, err := a.Apply(ctx, conn); err != nil {
			return phase.Outcome{}, err
		}
	}
	return phase.Done("storage connections of " + s.in.Cluster + " are up to date"), nil
}

// cleanup deletes everything the ConfigMap caused and removes the finalizer.
func (r *Reconciler) cleanup(ctx context.Context, cm *corev1.ConfigMap) error {
	if !controllerutil.ContainsFinalizer(cm, kofv1.RegionalConfigMapFinalizer) {
		return nil
	}
	in, _, _ := outputs.ParseRegionalConfigMap(cm) // only the cluster name is needed; it is set even when other data is invalid
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
		k := bundle.Keeper{Applier: a, Config: r.Config}
		for _, base := range []string{names.AdminVMUserBase(cm.Namespace, in.Cluster), names.LegacyAdminVMUserBase(cm.Namespace, in.Cluster)} {
			if _, err := k.Remove(ctx, cm.Namespace, base); err != nil {
				return err
			}
		}
	}
	var mcs kcmv1.MultiClusterServiceList
	if err := r.Client.List(ctx, &mcs, client.MatchingLabels(outputs.OwnerLabels("ConfigMap", cm.Namespace, cm.Name))); err != nil {
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
	r.mem().Forget(client.ObjectKeyFromObject(cm))
	return nil
}
