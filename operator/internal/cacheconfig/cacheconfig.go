// Package cacheconfig holds the kof-operator's informer cache options: which objects it caches and what of them it
// keeps. The operator's main, the scale benchmark and the controller tests all build their cache from it, so the
// tests exercise the cache the operator ships with.
package cacheconfig

import (
	"strings"
	"unique"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
)

// Options limits the informer cache: Secrets, VMUsers and MultiClusterServices to those the operator labelled
// (objects of earlier releases are read directly from the API server), and, when KOF_WATCH_NAMESPACES is set, every
// namespaced kind to config.WatchScope (those namespaces plus the release and KCM namespaces). Of the managedFields
// the cache keeps only the digest of what the operator owns (KeepOwnedDigest): operator/internal/apply compares
// against it and reads nothing else of them. Of VMUsers, MultiClusterServices and child ConfigMaps, which the
// operator only applies, lists and deletes, it keeps the metadata alone (MetadataAndDigest, ConfigMaps).
func Options(cfg config.Config) cache.Options {
	sel := labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})
	ours := cache.ByObject{Label: sel}
	applied := cache.ByObject{Label: sel, Transform: MetadataAndDigest}
	opts := cache.Options{DefaultTransform: KeepOwnedDigest, ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}:             ours,
		&corev1.ConfigMap{}:          {Transform: ConfigMaps},
		&vmapi.VMUser{}:              applied,
		&kcmv1.MultiClusterService{}: applied,
	}}
	if scope := cfg.WatchScope(); scope != nil {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range scope {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// KeepOwnedDigest is the cache's transform: it replaces the managedFields of obj by the digest of the fields the
// operator owns in it (apply.OwnedDigest), kept in the annotation apply.DigestAnnotation, which is all the operator
// reads of them; the entries of KCM, Helm or users are often larger than the object. An object the operator has
// applied nothing to loses its managedFields and any such annotation. When the operator's entry cannot be read, the
// object keeps that entry alone and apply reads it. It returns obj, or a non-object input unchanged.
func KeepOwnedDigest(in any) (any, error) {
	obj, ok := in.(client.Object)
	if !ok {
		return in, nil
	}
	internMetadata(obj)
	d, digested := apply.OwnedDigest(obj)
	ann := obj.GetAnnotations() // the object is the transform's alone (just decoded): its map is changed in place
	if digested {
		if ann == nil {
			ann = make(map[string]string, 1)
			obj.SetAnnotations(ann)
		}
		ann[apply.DigestAnnotation] = d
		obj.SetManagedFields(nil)
		return in, nil
	}
	delete(ann, apply.DigestAnnotation)
	var own []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Manager == kofv1.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			own = append(own, e)
		}
	}
	obj.SetManagedFields(own)
	return in, nil
}

// ConfigMaps is the cache's transform of ConfigMaps: KeepOwnedDigest, and of a child ConfigMap (isChildConfigMap)
// the data dropped too, since the operator only applies it and finds its children by its labels and owner; every
// other ConfigMap (regional, rules, promxy's) keeps its data. It returns obj, or a non-object input unchanged.
func ConfigMaps(in any) (any, error) {
	if _, err := KeepOwnedDigest(in); err != nil {
		return in, err
	}
	if cm, ok := in.(*corev1.ConfigMap); ok && isChildConfigMap(cm) {
		cm.Data, cm.BinaryData = nil, nil
	}
	return in, nil
}

// isChildConfigMap reports whether cm is a child ConfigMap the operator applied (outputs.Child.ConfigMap): named
// with names.ChildConfigMapPrefix, labelled managed by KOF with the regional's name, no cluster role, controlled by
// a ClusterDeployment, and the operator's digest recorded (KeepOwnedDigest).
func isChildConfigMap(cm *corev1.ConfigMap) bool {
	ref := metav1.GetControllerOf(cm)
	_, digested := cm.Annotations[apply.DigestAnnotation]
	_, role := cm.Labels[kofv1.ClusterRoleLabel]
	return digested && !role && ref != nil && ref.Kind == kcmv1.ClusterDeploymentKind &&
		strings.HasPrefix(cm.Name, names.ChildConfigMapPrefix) && cm.Labels[kofv1.ManagedByLabel] == kofv1.ManagedBy &&
		cm.Labels[kofv1.RegionalClusterNameLabel] != ""
}

// MetadataAndDigest is the cache's transform of the kinds the operator only applies, lists and deletes (VMUsers,
// MultiClusterServices): KeepOwnedDigest, then everything but the object's kind and metadata dropped (a
// MultiClusterService's status lists every cluster it matched). It returns obj, or a non-object input unchanged.
func MetadataAndDigest(in any) (any, error) {
	if _, err := KeepOwnedDigest(in); err != nil {
		return in, err
	}
	switch o := in.(type) {
	case *vmapi.VMUser:
		o.Spec = vmapi.VMUserSpec{}
	case *kcmv1.MultiClusterService:
		o.Spec, o.Status = kcmv1.MultiClusterServiceSpec{}, kcmv1.MultiClusterServiceStatus{}
	}
	return in, nil
}

// internMetadata makes the strings of obj's metadata that many cached objects repeat share one copy (unique.Make):
// the namespace, label names and values, annotation names and the owner references (a child's ClusterDeployment is
// the owner of four objects, and every object the operator made carries the same label names). The strings a
// decoder makes are each their own allocation, so at 1,000 clusters the cache held about 20,000 copies of a few
// dozen strings. Names, resource versions and annotation values, which differ from object to object, are left as
// they are. obj is changed in place (a transform's object is its own).
func internMetadata(obj client.Object) {
	obj.SetNamespace(intern(obj.GetNamespace()))
	if l := obj.GetLabels(); len(l) > 0 {
		m := make(map[string]string, len(l))
		for k, v := range l {
			m[intern(k)] = intern(v)
		}
		obj.SetLabels(m)
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		m := make(map[string]string, len(a))
		for k, v := range a {
			m[intern(k)] = v
		}
		obj.SetAnnotations(m)
	}
	refs := obj.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name, r.UID = intern(r.APIVersion), intern(r.Kind), intern(r.Name), types.UID(intern(string(r.UID)))
	}
}

// intern returns the canonical copy of s.
func intern(s string) string { return unique.Make(s).Value() }
