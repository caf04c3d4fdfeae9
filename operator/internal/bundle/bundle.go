// Package bundle builds and keeps VMUser bundles (docs/contract.md, "Objects the operator writes"): a credentials Secret
// `kof-vmuser-creds-N` (username N, crypto/rand password kept once made), a VMUser `kof-vmuser-N` with the eight
// routes of "VMUser routes" (tenant filters for children), and, for clusters whose storage is remote, a propagation
// MultiClusterService `kof-vmuser-propagation-N` that copies both to the regional cluster.
package bundle

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	addoncontrollerv1beta1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// Secret keys of a bundle's credentials Secret.
const (
	UsernameKey = outputs.UsernameKey
	PasswordKey = outputs.PasswordKey
	// PasswordLength is the length of generated passwords (docs/contract.md: at least 16).
	PasswordLength = 24
	passwordChars  = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// Labels returns the labels of every object the operator makes (outputs.Labels).
func Labels() map[string]string { return outputs.Labels() }

// Password returns a new random password of PasswordLength alphanumerics drawn with crypto/rand.
func Password() (string, error) {
	b := make([]byte, PasswordLength)
	max := big.NewInt(int64(len(passwordChars)))
	for i := range b {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		b[i] = passwordChars[n.Int64()]
	}
	return string(b), nil
}

// TargetRefs returns the eight VMUser routes to the storage URLs u (outputs.TargetRefs).
func TargetRefs(u config.StorageURLs, tenant string) []vmv1beta1.TargetRef {
	return outputs.TargetRefs(u, tenant)
}

// Spec describes one bundle.
type Spec struct {
	// Base is the bundle base N (names.ChildVMUserBase or names.AdminVMUserBase).
	Base string
	// Namespace holds the Secret and VMUser.
	Namespace string
	// Tenant is the child's tenant; "" for an admin bundle.
	Tenant string
	// Owner, when set, becomes the controller owner reference of the Secret and VMUser.
	Owner client.Object
	// Regional, when set, is the `k0rdent.mirantis.com/kof-cluster-name` of the regional cluster the bundle is
	// propagated to; "" means no propagation (regionless: the VMUser serves the management cluster's VMAuth).
	Regional string
	// OwnerLabels are added to the propagation MCS (kofv1.OwnerKindLabel, OwnerNameLabel, OwnerNamespaceLabel), so
	// that the cluster-scoped MCS can be traced back to what caused it.
	OwnerLabels map[string]string
}

// Keeper ensures bundles exist as desired.
type Keeper struct {
	Applier apply.Applier
	Config  config.Config
}

// Ensure makes the Secret (keeping an existing password of at least 16 characters), the VMUser and, when
// s.Regional is set, the propagation MCS; a stale propagation MCS is deleted when s.Regional is "". It returns the
// number of writes and the first API error.
func (k Keeper) Ensure(ctx context.Context, s Spec) (int, error) {
	writes := 0
	pw, err := k.password(ctx, s)
	if err != nil {
		return writes, err
	}
	objs := []client.Object{outputs.CredentialsSecret(s.Namespace, s.Base, pw), vmUser(s, k.Config.Storage)}
	if s.Regional != "" {
		mcs, err := propagation(s, k.Config)
		if err != nil {
			return writes, err
		}
		objs = append(objs, mcs)
	}
	for _, o := range objs {
		if s.Owner != nil && o.GetNamespace() != "" {
			setOwner(o, s.Owner)
		}
		w, err := k.Applier.Apply(ctx, o)
		if w {
			writes++
		}
		if err != nil {
			return writes, err
		}
	}
	if s.Regional == "" {
		w, err := k.Applier.Delete(ctx, &kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(s.Base)}})
		if w {
			writes++
		}
		if err != nil {
			return writes, err
		}
	}
	return writes, nil
}

// Remove deletes the bundle of base in namespace (Secret, VMUser, propagation MCS). It returns the number of deletes.
func (k Keeper) Remove(ctx context.Context, namespace, base string) (int, error) {
	objs := []client.Object{
		&kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(base)}},
		&vmv1beta1.VMUser{ObjectMeta: metav1.ObjectMeta{Name: names.VMUser(base), Namespace: namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserSecret(base), Namespace: namespace}},
	}
	n := 0
	for _, o := range objs {
		w, err := k.Applier.Delete(ctx, o)
		if w {
			n++
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// password returns the password of the existing Secret when it has one of at least 16 characters, else a new one.
func (k Keeper) password(ctx context.Context, s Spec) (string, error) {
	var cur corev1.Secret
	err := k.Applier.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: names.VMUserSecret(s.Base)}, &cur)
	switch {
	case err == nil:
		if pw := string(cur.Data[PasswordKey]); len(pw) >= 16 {
			return pw, nil
		}
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("get secret %s/%s: %w", s.Namespace, names.VMUserSecret(s.Base), err)
	}
	return Password()
}

func setOwner(o, owner client.Object) {
	gvk := owner.GetObjectKind().GroupVersionKind()
	o.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}})
}

func vmUser(s Spec, u config.StorageURLs) *vmv1beta1.VMUser {
	return outputs.VMUser(s.Namespace, s.Base, s.Tenant, u)
}

// Template resource identifiers of the propagation MCS.
const (
	secretRef = "KOFVMUserSecret"
)

// propagation returns the MCS copying the bundle to the regional cluster through the kof-propagation chart. The
// Secret's data reaches the values only at apply time, through Sveltos `getField` on a templateResourceRef, so the
// password never appears in the MCS; the VMUser is given literally. Values are one JSON line, which both Sveltos
// template passes keep intact (docs/sveltos.md, "The double pass").
func propagation(s Spec, c config.Config) (*kcmv1.MultiClusterService, error) {
	user := vmUser(s, c.Storage)
	user.Namespace = ""
	u, err := json.Marshal(user)
	if err != nil {
		return nil, fmt.Errorf("encode vmuser %s: %w", user.Name, err)
	}
	sec := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":%q,"labels":{%q:%q}},"type":"Opaque","data":{{ getField %q "data" | toJson }}}`,
		names.VMUserSecret(s.Base), kofv1.ManagedByLabel, kofv1.ManagedBy, secretRef)
	values := fmt.Sprintf(`{"propagation":{"enabled":true,"data":[%s,%s]}}`, sec, u)
	return &kcmv1.MultiClusterService{
		TypeMeta:   metav1.TypeMeta{APIVersion: kcmv1.GroupVersion.String(), Kind: kcmv1.MultiClusterServiceKind},
		ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(s.Base), Labels: merge(Labels(), s.OwnerLabels)},
		Spec: kcmv1.MultiClusterServiceSpec{
			ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{kofv1.ClusterNameLabel: s.Regional}},
			ServiceSpec: kcmv1.ServiceSpec{
				Services: []kcmv1.Service{{
					Name: names.VMUserPropagation(s.Base), Namespace: c.ReleaseNamespace,
					Template: c.PropagationTemplate, Values: values,
				}},
				TemplateResourceRefs: []addoncontrollerv1beta1.TemplateResourceRef{{
					Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret",
						Name: names.VMUserSecret(s.Base), Namespace: s.Namespace},
					Identifier: secretRef,
				}},
			},
		},
	}, nil
}

// OwnerLabels returns the owner labels of a cluster-scoped object caused by the object of kind, namespace and name.
func OwnerLabels(kind, namespace, name string) map[string]string {
	return map[string]string{kofv1.OwnerKindLabel: kind, kofv1.OwnerNamespaceLabel: namespace, kofv1.OwnerNameLabel: name}
}

// merge returns a new map with the entries of a then b.
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
