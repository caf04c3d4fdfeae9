package clusterdeployment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	addoncontrollerv1beta1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/bundle"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// template returns the ClusterTemplate of cd, or nil when it does not exist (the cloud is then unknown).
func (r *Reconciler) template(ctx context.Context, cd *kcmv1.ClusterDeployment) (*kcmv1.ClusterTemplate, error) {
	if cd.Spec.Template == "" {
		return nil, nil
	}
	tpl := &kcmv1.ClusterTemplate{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.Template}, tpl)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get clustertemplate %s/%s: %w", cd.Namespace, cd.Spec.Template, err)
	}
	return tpl, nil
}

// view returns the discovery view of cd; a non-nil condition reports invalid input.
func (r *Reconciler) view(ctx context.Context, cd *kcmv1.ClusterDeployment) (discovery.Cluster, *metav1.Condition, error) {
	tpl, err := r.template(ctx, cd)
	if err != nil {
		return discovery.Cluster{}, nil, err
	}
	c, err := discovery.FromClusterDeployment(cd, tpl)
	if err != nil {
		cond := condition(false, ReasonInvalidConfig, err.Error(), cd.Generation)
		return c, &cond, nil
	}
	return c, nil, nil
}

// controllerRef returns a controller owner reference to cd.
func controllerRef(cd *kcmv1.ClusterDeployment) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: kcmv1.GroupVersion.String(), Kind: kcmv1.ClusterDeploymentKind, Name: cd.Name, UID: cd.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}}
}

// RegionalConfigMap returns the regional ConfigMap `kof-<c>` of cd with data (outputs.RegionalConfigMap), controlled
// by cd.
func RegionalConfigMap(cd *kcmv1.ClusterDeployment, data map[string]string) *corev1.ConfigMap {
	cm := outputs.RegionalConfigMap(cd.Namespace, cd.Name, data)
	cm.OwnerReferences = controllerRef(cd)
	return cm
}

// ChildConfigMap returns the child ConfigMap `kof-cluster-config-<c>` of cd (outputs.ChildConfigMap), controlled by
// cd; its regional labels let the regional controller refresh it.
func ChildConfigMap(cd *kcmv1.ClusterDeployment, regional discovery.Ref, data map[string]string) *corev1.ConfigMap {
	cm := outputs.ChildConfigMap(cd.Namespace, cd.Name, regional, data)
	cm.OwnerReferences = controllerRef(cd)
	return cm
}

// reconcileRegional writes the regional ConfigMap and, for a KCM region cluster, its propagation MCSs.
func (r *Reconciler) reconcileRegional(ctx context.Context, cd *kcmv1.ClusterDeployment) (metav1.Condition, error) {
	c, bad, err := r.view(ctx, cd)
	if err != nil || bad != nil {
		return ptr.Deref(bad, metav1.Condition{}), err
	}
	data, err := discovery.RegionalData(c)
	if err != nil {
		return condition(false, ReasonInvalidAnnotation, err.Error(), cd.Generation), nil
	}
	a := r.applier()
	if _, err := a.Apply(ctx, RegionalConfigMap(cd, data)); err != nil {
		return metav1.Condition{}, err
	}
	if err := r.regionPropagation(ctx, cd, data); err != nil {
		return metav1.Condition{}, err
	}
	return condition(true, ReasonConfigured, "regional ConfigMap "+names.RegionalConfigMap(cd.Name)+" is up to date",
		cd.Generation), nil
}

// regionalViews returns the discovery views of every regional ClusterDeployment (cached list); ones with invalid
// input are left out.
func (r *Reconciler) regionalViews(ctx context.Context) ([]discovery.Cluster, error) {
	var list kcmv1.ClusterDeploymentList
	if err := r.Client.List(ctx, &list, ctrl.MatchingLabels{kofv1.ClusterRoleLabel: kofv1.RoleRegional}); err != nil {
		return nil, fmt.Errorf("list regional clusterdeployments: %w", err)
	}
	out := make([]discovery.Cluster, 0, len(list.Items))
	for i := range list.Items {
		cd := &list.Items[i]
		if !cd.DeletionTimestamp.IsZero() {
			continue
		}
		c, bad, err := r.view(ctx, cd)
		if err != nil {
			return nil, err
		}
		if bad == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// regionalOf returns the regional a child writes to and the name its propagation MCS selects ("" in regionless
// mode, where the bundle stays on the management cluster); a non-nil condition reports why there is none.
func (r *Reconciler) regionalOf(ctx context.Context, cd *kcmv1.ClusterDeployment, child discovery.Cluster) (discovery.Ref, string, *metav1.Condition, error) {
	var regionals []discovery.Cluster
	if !r.Config.Regionless {
		var err error
		if regionals, err = r.regionalViews(ctx); err != nil {
			return discovery.Ref{}, "", nil, err
		}
	}
	ref, err := outputs.ChildRegional(r.Config, child, regionals)
	if err != nil {
		cond := condition(false, ReasonNoRegional, err.Error(), cd.Generation)
		return discovery.Ref{}, "", &cond, nil
	}
	if r.Config.Regionless {
		return ref, "", nil, nil
	}
	return ref, ref.Name, nil, nil
}

// reconcileChild writes the child ConfigMap and the child's VMUser bundle, then removes objects of earlier releases.
func (r *Reconciler) reconcileChild(ctx context.Context, cd *kcmv1.ClusterDeployment) (metav1.Condition, reconcile.Result, error) {
	c, bad, err := r.view(ctx, cd)
	if err != nil || bad != nil {
		return ptr.Deref(bad, metav1.Condition{}), reconcile.Result{}, err
	}
	ref, selectName, bad, err := r.regionalOf(ctx, cd, c)
	if err != nil || bad != nil {
		return ptr.Deref(bad, metav1.Condition{}), reconcile.Result{}, err
	}
	var regionalCM corev1.ConfigMap
	err = r.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: names.RegionalConfigMap(ref.Name)}, &regionalCM)
	if apierrors.IsNotFound(err) {
		msg := fmt.Sprintf("waiting for ConfigMap %s/%s of regional cluster %s", ref.Namespace,
			names.RegionalConfigMap(ref.Name), ref.Name)
		return condition(false, ReasonRegionalPending, msg, cd.Generation), reconcile.Result{RequeueAfter: pendingRequeue}, nil
	}
	if err != nil {
		return metav1.Condition{}, reconcile.Result{}, fmt.Errorf("get regional configmap: %w", err)
	}
	if _, err := r.applier().Apply(ctx, ChildConfigMap(cd, ref, regionalCM.Data)); err != nil {
		return metav1.Condition{}, reconcile.Result{}, err
	}
	tenant := outputs.ChildTenant(cd.Labels)
	spec := bundle.Spec{
		Base: names.ChildVMUserBase(cd.Namespace, cd.Name), Namespace: cd.Namespace, Tenant: tenant, Owner: cd,
		Regional:    selectName,
		OwnerLabels: bundle.OwnerLabels(kcmv1.ClusterDeploymentKind, cd.Namespace, cd.Name),
	}
	if _, err := r.keeper().Ensure(ctx, spec); err != nil {
		return metav1.Condition{}, reconcile.Result{}, err
	}
	if err := r.removeLegacy(ctx, cd); err != nil {
		return metav1.Condition{}, reconcile.Result{}, err
	}
	msg := fmt.Sprintf("child ConfigMap %s and VMUser %s are up to date (regional %s/%s)",
		names.ChildConfigMap(cd.Name), names.VMUser(spec.Base), ref.Namespace, ref.Name)
	return condition(true, ReasonConfigured, msg, cd.Generation), reconcile.Result{}, nil
}

// removeLegacy deletes, once per ClusterDeployment and process, the bundle an earlier KOF release named with
// decimal Adler-32; it runs only after the replacement bundle was written. The objects are looked up through the
// API reader because the cache holds only objects this operator labelled.
func (r *Reconciler) removeLegacy(ctx context.Context, cd *kcmv1.ClusterDeployment) error {
	if r.APIReader == nil {
		return nil
	}
	key := types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name}
	keeper := bundle.Keeper{Applier: apply.Applier{Reader: r.APIReader, Writer: r.Client}, Config: r.Config}
	if err := r.legacy.Remove(ctx, keeper, key, cd.Namespace, names.LegacyChildVMUserBase(cd.Namespace, cd.Name)); err != nil {
		return fmt.Errorf("remove legacy bundle of %s: %w", key, err)
	}
	return nil
}

// cleanup removes what cd caused (cluster-scoped MCSs by owner labels, then its ConfigMaps and bundle) and its
// finalizer. Without the finalizer there is nothing to do.
func (r *Reconciler) cleanup(ctx context.Context, cd *kcmv1.ClusterDeployment) error {
	if !controllerutil.ContainsFinalizer(cd, kofv1.ClusterDeploymentFinalizer) {
		return nil
	}
	a := r.applier()
	var mcs kcmv1.MultiClusterServiceList
	if err := r.Client.List(ctx, &mcs, ctrl.MatchingLabels(bundle.OwnerLabels(kcmv1.ClusterDeploymentKind, cd.Namespace, cd.Name))); err != nil {
		return fmt.Errorf("list multiclusterservices of %s/%s: %w", cd.Namespace, cd.Name, err)
	}
	objs := []ctrl.Object{}
	for i := range mcs.Items {
		objs = append(objs, &mcs.Items[i])
	}
	base := names.ChildVMUserBase(cd.Namespace, cd.Name)
	objs = append(objs,
		&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}},
		&vmv1beta1.VMUser{ObjectMeta: metav1.ObjectMeta{Name: names.VMUser(base), Namespace: cd.Namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserSecret(base), Namespace: cd.Namespace}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigMap(cd.Name), Namespace: cd.Namespace}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.RegionalConfigMap(cd.Name), Namespace: cd.Namespace}},
	)
	for _, o := range objs {
		if owned, err := r.ownedBy(ctx, o, cd); err != nil || !owned {
			if err != nil {
				return err
			}
			continue
		}
		if _, err := a.Delete(ctx, o); err != nil {
			return err
		}
	}
	base0 := cd.DeepCopy()
	controllerutil.RemoveFinalizer(cd, kofv1.ClusterDeploymentFinalizer)
	if err := r.Client.Patch(ctx, cd, ctrl.MergeFromWithOptions(base0, ctrl.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("remove finalizer of %s/%s: %w", cd.Namespace, cd.Name, err)
	}
	r.forget(types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name})
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

// regionPropagation keeps the two propagation MCSs of a KCM region cluster (label
// `k0rdent.mirantis.com/kcm-region-cluster: "true"`) and removes them from any other regional. The child
// configuration MCS copies the regional ConfigMap (data given literally: it holds no secret); the record rules MCS
// copies `kof-record-vmrules-<c>` through a templateResourceRef.
func (r *Reconciler) regionPropagation(ctx context.Context, cd *kcmv1.ClusterDeployment, data map[string]string) error {
	a := r.applier()
	childName := names.ChildConfigPropagation(cd.Namespace, cd.Name)
	rulesName := names.VMRulesPropagation(cd.Namespace, cd.Name)
	if cd.Labels[kofv1.KCMRegionClusterLabel] != kofv1.TrueValue {
		for _, n := range []string{childName, rulesName} {
			if _, err := a.Delete(ctx, &kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range r.regionMCSs(cd, data) {
		if _, err := a.Apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// vmRulesRef is the templateResourceRef identifier of the record rules ConfigMap.
const vmRulesRef = "KOFVMRules"

// regionMCSs returns the child configuration and record rules propagation MCSs of KCM region cluster cd.
func (r *Reconciler) regionMCSs(cd *kcmv1.ClusterDeployment, data map[string]string) []*kcmv1.MultiClusterService {
	labels := bundle.Labels()
	for k, v := range bundle.OwnerLabels(kcmv1.ClusterDeploymentKind, cd.Namespace, cd.Name) {
		labels[k] = v
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": names.RegionalConfigMap(cd.Name)}, "data": data}
	childValues := mustJSON(map[string]any{"propagation": map[string]any{"enabled": true, "data": []any{cm}}})
	rulesValues := fmt.Sprintf(`{"propagation":{"enabled":true,"data":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{{ getField %q "data" | default (dict) | toJson }}}]}}`,
		names.VMRulesConfigMap(cd.Name), vmRulesRef)
	mk := func(name, values string) *kcmv1.MultiClusterService {
		m := &kcmv1.MultiClusterService{
			TypeMeta:   metav1.TypeMeta{APIVersion: kcmv1.GroupVersion.String(), Kind: kcmv1.MultiClusterServiceKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		}
		m.Spec.ClusterSelector = metav1.LabelSelector{MatchLabels: map[string]string{kofv1.ClusterNameLabel: cd.Name}}
		m.Spec.ServiceSpec.Services = []kcmv1.Service{{Name: name, Namespace: r.Config.ReleaseNamespace,
			Template: r.Config.PropagationTemplate, Values: values}}
		return m
	}
	child := mk(names.ChildConfigPropagation(cd.Namespace, cd.Name), childValues)
	rules := mk(names.VMRulesPropagation(cd.Namespace, cd.Name), rulesValues)
	rules.Spec.ServiceSpec.TemplateResourceRefs = vmRulesRefs(cd)
	return []*kcmv1.MultiClusterService{child, rules}
}

// vmRulesRefs returns the templateResourceRef of cd's record rules ConfigMap.
func vmRulesRefs(cd *kcmv1.ClusterDeployment) []addoncontrollerv1beta1.TemplateResourceRef {
	return []addoncontrollerv1beta1.TemplateResourceRef{{
		Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: names.VMRulesConfigMap(cd.Name),
			Namespace: cd.Namespace},
		Identifier: vmRulesRef,
		Optional:   true,
	}}
}

// mustJSON encodes v, which holds only strings, maps and slices and therefore always encodes, as one line without
// HTML escaping.
func mustJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "{}"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// removeOtherRole deletes what cd caused under its other role, after its role label changed: a regional's ConfigMap
// and KCM region MCSs, or a child's ConfigMap and VMUser bundle. Only objects this operator made for cd are deleted;
// absent ones cost a cache read.
func (r *Reconciler) removeOtherRole(ctx context.Context, cd *kcmv1.ClusterDeployment, role string) error {
	var objs []ctrl.Object
	if role == kofv1.RoleRegional {
		base := names.ChildVMUserBase(cd.Namespace, cd.Name)
		objs = []ctrl.Object{
			&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}},
			&vmv1beta1.VMUser{ObjectMeta: metav1.ObjectMeta{Name: names.VMUser(base), Namespace: cd.Namespace}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserSecret(base), Namespace: cd.Namespace}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigMap(cd.Name), Namespace: cd.Namespace}},
		}
	} else {
		objs = []ctrl.Object{
			&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigPropagation(cd.Namespace, cd.Name)}},
			&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMRulesPropagation(cd.Namespace, cd.Name)}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.RegionalConfigMap(cd.Name), Namespace: cd.Namespace}},
		}
	}
	for _, o := range objs {
		owned, err := r.ownedBy(ctx, o, cd)
		if err != nil {
			return err
		}
		if !owned {
			continue
		}
		if _, err := r.applier().Delete(ctx, o); err != nil {
			return err
		}
	}
	return nil
}
