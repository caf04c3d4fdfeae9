package clusterdeployment

import (
	"context"
	"fmt"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/vmapi"
)

// objectMeta returns the metadata naming an object.
func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace}
}

// childObjects are the objects a child ClusterDeployment causes.
func childObjects(cd *kcmv1.ClusterDeployment) []ctrl.Object {
	base := names.ChildVMUserBase(cd.Namespace, cd.Name)
	return []ctrl.Object{
		&kcmv1.MultiClusterService{ObjectMeta: objectMeta(names.VMUserPropagation(base), "")},
		&vmapi.VMUser{ObjectMeta: objectMeta(names.VMUser(base), cd.Namespace)},
		&corev1.Secret{ObjectMeta: objectMeta(names.VMUserSecret(base), cd.Namespace)},
		&corev1.ConfigMap{ObjectMeta: objectMeta(names.ChildConfigMap(cd.Name), cd.Namespace)},
	}
}

// regionalObjects are the objects a regional ClusterDeployment causes.
func regionalObjects(cd *kcmv1.ClusterDeployment) []ctrl.Object {
	return []ctrl.Object{
		&kcmv1.MultiClusterService{ObjectMeta: objectMeta(names.ChildConfigPropagation(cd.Namespace, cd.Name), "")},
		&kcmv1.MultiClusterService{ObjectMeta: objectMeta(names.VMRulesPropagation(cd.Namespace, cd.Name), "")},
		&corev1.ConfigMap{ObjectMeta: objectMeta(names.RegionalConfigMap(cd.Name), cd.Namespace)},
	}
}

// cleanup removes what cd (being deleted, or no longer KOF's) caused: the cluster-scoped MCSs by owner labels, then
// its ConfigMaps and bundle, and the finalizer of earlier releases when it has one.
func (r *Reconciler) cleanup(ctx context.Context, cd *kcmv1.ClusterDeployment) error {
	if err := r.removeCaused(ctx, cd); err != nil {
		return err
	}
	r.forget(types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name})
	if !controllerutil.ContainsFinalizer(cd, kofv1.ClusterDeploymentFinalizer) {
		return nil
	}
	base := cd.DeepCopy()
	controllerutil.RemoveFinalizer(cd, kofv1.ClusterDeploymentFinalizer)
	if err := r.Client.Patch(ctx, cd, ctrl.MergeFromWithOptions(base, ctrl.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("remove finalizer of %s/%s: %w", cd.Namespace, cd.Name, err)
	}
	return nil
}

// removeOrphans removes what the ClusterDeployment key, now gone, caused: the MCSs whose owner labels name it and
// its ConfigMaps and bundle whose controller reference names a ClusterDeployment of that name. A cluster that is
// gone never caused objects of the same name under another owner, so the name is enough. The garbage collector
// removes the namespaced ones too; deleting them here does not wait for it.
func (r *Reconciler) removeOrphans(ctx context.Context, key types.NamespacedName) error {
	return r.removeCaused(ctx, &kcmv1.ClusterDeployment{ObjectMeta: objectMeta(key.Name, key.Namespace)})
}

// removeCaused deletes the MCSs whose owner labels name cd and the objects of either role this operator made for cd
// (deleteOwned; a cd without UID matches controller references by name).
func (r *Reconciler) removeCaused(ctx context.Context, cd *kcmv1.ClusterDeployment) error {
	var mcs kcmv1.MultiClusterServiceList
	if err := r.Client.List(ctx, &mcs, ctrl.MatchingLabels(outputs.OwnerLabels(kcmv1.ClusterDeploymentKind, cd.Namespace, cd.Name))); err != nil {
		return fmt.Errorf("list multiclusterservices of %s/%s: %w", cd.Namespace, cd.Name, err)
	}
	objs := []ctrl.Object{}
	for i := range mcs.Items {
		objs = append(objs, &mcs.Items[i])
	}
	objs = append(objs, childObjects(cd)...)
	objs = append(objs, regionalObjects(cd)...)
	return r.deleteOwned(ctx, cd, objs)
}

// removeOtherRole deletes what cd caused under its other role, after its role label changed: a regional's ConfigMap
// and KCM region MCSs, or a child's ConfigMap and VMUser bundle. Only objects this operator made for cd are deleted;
// absent ones cost a cache read.
func (r *Reconciler) removeOtherRole(ctx context.Context, s *state) (phase.Outcome, error) {
	objs := regionalObjects(s.cd)
	if s.role == kofv1.RoleRegional {
		objs = childObjects(s.cd)
	}
	return phase.Done(""), r.deleteOwned(ctx, s.cd, objs)
}

// deleteOwned deletes each of objs (looked up by name) that this operator made for cd.
func (r *Reconciler) deleteOwned(ctx context.Context, cd *kcmv1.ClusterDeployment, objs []ctrl.Object) error {
	a := r.applier()
	for _, o := range objs {
		owned, err := r.ownedBy(ctx, o, cd)
		if err != nil {
			return err
		}
		if !owned {
			continue
		}
		if _, err := a.Delete(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// ownedBy reports whether o (looked up by name) was made by this operator for cd: namespaced objects by controller
// reference, cluster-scoped ones by owner labels. Objects that do not exist count as not owned.
func (r *Reconciler) ownedBy(ctx context.Context, o ctrl.Object, cd *kcmv1.ClusterDeployment) (bool, error) {
	if err := r.Client.Get(ctx, ctrl.ObjectKeyFromObject(o), o); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get %T %s: %w", o, ctrl.ObjectKeyFromObject(o), err)
	}
	if o.GetNamespace() == "" {
		l := o.GetLabels()
		return l[kofv1.OwnerKindLabel] == kcmv1.ClusterDeploymentKind && l[kofv1.OwnerNamespaceLabel] == cd.Namespace &&
			l[kofv1.OwnerNameLabel] == cd.Name, nil
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == cd.UID || (ref.Kind == kcmv1.ClusterDeploymentKind && ref.Name == cd.Name && cd.UID == "") {
			return true, nil
		}
	}
	return false, nil
}
