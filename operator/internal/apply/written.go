package apply

import (
	"strconv"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written remembers, per object, what this process last applied: the digest of the applied fields
// (ownership.Digest) and the resource version the API server answered. The informer cache lags a write by the
// watch delay; a reconcile in that window reads the older object and would apply the same fields again. With
// Written, Apply skips the write and the comparison while the cache holds an older resource version than the
// written one: the object is then exactly what this write left (a change by anyone else gives a newer version).
// Once the cache holds the written version or a newer one, the entry is dropped and the fields are compared as
// usual (against the cache's digest), so a change by someone else is still corrected and the map holds only the
// writes the cache has not seen yet. An object the cache does not hold is always applied: it may have been deleted.
// Resource versions are compared as the etcd revisions kube-apiserver gives them (decimal integers); one that does
// not parse disables the skip. Its zero value is ready to use; it is safe for concurrent reconciles.
type Written struct {
	mu sync.Mutex
	m  map[string]written
}

type written struct {
	digest  string
	version uint64
}

// fresh reports whether key was last applied with the fields of digest at a resource version at least live's, and
// drops the entry when the cache has caught up with it (live holds that version or a newer one) or the fields
// differ.
func (w *Written) fresh(key, digest string, live client.Object) bool {
	if w == nil {
		return false
	}
	v, err := strconv.ParseUint(live.GetResourceVersion(), 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[key]
	if !ok {
		return false
	}
	if err != nil || e.digest != digest || v >= e.version {
		delete(w.m, key)
	}
	return err == nil && e.digest == digest && v <= e.version
}

// record remembers that key was applied with the fields of digest and the API server answered resource version rv.
func (w *Written) record(key, digest string, rv string) {
	if w == nil {
		return
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		delete(w.m, key)
		return
	}
	if w.m == nil {
		w.m = map[string]written{}
	}
	w.m[key] = written{digest: digest, version: v}
}

// Forget drops what was remembered for the object of kind (as the scheme names it) and key, e.g. once it is deleted.
func (w *Written) Forget(kind string, key client.ObjectKey) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, kind+"/"+key.String())
}
