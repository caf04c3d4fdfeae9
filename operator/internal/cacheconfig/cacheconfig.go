// Package cacheconfig holds the kof-operator's informer cache options: which objects it caches and what of them it
// keeps. The operator's main, the scale benchmark and the controller tests all build their cache from it, so the
// tests exercise the cache the operator ships with.
package cacheconfig

import (
	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/vmapi"
)

// Options limits the informer cache: Secrets, VMUsers and MultiClusterServices to those the operator labelled
// (objects of earlier releases are read directly from the API server), and, when KOF_WATCH_NAMESPACES is set, every
// namespaced kind to config.WatchScope (those namespaces plus the release and KCM namespaces). Of the managedFields
// the cache keeps only the operator's own entries (KeepOwnManagedFields): operator/internal/apply compares against
// what the operator owns and reads nothing else of them.
func Options(cfg config.Config) cache.Options {
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})}
	opts := cache.Options{DefaultTransform: KeepOwnManagedFields, ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}:             ours,
		&vmapi.VMUser{}:              ours,
		&kcmv1.MultiClusterService{}: ours,
	}}
	if scope := cfg.WatchScope(); scope != nil {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range scope {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// KeepOwnManagedFields is the cache's transform: it drops every managedFields entry of obj but those of the
// operator's field manager (kofv1.FieldManager), which is all the operator reads of them; the entries of KCM, Helm
// or users are often larger than the object. It returns obj, or a non-object input unchanged.
func KeepOwnManagedFields(in any) (any, error) {
	obj, ok := in.(metav1.Object)
	if !ok {
		return in, nil
	}
	mf := obj.GetManagedFields()
	kept := mf[:0:0]
	for _, e := range mf {
		if e.Manager == kofv1.FieldManager {
			kept = append(kept, e)
		}
	}
	if len(kept) != len(mf) {
		if len(kept) == 0 {
			kept = nil
		}
		obj.SetManagedFields(kept)
	}
	return in, nil
}
