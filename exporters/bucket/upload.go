package bucket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
)

// abortWait bounds one AbortMultipartUpload sent on the way out (after a failure or a signal, when the run's own
// context may be cancelled already).
const abortWait = 15 * time.Second

// Upload is one object written in pieces of unknown total size: an io.Writer whose bytes become the object only at
// Commit. It holds at most one part, and a small file only its size: in memory, or in a file of the scratch folder
// when the Bucket has one (SpillTo). Up to PartSize bytes it is a single PutObject at Commit, so a small or empty file
// never starts a multipart upload; past that it is a multipart upload whose parts are sent as they fill,
// completed by Commit with the write condition and aborted by Abort.
// Every multipart upload a Bucket starts stays registered until it is completed or aborted, so AbortAll can abort
// whatever a cancelled run left open (the one action it needs is s3:AbortMultipartUpload).
//
// Source: https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpuoverview.html and
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html (If-None-Match and If-Match on
// CompleteMultipartUpload and PutObject).
type Upload struct {
	b           *Bucket
	ctx         context.Context
	key         string
	contentType string

	buf    partStore // the part being filled: in memory, or in a file of the Bucket's scratch folder (SpillTo)
	id     string    // multipart upload id, "" until the first part is sent
	parts  []minio.CompletePart
	size   int64
	err    error // first error; every later call returns it
	closed bool
}

// uploads is the set of a Bucket's multipart uploads neither completed nor aborted.
type uploads struct {
	mu sync.Mutex
	m  map[*Upload]struct{}
}

func (s *uploads) add(u *Upload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*Upload]struct{}{}
	}
	s.m[u] = struct{}{}
}

func (s *uploads) remove(u *Upload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, u)
}

func (s *uploads) list() []*Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Upload, 0, len(s.m))
	for u := range s.m {
		out = append(out, u)
	}
	return out
}

// NewUpload returns an Upload of key with contentType; ctx bounds every request it sends before Commit. Its part is
// held in a file of the scratch folder when SpillTo named one, else in memory.
func (b *Bucket) NewUpload(ctx context.Context, key, contentType string) *Upload {
	var buf partStore = &partBuffer{pool: &b.chunks}
	if b.spillDir != "" {
		buf = &spillBuffer{dir: b.spillDir}
	}
	return &Upload{b: b, ctx: ctx, key: key, contentType: contentType, buf: buf}
}

// Key returns the object key the upload writes.
func (u *Upload) Key() string { return u.key }

// Size returns the bytes written so far.
func (u *Upload) Size() int64 { return u.size }

// Write buffers p and sends a part each time PartSize bytes are buffered. Errors are S3 errors naming the key, or
// errors of the scratch file naming it (the upload is then failed; Abort it).
func (u *Upload) Write(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if u.closed {
		return 0, fmt.Errorf("write %s: upload already committed or aborted", u.key)
	}
	n := 0
	for len(p) > 0 {
		c, err := u.buf.write(p, PartSize)
		p, n = p[c:], n+c
		u.size += int64(c)
		if err != nil {
			u.err = fmt.Errorf("write %s: %w", u.key, err)
			return n, u.err
		}
		if u.buf.len() == PartSize {
			if err := u.sendPart(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// sendPart sends the buffered bytes as the next part (starting the multipart upload first when none is open).
func (u *Upload) sendPart() error {
	if err := u.wait(); err != nil {
		return err
	}
	if u.id == "" {
		// Not cancelled with the run: a signal arriving while the server creates the upload would leave an upload
		// whose id this process never learns, and so cannot abort.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), abortWait)
		id, err := minio.Core{Client: u.b.client}.NewMultipartUpload(ctx, u.b.name, u.key, minio.PutObjectOptions{ContentType: u.contentType})
		cancel()
		if err != nil {
			u.err = u.b.fail("POST ?uploads", u.key, err)
			return u.err
		}
		u.id = id
		u.b.live.add(u)
	}
	number := len(u.parts) + 1
	// Sent in place, and the buffer kept for the next part: one part's memory however large the file (two would
	// let the encoder run ahead, but double the resident memory of a large hour for little gain on a near server).
	part, err := minio.Core{Client: u.b.client}.PutObjectPart(u.ctx, u.b.name, u.key, u.id, number,
		u.buf.reader(), int64(u.buf.len()), minio.PutObjectPartOptions{})
	if err != nil {
		u.err = u.b.fail(fmt.Sprintf("PUT part %d of", number), u.key, err)
		return u.err
	}
	u.parts = append(u.parts, minio.CompletePart{PartNumber: number, ETag: part.ETag})
	u.buf.reset()
	return nil
}

// wait returns the upload's first error.
func (u *Upload) wait() error { return u.err }

// Commit makes the written bytes the object at key under cond and returns it: one conditional PutObject when no
// part was sent, else the last part and a conditional CompleteMultipartUpload. A failed condition is an error
// wrapping ErrPrecondition, after which the multipart upload is aborted; after any other error call Abort.
func (u *Upload) Commit(ctx context.Context, cond Condition) (Object, error) {
	if u.closed {
		return Object{}, fmt.Errorf("commit %s: upload already committed or aborted", u.key)
	}
	if err := u.wait(); err != nil {
		return Object{}, err
	}
	opts := minio.PutObjectOptions{ContentType: u.contentType}
	if cond.IfAbsent {
		opts.SetMatchETagExcept("*")
	}
	if cond.IfMatch != "" {
		opts.SetMatchETag(cond.IfMatch)
	}
	if u.id == "" {
		opts.DisableMultipart = true
		info, err := u.b.client.PutObject(ctx, u.b.name, u.key, u.buf.reader(), int64(u.buf.len()), opts)
		if err != nil {
			u.err = u.b.fail("PUT", u.key, err)
			return Object{}, u.err
		}
		u.closed = true
		u.release()
		return Object{Key: u.key, ETag: trimETag(info.ETag), Size: u.size, LastModified: info.LastModified}, nil
	}
	if u.buf.len() > 0 {
		if err := u.sendPart(); err != nil {
			return Object{}, err
		}
		if err := u.wait(); err != nil {
			return Object{}, err
		}
	}
	info, err := minio.Core{Client: u.b.client}.CompleteMultipartUpload(ctx, u.b.name, u.key, u.id, u.parts, opts)
	if err != nil {
		u.err = u.b.fail("POST ?uploadId", u.key, err)
		if errors.Is(u.err, ErrPrecondition) {
			_ = u.Abort()
		}
		return Object{}, u.err
	}
	u.closed = true
	u.b.live.remove(u)
	u.release()
	return Object{Key: u.key, ETag: trimETag(info.ETag), Size: u.size, LastModified: info.LastModified}, nil
}

// Abort drops the upload: nothing appears at key, and a started multipart upload is aborted (with its own deadline,
// so it is sent even when the run's context is cancelled). Aborting a committed or aborted upload does nothing.
// Errors are S3 errors of the abort request.
func (u *Upload) Abort() error {
	if u.closed {
		return nil
	}
	_ = u.wait()
	u.closed = true
	u.release()
	if u.id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), abortWait)
	defer cancel()
	err := minio.Core{Client: u.b.client}.AbortMultipartUpload(ctx, u.b.name, u.key, u.id)
	u.b.live.remove(u)
	if err != nil {
		return u.b.fail("DELETE ?uploadId", u.key, err)
	}
	return nil
}

// release frees the upload's part store once it is committed or aborted. An error closing or removing a scratch
// file is dropped: the upload's outcome is decided by then, an unnamed file's room returns when it is closed or the
// process exits, and SpillTo of the next run removes a file that kept its name.
func (u *Upload) release() { _ = u.buf.release() }

// AbortAll aborts every multipart upload of b that was started and neither completed nor aborted (the exporters
// call it on their way out, signals included). It returns the errors of the abort requests.
func (b *Bucket) AbortAll() error {
	var errs []error
	for _, u := range b.live.list() {
		errs = append(errs, u.Abort())
	}
	return errors.Join(errs...)
}

func trimETag(s string) string { return string(bytes.Trim([]byte(s), `"`)) }

// SHA256 returns the hex sha256 of the object at key, read in one streamed GET. Errors name the URL and status.
func (b *Bucket) SHA256(ctx context.Context, key string) (string, error) {
	rc, _, err := b.Open(ctx, key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", b.fail("GET", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
