// Package outputs is the one definition of the ConfigMaps and credentials Secrets the kof-operator writes
// (docs/contract.md, "Objects the operator writes"). It is pure: no client, no I/O, no randomness. The operator's
// controllers apply what it returns (adding owner references); chartlib/fleet renders the same objects offline.
package outputs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
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

// RegionalConfigMap takes the namespace and name of a regional cluster and its data (discovery.RegionalData) and
// returns its regional ConfigMap `kof-<cluster>` in that namespace, labelled Labels() plus role regional.
func RegionalConfigMap(namespace, cluster string, data map[string]string) *corev1.ConfigMap {
	labels := Labels()
	labels[kofv1.ClusterRoleLabel] = kofv1.RoleRegional
	return configMap(namespace, names.RegionalConfigMap(cluster), labels, data)
}

// RegionlessRef takes the operator configuration and returns the management cluster as the regionless "regional":
// RegionlessClusterName in the KCM namespace.
func RegionlessRef(cfg config.Config) discovery.Ref {
	return discovery.Ref{Name: cfg.RegionlessClusterName, Namespace: cfg.KCMNamespace}
}

// RegionlessConfigMap takes the operator configuration and returns the regionless ConfigMap `kof-<mgmt>` in the KCM
// namespace: a regional ConfigMap (RegionalConfigMap) with discovery.RegionlessData and the label
// `k0rdent.mirantis.com/kof-regionless: "true"`.
func RegionlessConfigMap(cfg config.Config) *corev1.ConfigMap {
	ref := RegionlessRef(cfg)
	cm := RegionalConfigMap(ref.Namespace, ref.Name, discovery.RegionlessData(ref, cfg.RegionlessDomain))
	cm.Labels[kofv1.RegionlessLabel] = kofv1.TrueValue
	return cm
}

// ChildRegional takes the operator configuration, a child cluster and the regional clusters and returns the
// regional the child binds to: the management cluster (RegionlessRef) in regionless mode, else the one
// discovery.FindRegional picks (its error when there is none).
func ChildRegional(cfg config.Config, child discovery.Cluster, regionals []discovery.Cluster) (discovery.Ref, error) {
	if cfg.Regionless {
		return RegionlessRef(cfg), nil
	}
	r, err := discovery.FindRegional(child, regionals)
	if err != nil {
		return discovery.Ref{}, err
	}
	return discovery.Ref{Name: r.Name, Namespace: r.Namespace}, nil
}

// ChildConfigMap takes the namespace and name of a child cluster, the regional it binds to (ChildRegional) and that
// regional's ConfigMap data, and returns the child ConfigMap `kof-cluster-config-<cluster>`: a copy of the data,
// labelled Labels() plus the regional's name and namespace.
func ChildConfigMap(namespace, cluster string, regional discovery.Ref, data map[string]string) *corev1.ConfigMap {
	labels := Labels()
	labels[kofv1.RegionalClusterNameLabel] = regional.Name
	labels[kofv1.RegionalClusterNamespaceLabel] = regional.Namespace
	return configMap(namespace, names.ChildConfigMap(cluster), labels, data)
}

// CredentialsSecret takes a namespace, a VMUser bundle base (names.ChildVMUserBase or names.AdminVMUserBase) and
// the password, and returns the bundle's Opaque Secret `kof-vmuser-creds-<base>` labelled Labels(), with keys
// UsernameKey = base and PasswordKey = password. The caller chooses the password (the operator: random, kept once
// made; offline renders: a fixed placeholder).
func CredentialsSecret(namespace, base, password string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: names.VMUserSecret(base), Namespace: namespace, Labels: Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{UsernameKey: []byte(base), PasswordKey: []byte(password)},
	}
}

func configMap(namespace, name string, labels, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Data:       data,
	}
}
