package bundle

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// LegacyCleaner removes, once per owner and process, the bundle an earlier KOF release named with decimal Adler-32
// (names.LegacyChildVMUserBase, names.LegacyAdminVMUserBase). Its zero value is ready to use; it is safe for
// concurrent reconciles.
type LegacyCleaner struct {
	mu   sync.Mutex
	done map[types.NamespacedName]bool
}

// Remove deletes the bundle with the given base in namespace through k, unless it already did so for owner. The
// owner is recorded only when the deletion succeeded, so a failed attempt runs again; the error is k.Remove's.
func (c *LegacyCleaner) Remove(ctx context.Context, k Keeper, owner types.NamespacedName, namespace, base string) error {
	c.mu.Lock()
	done := c.done[owner]
	c.mu.Unlock()
	if done {
		return nil
	}
	if _, err := k.Remove(ctx, namespace, base); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = map[types.NamespacedName]bool{}
	}
	c.done[owner] = true
	return nil
}

// Forget drops owner (e.g. once it is deleted), so a later Remove for the same key runs again.
func (c *LegacyCleaner) Forget(owner types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.done, owner)
}
