package clusterdeployment

import (
	"context"
	"fmt"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
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
// labels), and every change of a regional ClusterDeployment for the children bound to it (their ConfigMap copies
// the regional's data) and the children not configured yet (they may bind to it now).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return fmt.Errorf("setup %s controller: Client and Recorder are required", Name)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kcmv1.ClusterDeployment{}, roleIndex,
		func(o client.Object) []string {
			if role, ok := o.GetLabels()[kofv1.ClusterRoleLabel]; ok {
				return []string{role}
			}
			return nil
		}); err != nil {
		return fmt.Errorf("setup %s controller: index %s: %w", Name, roleIndex, err)
	}
	cdChanged := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{}, deletionChanged())
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&kcmv1.ClusterDeployment{}, builder.WithPredicates(cdChanged, kofOrFinalized())).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Owns(&vmapi.VMUser{}).
		Watches(&kcmv1.MultiClusterService{}, handler.EnqueueRequestsFromMapFunc(ownerOfMCS)).
		Watches(&kcmv1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.childrenOfRegional),
			builder.WithPredicates(cdChanged, regionalOnly())).
		Watches(&kcmv1.ClusterTemplate{}, handler.EnqueueRequestsFromMapFunc(r.usersOfTemplate)).
		Watches(&kcmv1.ClusterDeployment{}, r.snapshot.invalidator(), builder.WithPredicates(regionalOnly())).
		Watches(&kcmv1.ClusterTemplate{}, r.snapshot.invalidator()).
		Complete(r)
}

// roleIndex indexes the cached ClusterDeployments by the value of their role label (kofv1.ClusterRoleLabel), so that
// listing the regionals (listRegionals) does not scan the whole fleet.
const roleIndex = "kof.role"

// kofOrFinalized passes ClusterDeployments with a KOF role label or the finalizer of earlier releases; an update
// passes when either side does, so that losing the role label reaches Finalize (which then cleans up).
func kofOrFinalized() predicate.Predicate {
	ours := func(o client.Object) bool {
		_, role := o.GetLabels()[kofv1.ClusterRoleLabel]
		return role || controllerutil.ContainsFinalizer(o, kofv1.ClusterDeploymentFinalizer)
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return ours(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return ours(e.ObjectOld) || ours(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return ours(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return ours(e.Object) },
	}
}

// deletionChanged passes updates that set a deletion timestamp.
func deletionChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}

// regionalOnly passes objects labelled role regional (on either side of an update, so that losing the role counts).
func regionalOnly() predicate.Predicate {
	isRegional := func(o client.Object) bool { return o.GetLabels()[kofv1.ClusterRoleLabel] == kofv1.RoleRegional }
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return isRegional(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return isRegional(e.ObjectOld) || isRegional(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return isRegional(e.Object) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// invalidator is the event handler that marks the regionals snapshot outdated on every event it gets and enqueues
// nothing. Handlers of one informer run in no fixed order, so the mappers that enqueue children for a regional's or
// a template's change (childrenOfRegional, usersOfTemplate) mark it themselves before they return; this handler
// covers the events that enqueue nobody.
func (s *regionalSnapshot) invalidator() handler.Funcs {
	bump := func() { s.changes.Add(1) }
	return handler.Funcs{
		CreateFunc: func(context.Context, event.CreateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			bump()
		},
		UpdateFunc: func(context.Context, event.UpdateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			bump()
		},
		DeleteFunc: func(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			bump()
		},
		GenericFunc: func(context.Context, event.GenericEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			bump()
		},
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

// childrenOfRegional maps a regional ClusterDeployment to the children whose ConfigMap names it (labels
// `k0rdent.mirantis.com/kof-regional-cluster-name` and `-namespace`, from the cache, read without copies) and every
// cluster whose last reconcile did not configure it (phase.Memory.Unsettled: it may bind now). A cluster not
// reconciled yet is in the queue already.
func (r *Reconciler) childrenOfRegional(ctx context.Context, o client.Object) []reconcile.Request {
	r.snapshot.changes.Add(1) // before the requests: their reconciles must not use the regionals of before
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	add := func(key types.NamespacedName) {
		if !seen[key] {
			seen[key] = true
			out = append(out, reconcile.Request{NamespacedName: key})
		}
	}
	var cms corev1.ConfigMapList
	if err := r.Client.List(ctx, &cms, client.MatchingLabels{kofv1.RegionalClusterNameLabel: o.GetName(),
		kofv1.RegionalClusterNamespaceLabel: o.GetNamespace(), kofv1.ManagedByLabel: kofv1.ManagedBy},
		client.UnsafeDisableDeepCopy); err == nil {
		for i := range cms.Items {
			// The child is the ConfigMap's controller: its name is not always in the ConfigMap's, which
			// names.ChildConfigMap shortens and hashes when the cluster's name is long or not a DNS label.
			if ref := metav1.GetControllerOf(&cms.Items[i]); ref != nil && ref.Kind == kcmv1.ClusterDeploymentKind &&
				strings.HasPrefix(cms.Items[i].Name, names.ChildConfigMapPrefix) {
				add(types.NamespacedName{Namespace: cms.Items[i].Namespace, Name: ref.Name})
			}
		}
	}
	for _, key := range r.mem().Unsettled() {
		add(key)
	}
	return out
}

// usersOfTemplate maps a ClusterTemplate to the KOF ClusterDeployments of its namespace that name it (their cloud
// comes from its status).
func (r *Reconciler) usersOfTemplate(ctx context.Context, o client.Object) []reconcile.Request {
	r.snapshot.changes.Add(1) // before the requests, as in childrenOfRegional
	var list kcmv1.ClusterDeploymentList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.HasLabels{kofv1.ClusterRoleLabel}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.Template == o.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
