package clusterdeployment

import (
	"context"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Name is the controller's name (metrics, logs, events).
const Name = "kof-clusterdeployment"

// +kubebuilder:rbac:groups=k0rdent.mirantis.com,resources=clusterdeployments,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=k0rdent.mirantis.com,resources=clustertemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=k0rdent.mirantis.com,resources=multiclusterservices,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=operator.victoriametrics.com,resources=vmusers,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller: ClusterDeployments (on generation, label, annotation or deletion
// changes), the ConfigMaps, Secrets and VMUsers they own, operator-made MultiClusterServices (traced back by owner
// labels) and the creation of regional ConfigMaps (children waiting for them).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	cdChanged := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, deletionChanged())
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&kcmv1.ClusterDeployment{}, builder.WithPredicates(cdChanged, kofOrFinalized())).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&vmv1beta1.VMUser{}).
		Watches(&kcmv1.MultiClusterService{}, handler.EnqueueRequestsFromMapFunc(ownerOfMCS)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.childrenOfRegional),
			builder.WithPredicates(regionalCreated())).
		Complete(r)
}

// kofOrFinalized passes ClusterDeployments with a KOF role label or this controller's finalizer.
func kofOrFinalized() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, role := o.GetLabels()[kofv1.ClusterRoleLabel]
		return role || controllerutil.ContainsFinalizer(o, kofv1.ClusterDeploymentFinalizer)
	})
}

// deletionChanged passes updates that set a deletion timestamp.
func deletionChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}

// regionalCreated passes the creation of regional ConfigMaps.
func regionalCreated() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			return e.Object.GetLabels()[kofv1.ClusterRoleLabel] == kofv1.RoleRegional
		},
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// ownerOfMCS maps an operator-made MCS to the ClusterDeployment named by its owner labels.
func ownerOfMCS(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[kofv1.OwnerKindLabel] != kcmv1.ClusterDeploymentKind || l[kofv1.OwnerNameLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[kofv1.OwnerNamespaceLabel], Name: l[kofv1.OwnerNameLabel]}}}
}

// childrenOfRegional maps a new regional ConfigMap to every child ClusterDeployment that has no child ConfigMap
// yet (from the cache), so children waiting for it do not wait for their requeue.
func (r *Reconciler) childrenOfRegional(ctx context.Context, _ client.Object) []reconcile.Request {
	var list kcmv1.ClusterDeploymentList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{kofv1.ClusterRoleLabel: kofv1.RoleChild}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		cd := &list.Items[i]
		key := types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name}
		if c, ok := r.Condition(key); ok && IsConfigured([]metav1.Condition{c}) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: key})
	}
	return out
}
