package outputs

import (
	"fmt"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	addoncontrollerv1beta1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
)

// Bundle describes one VMUser bundle (docs/contract.md, "child VMUser bundle", "regional admin bundle"): a
// credentials Secret, a VMUser and, when the storage is remote, the MultiClusterService copying both there.
type Bundle struct {
	// Base is the bundle base N (names.ChildVMUserBase or names.AdminVMUserBase).
	Base string
	// Namespace holds the Secret and the VMUser.
	Namespace string
	// Tenant is the child's tenant; "" for an admin bundle (no tenant filter).
	Tenant string
	// Regional is the `k0rdent.mirantis.com/kof-cluster-name` of the cluster the bundle is propagated to; "" means
	// no propagation (regionless: the VMUser serves the management cluster's own VMAuth).
	Regional string
	// RegionalIstio is true when that cluster is an Istio mesh member (its storage comes from the Istio regional
	// MultiClusterService).
	RegionalIstio bool
	// OwnerLabels name what caused the cluster-scoped propagation MultiClusterService (OwnerLabels).
	OwnerLabels map[string]string
}

// ChildBundle returns the VMUser bundle of child c (bound: c.Data is set): base names.ChildVMUserBase, the
// child's tenant, propagated to its regional unless regionless.
func ChildBundle(cfg config.Config, c Child) Bundle {
	b := Bundle{Base: names.ChildVMUserBase(c.Cluster.Namespace, c.Cluster.Name), Namespace: c.Cluster.Namespace,
		Tenant: c.Tenant(), RegionalIstio: c.RegionalIstio,
		OwnerLabels: OwnerLabels(kcmv1.ClusterDeploymentKind, c.Cluster.Namespace, c.Cluster.Name)}
	if !cfg.Regionless {
		b.Regional = c.Regional.Name
	}
	return b
}

// AdminBundle returns the admin VMUser bundle of the regional of ConfigMap in: base names.AdminVMUserBase, no
// tenant, propagated to the regional itself unless it is the regionless management cluster.
func AdminBundle(in RegionalInput) Bundle {
	b := Bundle{Base: names.AdminVMUserBase(in.Namespace, in.Cluster), Namespace: in.Namespace,
		RegionalIstio: in.Istio, OwnerLabels: OwnerLabels("ConfigMap", in.Namespace, in.ConfigMap)}
	if !in.Regionless {
		b.Regional = in.Cluster
	}
	return b
}

// Secret returns the bundle's Opaque Secret `kof-vmuser-creds-<base>` labelled Labels(), with keys UsernameKey =
// base and PasswordKey = password. The caller chooses the password (the operator: random, kept once made; offline
// renders: a fixed placeholder).
func (b Bundle) Secret(password string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: names.VMUserSecret(b.Base), Namespace: b.Namespace, Labels: Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{UsernameKey: []byte(b.Base), PasswordKey: []byte(password)},
	}
}

// VMUser returns the bundle's VMUser `kof-vmuser-<base>` (VMUser) with the routes to the storage URLs of cfg.
func (b Bundle) VMUser(cfg config.Config) *vmapi.VMUser {
	return VMUser(b.Namespace, b.Base, b.Tenant, cfg.Storage)
}

// secretRef is the templateResourceRef identifier of a bundle's Secret in its propagation MultiClusterService.
const secretRef = "KOFVMUserSecret"

// Propagation returns the MultiClusterService `kof-vmuser-propagation-<base>` that copies the bundle to its
// regional through the kof-propagation chart, or nil when Regional is "". The Secret's data reaches the values
// only at apply time, through Sveltos `getField` on a templateResourceRef, so the password never appears in the
// MCS; the VMUser is given literally. The MCS depends on the regional's MultiClusterService (which installs the
// VMUser CRD there) and its service waits for its release (docs/contract.md, "propagation MCS").
func (b Bundle) Propagation(cfg config.Config) (*kcmv1.MultiClusterService, error) {
	if b.Regional == "" {
		return nil, nil
	}
	user := b.VMUser(cfg)
	user.Namespace = ""
	secret := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: names.VMUserSecret(b.Base),
			Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}},
		Type: corev1.SecretTypeOpaque,
	}
	data := templated(getField(secretRef, "data"))
	values, err := propagationValues(object{secret, map[string]any{"data": data}}, object{obj: user})
	if err != nil {
		return nil, fmt.Errorf("values of %s: %w", names.VMUserPropagation(b.Base), err)
	}
	m := propagationMCS(cfg, names.VMUserPropagation(b.Base), b.Regional, b.RegionalIstio, b.OwnerLabels, values)
	m.Spec.ServiceSpec.TemplateResourceRefs = []addoncontrollerv1beta1.TemplateResourceRef{{
		Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: names.VMUserSecret(b.Base),
			Namespace: b.Namespace},
		Identifier: secretRef,
	}}
	return m, nil
}
