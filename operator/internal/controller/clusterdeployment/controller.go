// Package clusterdeployment reconciles KOF ClusterDeployments (label `k0rdent.mirantis.com/kof-cluster-role`):
// a regional cluster gets its ConfigMap `kof-<c>` (17 keys, docs/contract.md) and, as a KCM region, its propagation
// MCSs; a child gets `kof-cluster-config-<c>`, a copy of its regional's data, and its VMUser bundle. This controller
// is the only writer of both ConfigMaps; every object is the one operator/outputs defines. Deleting a
// ClusterDeployment removes every cluster-scoped object it caused (by owner labels) and the namespaced ones (by
// controller reference) once the operator sees it gone; no finalizer holds the ClusterDeployment (Finalize).
//
// ClusterDeployment conditions belong to KCM, so this controller writes none. The outcome of each reconcile is a
// condition (type KOFConfigured) computed by one pure function of the phase outcomes; it is published as an Event
// on the ClusterDeployment when it changes and is readable in memory through Reconciler.Condition. Invalid input
// (malformed annotations or spec.config, no regional) is never retried hot: the next reconcile comes from a change
// of the inputs (the ClusterDeployment, its regional, its ClusterTemplate).
package clusterdeployment

import (
	"context"
	"fmt"
	"sync"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/bundle"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/outputs"
)

// Reconciler reconciles ClusterDeployments. Client reads through the manager's cache and writes; APIReader reads the
// API server directly (only to find objects of earlier KOF releases, which the cache does not hold).
type Reconciler struct {
	Client    ctrl.Client
	APIReader ctrl.Reader
	Config    config.Config
	Recorder  events.EventRecorder
	// Metadata, optional, sends the applies and reads back only the answers' metadata (apply.MetadataWriter).
	Metadata *apply.MetadataWriter

	once   sync.Once
	memory *phase.Memory
	legacy bundle.LegacyCleaner
	// written and passwords keep what this process applied while the cache lags (apply.Written, bundle.Passwords).
	written   apply.Written
	passwords bundle.Passwords
	views     regionalViews
	snapshot  regionalSnapshot
}

// state is one reconcile of one ClusterDeployment: the object, its role and what the phases found.
type state struct {
	cd       *kcmv1.ClusterDeployment
	role     string
	regional outputs.Regional
	child    outputs.Child
}

// Condition returns the last KOFConfigured condition computed for the ClusterDeployment key, and whether there is one.
func (r *Reconciler) Condition(key types.NamespacedName) (metav1.Condition, bool) {
	return r.mem().Condition(key)
}

func (r *Reconciler) mem() *phase.Memory {
	r.once.Do(func() { r.memory = &phase.Memory{Recorder: r.Recorder, Action: kofv1.ActionConfigureCluster} })
	return r.memory
}

func (r *Reconciler) applier() apply.Applier {
	return apply.Applier{Reader: r.Client, Writer: r.Client, Written: &r.written, Metadata: r.Metadata}
}

func (r *Reconciler) keeper() bundle.Keeper {
	return bundle.Keeper{Applier: r.applier(), Config: r.Config, Passwords: &r.passwords}
}

// Reconcile implements reconcile.Reconciler in the one shape (operator/internal/phase).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return phase.Reconcile[*state](ctx, r, req)
}

// Get reads the ClusterDeployment; a gone one is forgotten and what it caused is removed (removeOrphans).
func (r *Reconciler) Get(ctx context.Context, req reconcile.Request) (*state, bool, error) {
	cd := &kcmv1.ClusterDeployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, cd); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return nil, false, r.removeOrphans(ctx, req.NamespacedName)
		}
		return nil, false, fmt.Errorf("get clusterdeployment %s: %w", req.NamespacedName, err)
	}
	cd.SetGroupVersionKind(kcmv1.GroupVersion.WithKind(kcmv1.ClusterDeploymentKind))
	return &state{cd: cd, role: discovery.Role(cd)}, true, nil
}

// Finalize cleans up a ClusterDeployment being deleted or no longer KOF's and otherwise, on a regional, adds the
// `k0rdent.mirantis.com/kof-cluster-name` label (the propagation MultiClusterServices select regionals by it,
// docs/contract.md; no selector names a child, so a child gets none) in one merge patch, only when it is missing
// (never a full update of a KCM object). The label change reconciles the regional once more and writes nothing.
//
// KOF puts no finalizer on ClusterDeployments: a deleted one is cleaned up when its delete event or any event of an
// object it caused (including the initial list after a restart) finds it gone (removeOrphans), so deleting a cluster
// never waits for the operator and a removed operator leaves no ClusterDeployment stuck. The finalizer of earlier
// releases (kofv1.ClusterDeploymentFinalizer) is removed in the same patch.
func (r *Reconciler) Finalize(ctx context.Context, s *state) (bool, error) {
	cd := s.cd
	if !cd.DeletionTimestamp.IsZero() || s.role == "" {
		r.views.forget(cd.UID)
		return true, r.cleanup(ctx, cd)
	}
	label := s.role == kofv1.RoleRegional
	legacy := controllerutil.ContainsFinalizer(cd, kofv1.ClusterDeploymentFinalizer)
	if !legacy && (!label || cd.Labels[kofv1.ClusterNameLabel] == cd.Name) {
		return false, nil
	}
	base := cd.DeepCopy()
	controllerutil.RemoveFinalizer(cd, kofv1.ClusterDeploymentFinalizer)
	if label {
		if cd.Labels == nil {
			cd.Labels = map[string]string{}
		}
		cd.Labels[kofv1.ClusterNameLabel] = cd.Name
	}
	if err := r.Client.Patch(ctx, cd, ctrl.MergeFromWithOptions(base, ctrl.MergeFromWithOptimisticLock{}),
		ctrl.FieldOwner(apply.FieldManager)); err != nil {
		return false, fmt.Errorf("patch clusterdeployment %s/%s metadata: %w", cd.Namespace, cd.Name, err)
	}
	return false, nil
}

// Phases returns the phases of the cluster's role.
func (r *Reconciler) Phases(s *state) []phase.Phase[*state] {
	apply := kofv1.ReasonApplyFailed
	if s.role == kofv1.RoleRegional {
		return []phase.Phase[*state]{
			{Name: "other-role", FailReason: apply, Run: r.removeOtherRole},
			{Name: "regional-configmap", FailReason: apply, Run: r.regionalConfigMap},
			{Name: "region-propagation", FailReason: apply, Run: r.regionPropagation},
		}
	}
	return []phase.Phase[*state]{
		{Name: "other-role", FailReason: apply, Run: r.removeOtherRole},
		{Name: "binding", FailReason: apply, Run: r.bind},
		{Name: "child-objects", FailReason: apply, Run: r.childObjects},
		{Name: "legacy-bundle", FailReason: apply, Run: r.removeLegacy},
	}
}

// Publish records the KOFConfigured condition of the outcomes and emits it as an Event when it changed.
func (r *Reconciler) Publish(_ context.Context, s *state, outcomes []phase.Outcome) error {
	r.mem().Publish(s.cd, Configured(s.cd.Generation, outcomes))
	return nil
}

// Configured returns the KOFConfigured condition of phase outcomes for a ClusterDeployment of generation: False
// with the first problem's reason and every problem's message, else True (reason Configured) with the notes of
// the phases.
func Configured(generation int64, outcomes []phase.Outcome) metav1.Condition {
	return phase.Summary(kofv1.ConditionKOFConfigured, outcomes, kofv1.ReasonConfigured, "configured", generation)
}

func (r *Reconciler) forget(key types.NamespacedName) {
	r.mem().Forget(key)
	r.legacy.Forget(key)
}
