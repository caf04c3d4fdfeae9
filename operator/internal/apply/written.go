package apply

import (
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written remembers, per object, what this process last applied: a hash of the applied fields and the resource
// version the API server answered. The informer cache lags a write by the watch delay; a reconcile in that window
// reads the older object and would apply the same fields again. With Written, Apply skips the write and the
// comparison while the cache holds the written resource version or an older one: the object is then exactly what
// this write left (a change by anyone else gives a newer version). Once the cache holds a newer version the fields
// are compared as usual, so a change by someone else is still corrected. An object the cache does not hold is
// always applied: it may have been deleted. Resource versions are compared as the etcd revisions kube-apiserver
// gives them (decimal integers); one that does not parse disables the skip. Its zero value is ready to use; it is
// safe for concurrent reconciles.
type Written struct {
	mu sync.Mutex
	m  map[string]written
}

type written struct {
	hash    [sha256.Size]byte
	version uint64
}

// hashOf returns the hash of the applied fields of want, false when they do not serialize.
func hashOf(fields map[string]any) ([sha256.Size]byte, bool) {
	b, err := json.Marshal(fields) // map keys are sorted, so equal fields give equal bytes
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

// fresh reports whether key was last applied with fields hash at live's resource version or a newer one.
func (w *Written) fresh(key string, hash [sha256.Size]byte, live client.Object) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	e, ok := w.m[key]
	w.mu.Unlock()
	if !ok || e.hash != hash {
		return false
	}
	v, err := strconv.ParseUint(live.GetResourceVersion(), 10, 64)
	return err == nil && v <= e.version
}

// record remembers that key was applied with fields hash and the API server answered resource version rv.
func (w *Written) record(key string, hash [sha256.Size]byte, rv string) {
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
	w.m[key] = written{hash: hash, version: v}
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
