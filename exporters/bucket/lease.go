package bucket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Lease is a claim on one key prefix held through a small lock object: created only when absent, taken over only
// by a compare-and-swap on its ETag once it has expired. Two runs can therefore never both hold a lease on the same
// window, and a run that died leaves a lease that expires instead of blocking forever.
type Lease struct {
	// Key of the lock object.
	Key string
	// Owner is the run holding it.
	Owner string
	// Expires is when another run may take it over.
	Expires time.Time

	etag   string
	bucket *Bucket
}

// HeldError says that another run holds a live lease.
type HeldError struct {
	// Key of the lock object, Owner the run holding it, Expires when it may be taken over.
	Key, Owner string
	Expires    time.Time
}

// Error names the key, the owner and the expiry.
func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is held by run %s until %s", e.Key, e.Owner, e.Expires.UTC().Format(time.RFC3339))
}

type leaseBody struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// Acquire takes the lease at key for owner for ttl. It returns *HeldError when another run holds an unexpired lease
// (or wins a race for an expired one), and S3 errors otherwise.
func (b *Bucket) Acquire(ctx context.Context, key, owner string, ttl time.Duration, now time.Time) (*Lease, error) {
	body, _ := json.Marshal(leaseBody{Owner: owner, Expires: now.Add(ttl).UTC()})
	obj, err := b.PutBytes(ctx, key, body, "application/json", Condition{IfAbsent: true})
	if err == nil {
		return &Lease{Key: key, Owner: owner, Expires: now.Add(ttl), etag: obj.ETag, bucket: b}, nil
	}
	if !errors.Is(err, ErrPrecondition) {
		return nil, err
	}
	data, cur, err := b.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return b.Acquire(ctx, key, owner, ttl, now) // released between our two requests
	}
	if err != nil {
		return nil, err
	}
	var held leaseBody
	if json.Unmarshal(data, &held) == nil && now.Before(held.Expires) {
		return nil, &HeldError{Key: key, Owner: held.Owner, Expires: held.Expires}
	}
	obj, err = b.PutBytes(ctx, key, body, "application/json", Condition{IfMatch: cur.ETag})
	if errors.Is(err, ErrPrecondition) {
		return nil, &HeldError{Key: key, Owner: "another run (took the expired lease first)", Expires: now.Add(ttl)}
	}
	if err != nil {
		return nil, err
	}
	return &Lease{Key: key, Owner: owner, Expires: now.Add(ttl), etag: obj.ETag, bucket: b}, nil
}

// Check returns an error unless the lease is still ours (its object has the ETag we wrote) and unexpired at now.
func (l *Lease) Check(ctx context.Context, now time.Time) error {
	if !now.Before(l.Expires) {
		return fmt.Errorf("lease %s expired at %s", l.Key, l.Expires.UTC().Format(time.RFC3339))
	}
	obj, ok, err := l.bucket.Stat(ctx, l.Key)
	if err != nil {
		return err
	}
	if !ok || obj.ETag != l.etag {
		return fmt.Errorf("lease %s was taken over by another run", l.Key)
	}
	return nil
}

// Release deletes the lock object when it is still ours.
func (l *Lease) Release(ctx context.Context) error {
	obj, ok, err := l.bucket.Stat(ctx, l.Key)
	if err != nil || !ok || obj.ETag != l.etag {
		return err
	}
	return l.bucket.Delete(ctx, l.Key)
}
