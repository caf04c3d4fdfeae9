package phase

import (
	"strconv"
	"sync"
)

// Unseen keeps, per key, a value this process wrote and the resource version the API server answered, until the
// informer cache holds that version. The cache lags a write by the watch delay; a reconcile in that window reads the
// object as it was before the write. While the object it reads holds an older resource version than the written
// one, the object is exactly what the write left (a change by anyone else gives a newer version, whose watch event
// reconciles the object again), so the caller takes the remembered value instead. Once the cache holds the written
// version or a newer one the entry is dropped, so the map holds only the writes the cache has not seen yet.
// Resource versions are compared as the etcd revisions kube-apiserver gives them (decimal integers, as apply.Written
// does); one that does not parse drops the entry. Its zero value is ready to use; it is safe for concurrent use.
type Unseen[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]unseenValue[V]
}

type unseenValue[V any] struct {
	version uint64
	value   V
}

// Newer returns the value written for key when cachedVersion, the resource version the cache holds, is older than
// the written one, and drops the entry otherwise.
func (u *Unseen[K, V]) Newer(key K, cachedVersion string) (V, bool) {
	var zero V
	v, err := strconv.ParseUint(cachedVersion, 10, 64)
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.m[key]
	if !ok {
		return zero, false
	}
	if err != nil || v >= e.version {
		delete(u.m, key)
		return zero, false
	}
	return e.value, true
}

// Record remembers value as written for key, answered with resource version rv.
func (u *Unseen[K, V]) Record(key K, rv string, value V) {
	v, err := strconv.ParseUint(rv, 10, 64)
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		delete(u.m, key)
		return
	}
	if u.m == nil {
		u.m = map[K]unseenValue[V]{}
	}
	u.m[key] = unseenValue[V]{version: v, value: value}
}
