// Package outputs is the one definition of what the kof-operator writes for each cluster (docs/contract.md, "Objects
// the operator writes"): the regional and child ConfigMaps, the vmrules ConfigMaps, the VMUser credential bundles
// (Secret, VMUser, propagation MultiClusterService), the PromxyServerGroups, the VMStorageConnections and the KCM
// region propagation MultiClusterServices, together with the problems that keep a cluster from getting them.
//
// It is pure: no client, no I/O, no randomness (the caller chooses passwords). The operator's controllers apply
// what it returns, adding owner references; chartlib/fleet renders the whole set offline with Compute, and the
// demo's wait looks for the objects Compute names. So the live operator, `kof render` and the demo cannot disagree
// on a name, a label or a data key.
package outputs

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Keys of a VMUser credentials Secret (docs/contract.md, "child VMUser bundle").
const (
	UsernameKey = "username"
	PasswordKey = "password"
)

// Labels returns the labels of every object the operator makes: `app.kubernetes.io/managed-by: kof-operator` and
// `k0rdent.mirantis.com/kof-generated: "true"`.
func Labels() map[string]string {
	return map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy, kofv1.GeneratedLabel: kofv1.TrueValue}
}

// OwnerLabels returns the labels that name the object of kind, namespace and name that caused a cluster-scoped
// object (which cannot have an owner reference to a namespaced one): kofv1.OwnerKindLabel, OwnerNamespaceLabel and
// OwnerNameLabel.
func OwnerLabels(kind, namespace, name string) map[string]string {
	return map[string]string{kofv1.OwnerKindLabel: kind, kofv1.OwnerNamespaceLabel: namespace, kofv1.OwnerNameLabel: name}
}

// withLabels returns Labels() plus extra.
func withLabels(extra map[string]string) map[string]string {
	l := Labels()
	maps.Copy(l, extra)
	return l
}

// Problem is an input of one cluster the operator cannot use. Its message names the key (annotation, label or
// field) and the fix.
type Problem struct {
	// Reason is the condition reason the operator reports it with (kofv1.Reason*).
	Reason string
	// Err is the problem.
	Err error
	// Fatal is true when the cluster gets none of its outputs; false when a default replaced the setting and the
	// outputs were made.
	Fatal bool
}

// Error returns the problem's message.
func (p Problem) Error() string { return p.Err.Error() }

// Fatal returns the first fatal problem of ps, nil when there is none.
func Fatal(ps []Problem) *Problem {
	for i := range ps {
		if ps[i].Fatal {
			return &ps[i]
		}
	}
	return nil
}

// configMap returns a ConfigMap with its kind set.
func configMap(namespace, name string, labels, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Data:       data,
	}
}
