package bundle

import (
	"context"
	"fmt"
	"sync"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
)

// LegacyCleaner removes, once per owner and process, the bundle an earlier KOF release named with decimal Adler-32
// (names.LegacyChildVMUserBase, names.LegacyAdminVMUserBase). Its zero value is ready to use; it is safe for
// concurrent reconciles.
//
// Objects of an earlier release exist before this operator starts (the release that made them is replaced by it)
// and are never made afterwards, so the cleaner lists the names of the Secrets and VMUsers of a namespace and of the
// MultiClusterServices once, the first time an owner of that namespace comes by (metadata only, through the
// keeper's reader: the cache holds only objects this operator labelled), and looks a bundle up only when one of its
// names is among them. On a fresh install that is three LISTs per namespace instead of three GETs per owner.
type LegacyCleaner struct {
	mu      sync.Mutex
	done    map[types.NamespacedName]bool
	present map[string]map[string]bool // namespace -> "<kind>/<name>" of the objects listed there
}

// Remove deletes the bundle with the given base in namespace through k, unless it already did so for owner or none
// of the bundle's objects existed when the namespace was first listed. The owner is recorded only when the deletion
// succeeded, so a failed attempt runs again; the error is the listing's or k.Remove's.
func (c *LegacyCleaner) Remove(ctx context.Context, k Keeper, owner types.NamespacedName, namespace, base string) error {
	c.mu.Lock()
	done := c.done[owner]
	c.mu.Unlock()
	if done {
		return nil
	}
	present, err := c.names(ctx, k.Applier.Reader, namespace)
	if err != nil {
		return err
	}
	if present["Secret/"+names.VMUserSecret(base)] || present["VMUser/"+names.VMUser(base)] ||
		present["MultiClusterService/"+names.VMUserPropagation(base)] {
		if _, err := k.Remove(ctx, namespace, base); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = map[types.NamespacedName]bool{}
	}
	c.done[owner] = true
	return nil
}

// names returns the "<kind>/<name>" set of the Secrets and VMUsers of namespace and of every MultiClusterService,
// listed through r the first time namespace is asked for.
func (c *LegacyCleaner) names(ctx context.Context, r client.Reader, namespace string) (map[string]bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if set, ok := c.present[namespace]; ok {
		return set, nil
	}
	set := map[string]bool{}
	for _, l := range []struct {
		kind string
		gvk  schema.GroupVersionKind
		opts []client.ListOption
	}{
		{"Secret", corev1.SchemeGroupVersion.WithKind("SecretList"), []client.ListOption{client.InNamespace(namespace)}},
		{"VMUser", vmapi.V1beta1.WithKind("VMUserList"), []client.ListOption{client.InNamespace(namespace)}},
		{"MultiClusterService", kcmv1.GroupVersion.WithKind("MultiClusterServiceList"), nil},
	} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(l.gvk)
		if err := r.List(ctx, list, l.opts...); err != nil {
			return nil, fmt.Errorf("list %s names in %s for objects of earlier releases: %w", l.kind, namespace, err)
		}
		for _, o := range list.Items {
			set[l.kind+"/"+o.Name] = true
		}
	}
	if c.present == nil {
		c.present = map[string]map[string]bool{}
	}
	c.present[namespace] = set
	return set, nil
}

// Forget drops owner (e.g. once it is deleted), so a later Remove for the same key runs again.
func (c *LegacyCleaner) Forget(owner types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.done, owner)
}
