package regional

import (
	"context"
	"fmt"
	"kof.dev/kof/operator/vmapi"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Name is the controller's name (metrics, logs, events).
const Name = "kof-regional"

// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=kof.k0rdent.mirantis.com,resources=promxyservergroups;vmstorageconnections,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=operator.victoriametrics.com,resources=vmusers,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=k0rdent.mirantis.com,resources=multiclusterservices,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller for regional ConfigMaps and the objects they own, and operator-made
// MultiClusterServices traced back to a ConfigMap by owner labels.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return fmt.Errorf("setup %s controller: Client and Recorder are required", Name)
	}
	regionalOnly := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[kofv1.ClusterRoleLabel] == kofv1.RoleRegional
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&corev1.ConfigMap{}, builder.WithPredicates(regionalOnly)).
		Owns(&corev1.Secret{}).
		Owns(&vmapi.VMUser{}).
		Owns(&kofv1.PromxyServerGroup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&kofv1.VMStorageConnection{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&kcmv1.MultiClusterService{}, handler.EnqueueRequestsFromMapFunc(ownerOfMCS)).
		Complete(r)
}

// ownerOfMCS maps an operator-made MCS to the ConfigMap named by its owner labels.
func ownerOfMCS(_ context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[kofv1.OwnerKindLabel] != "ConfigMap" || l[kofv1.OwnerNameLabel] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: l[kofv1.OwnerNamespaceLabel], Name: l[kofv1.OwnerNameLabel]}}}
}
