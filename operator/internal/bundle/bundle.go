// Package bundle keeps VMUser bundles on the API server (docs/contract.md, "Objects the operator writes"): it applies
// the credentials Secret (keeping a password once made), the VMUser and the propagation MultiClusterService that
// operator/outputs defines, and removes them. Passwords are drawn with crypto/rand.
package bundle

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"sync"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	"kof.dev/kof/operator/vmapi"
)

// Password rules.
const (
	// PasswordLength is the length of generated passwords (docs/contract.md: at least 16).
	PasswordLength = 24
	// minKeptPassword is the shortest existing password that is kept rather than replaced.
	minKeptPassword = 16
	passwordChars   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

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

// Keeper ensures bundles exist as desired.
type Keeper struct {
	Applier apply.Applier
	Config  config.Config
	// Passwords, when set, keeps the password of each Secret this process applied, so that a reconcile that runs
	// before the cache holds a just-made Secret keeps its password instead of drawing another one.
	Passwords *Passwords
}

// Passwords holds the password each credentials Secret (by namespace/name) was last applied with, in memory only,
// as the informer cache holds the Secrets themselves. Its zero value is ready to use; it is safe for concurrent use.
type Passwords struct{ m sync.Map }

func (p *Passwords) get(key client.ObjectKey) (string, bool) {
	if p == nil {
		return "", false
	}
	v, ok := p.m.Load(key)
	if !ok {
		return "", false
	}
	return v.(string), true
}

func (p *Passwords) put(key client.ObjectKey, pw string) {
	if p != nil {
		p.m.Store(key, pw)
	}
}

// Forget drops the password kept for the Secret key (once it is deleted).
func (p *Passwords) Forget(key client.ObjectKey) {
	if p != nil {
		p.m.Delete(key)
	}
}

// Ensure applies bundle b: the Secret (keeping an existing password of at least 16 characters), then the VMUser
// and, when b.Regional is set, the propagation MCS in parallel; a stale propagation MCS is deleted when it is not. A
// non-nil owner becomes the controller owner reference of the Secret and the VMUser (apply.Own). It returns the
// number of writes and the errors (the Secret's alone when it failed, else those of the others joined).
func (k Keeper) Ensure(ctx context.Context, b outputs.Bundle, owner client.Object) (int, error) {
	writes := 0
	pw, err := k.password(ctx, b)
	if err != nil {
		return writes, err
	}
	k.Passwords.put(client.ObjectKey{Namespace: b.Namespace, Name: names.VMUserSecret(b.Base)}, pw)
	objs := []client.Object{b.Secret(pw), b.VMUser(k.Config)}
	if owner != nil {
		for _, o := range objs {
			if err := k.Applier.Own(o, owner); err != nil {
				return writes, err
			}
		}
	}
	mcs, err := b.Propagation(k.Config)
	if err != nil {
		return writes, err
	}
	if mcs != nil {
		objs = append(objs, mcs)
	}
	// The Secret goes first (the VMUser and the propagation MCS reference it), then the others at once: a
	// reconcile waits for one round trip fewer.
	w, err := k.Applier.Apply(ctx, objs[0])
	if w {
		writes++
	}
	if err != nil {
		return writes, err
	}
	rest := objs[1:]
	wrote, errs := make([]bool, len(rest)), make([]error, len(rest))
	var wg sync.WaitGroup
	for i, o := range rest {
		wg.Go(func() { wrote[i], errs[i] = k.Applier.Apply(ctx, o) })
	}
	wg.Wait()
	for i := range rest {
		if wrote[i] {
			writes++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return writes, err
	}
	if mcs == nil {
		w, err := k.Applier.Delete(ctx, &kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: names.VMUserPropagation(b.Base)}})
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
		&vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Name: names.VMUser(base), Namespace: namespace}},
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
func (k Keeper) password(ctx context.Context, b outputs.Bundle) (string, error) {
	var cur corev1.Secret
	err := k.Applier.Reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: names.VMUserSecret(b.Base)}, &cur)
	switch {
	case err == nil:
		if pw := string(cur.Data[outputs.PasswordKey]); len(pw) >= minKeptPassword {
			return pw, nil
		}
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("get secret %s/%s: %w", b.Namespace, names.VMUserSecret(b.Base), err)
	default:
		if pw, ok := k.Passwords.get(client.ObjectKey{Namespace: b.Namespace, Name: names.VMUserSecret(b.Base)}); ok {
			return pw, nil // applied by this process, not in the cache yet
		}
	}
	return Password()
}
