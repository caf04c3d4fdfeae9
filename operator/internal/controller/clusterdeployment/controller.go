// Package clusterdeployment reconciles KOF ClusterDeployments (label `k0rdent.mirantis.com/kof-cluster-role`):
// a regional cluster gets its ConfigMap `kof-<c>` (17 keys, docs/contract.md); a child gets `kof-cluster-config-<c>`,
// a copy of its regional's data, and its VMUser bundle; a KCM region cluster gets the propagation MCSs of its child
// configuration and record rules. Deleting a ClusterDeployment removes every cluster-scoped object it caused
// (finalizer `k0rdent.mirantis.com/kof-cluster-cleanup`) and the namespaced ones explicitly.
//
// ClusterDeployment conditions belong to KCM, so this controller writes none. The outcome of each reconcile is a
// condition (type KOFConfigured) computed by one pure function; it is published as a Kubernetes Event on the
// ClusterDeployment when it changes (reason = condition reason, note = condition message), and is readable in
// memory through Reconciler.Condition for tests and metrics. Invalid input (malformed annotations or spec.config, no
// regional) is never retried hot: the next reconcile comes from a change of the inputs.
package clusterdeployment

import (
	"context"
	"fmt"
	"sync"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
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
)

// ConditionKOFConfigured is the type of the condition this controller computes per ClusterDeployment.
const ConditionKOFConfigured = "KOFConfigured"

// Reasons of ConditionKOFConfigured.
const (
	ReasonConfigured        = "Configured"
	ReasonInvalidConfig     = "InvalidConfig"
	ReasonInvalidAnnotation = "InvalidAnnotation"
	ReasonNoRegional        = "NoRegionalCluster"
	ReasonRegionalPending   = "RegionalConfigPending"
)

// pendingRequeue is how long a child waits for its regional's ConfigMap before looking again.
const pendingRequeue = 15 * time.Second

// Reconciler reconciles ClusterDeployments. Client reads through the manager's cache and writes; APIReader reads the
// API server directly (only to find objects of earlier KOF releases, which the cache does not hold).
type Reconciler struct {
	Client    ctrl.Client
	APIReader ctrl.Reader
	Config    config.Config
	Recorder  events.EventRecorder

	mu         sync.Mutex
	conditions map[types.NamespacedName]metav1.Condition
	legacy     bundle.LegacyCleaner
}

// Condition returns the last KOFConfigured condition computed for the ClusterDeployment key, and whether there is one.
func (r *Reconciler) Condition(key types.NamespacedName) (metav1.Condition, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.conditions[key]
	return c, ok
}

func (r *Reconciler) applier() apply.Applier {
	return apply.Applier{Reader: r.Client, Writer: r.Client}
}

func (r *Reconciler) keeper() bundle.Keeper {
	return bundle.Keeper{Applier: r.applier(), Config: r.Config}
}

// Reconcile implements reconcile.Reconciler: Get → cleanup on deletion or role removal → finalizer and name label →
// phases of the cluster's role → publish the condition when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cd := &kcmv1.ClusterDeployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, cd); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get clusterdeployment %s: %w", req.NamespacedName, err)
	}
	cd.SetGroupVersionKind(kcmv1.GroupVersion.WithKind(kcmv1.ClusterDeploymentKind))
	role := discovery.Role(cd)
	if !cd.DeletionTimestamp.IsZero() || role == "" {
		return reconcile.Result{}, r.cleanup(ctx, cd)
	}
	if err := r.ensureMetadata(ctx, cd); err != nil {
		return reconcile.Result{}, err
	}
	var (
		cond metav1.Condition
		res  reconcile.Result
		err  error
	)
	if err := r.removeOtherRole(ctx, cd, role); err != nil {
		return reconcile.Result{}, err
	}
	switch role {
	case kofv1.RoleRegional:
		cond, err = r.reconcileRegional(ctx, cd)
	default:
		cond, res, err = r.reconcileChild(ctx, cd)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	r.publish(cd, cond)
	return res, nil
}

// ensureMetadata adds the finalizer and the `k0rdent.mirantis.com/kof-cluster-name` label by merge patch, only when
// one of them is missing (never a full update of a KCM object).
func (r *Reconciler) ensureMetadata(ctx context.Context, cd *kcmv1.ClusterDeployment) error {
	if controllerutil.ContainsFinalizer(cd, kofv1.ClusterDeploymentFinalizer) && cd.Labels[kofv1.ClusterNameLabel] == cd.Name {
		return nil
	}
	base := cd.DeepCopy()
	controllerutil.AddFinalizer(cd, kofv1.ClusterDeploymentFinalizer)
	if cd.Labels == nil {
		cd.Labels = map[string]string{}
	}
	cd.Labels[kofv1.ClusterNameLabel] = cd.Name
	if err := r.Client.Patch(ctx, cd, ctrl.MergeFromWithOptions(base, ctrl.MergeFromWithOptimisticLock{}),
		ctrl.FieldOwner(apply.FieldManager)); err != nil {
		return fmt.Errorf("patch clusterdeployment %s/%s metadata: %w", cd.Namespace, cd.Name, err)
	}
	return nil
}

// publish records cond for cd and emits an Event when its status, reason or message changed.
func (r *Reconciler) publish(cd *kcmv1.ClusterDeployment, cond metav1.Condition) {
	key := types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name}
	r.mu.Lock()
	if r.conditions == nil {
		r.conditions = map[types.NamespacedName]metav1.Condition{}
	}
	prev, had := r.conditions[key]
	changed := !had || prev.Status != cond.Status || prev.Reason != cond.Reason || prev.Message != cond.Message
	if changed {
		cond.LastTransitionTime = metav1.Now()
		r.conditions[key] = cond
	}
	r.mu.Unlock()
	if !changed || r.Recorder == nil {
		return
	}
	kind := "Normal"
	if cond.Status != metav1.ConditionTrue {
		kind = "Warning"
	}
	r.Recorder.Eventf(cd, nil, kind, cond.Reason, "Reconcile", "%s", cond.Message)
}

func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conditions, key)
	r.legacy.Forget(key)
}

// condition returns a KOFConfigured condition.
func condition(ok bool, reason, message string, generation int64) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: ConditionKOFConfigured, Status: status, Reason: reason, Message: message,
		ObservedGeneration: generation}
}

// IsConfigured reports whether conds hold a True KOFConfigured condition.
func IsConfigured(conds []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conds, ConditionKOFConfigured)
}
