package auditlog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
)

// encoded is the data object of one window as written.
type encoded struct {
	events int64
	size   int64
	sha256 string
}

// query returns the LogsQL query of a series' events in h.
func (e *Exporter) query(s *series, h window.Hour) string {
	return Query(e.cfg.TenantField, s.values, h)
}

// Query returns the LogsQL query the exporter reads one window of one series with: the window's time filter, an
// exact match of tenantField against each of values ("" = the field is missing), sorted by time, stream and message
// so the same events always give the same bytes.
func Query(tenantField string, values []string, h window.Hour) string {
	q := victoria.TimeFilter(h) + " "
	if len(values) == 1 {
		q += victoria.Exact(tenantField, values[0])
	} else {
		q += "("
		for i, v := range values {
			if i > 0 {
				q += " or "
			}
			q += victoria.Exact(tenantField, v)
		}
		q += ")"
	}
	return q + sortPipe
}

// encode streams the series' events in h as gzip NDJSON into w.
func (e *Exporter) encode(ctx context.Context, s *series, h window.Hour, w io.Writer) (encoded, error) {
	m := &measure{w: w, h: sha256.New()}
	zw, err := gzip.NewWriterLevel(m, dataCompressor)
	if err != nil {
		return encoded{}, fmt.Errorf("gzip: %w", err)
	}
	var line []byte
	var n int64
	err = e.logs.Query(ctx, e.query(s, h), func(r *victoria.Record) error {
		line = AppendEvent(line[:0], r)
		n++
		_, err := zw.Write(line)
		return err
	})
	if err != nil {
		return encoded{}, err
	}
	if err := zw.Close(); err != nil {
		return encoded{}, fmt.Errorf("gzip: %w", err)
	}
	return encoded{events: n, size: m.n, sha256: hex.EncodeToString(m.h.Sum(nil))}, nil
}

// exportWindow exports window h of s (loaded, h not done; an hour without events gets a window too, with an empty
// data object).
func (e *Exporter) exportWindow(ctx context.Context, s *series, h window.Hour) error {
	prevWindow, err := s.previous(h)
	if err != nil {
		return err
	}
	var prevSHA string
	if prevWindow != nil {
		if prevSHA, err = e.manifestSHA(ctx, s, prevWindow.Unix()); err != nil {
			return err
		}
	}
	folder := evidence.Folder(s.stream, s.tenant, h)
	dataKey := folder + evidence.DataName
	var enc encoded
	if s.partial[h.Start.Unix()] {
		enc, err = e.resume(ctx, s, h, dataKey)
	} else {
		enc, err = e.upload(ctx, s, h, dataKey)
	}
	if err != nil {
		return err
	}
	m := evidence.Manifest{
		Format: evidence.Format, Stream: s.stream, Tenant: s.tenant, WindowStart: h.Start, WindowEnd: h.End,
		EventCount: enc.events, Data: evidence.DataFile{Name: evidence.DataName, Size: enc.size, SHA256: enc.sha256},
		PreviousWindow: prevWindow, PreviousManifestSHA256: prevSHA, Producer: Producer, Version: e.ver,
		Algorithm: e.cfg.Signer.Algorithm(), KeyID: e.cfg.Signer.KeyID(),
	}
	raw, err := m.Canonical()
	if err != nil {
		return err
	}
	attrs := []any{"stream", s.stream, "tenant", s.tenant, "window", h.String(), "events", enc.events, "size_bytes", enc.size}
	e.log.Info(msgSignature, append(attrs, "key_id", m.KeyID, "algorithm", m.Algorithm)...)
	if _, err := e.bucket.PutBytes(ctx, folder+evidence.SignatureName, e.cfg.Signer.Sign(raw), contentText, bucket.Condition{}); err != nil {
		return errBucket{err}
	}
	e.log.Info(msgManifest, attrs...)
	if _, err := e.bucket.PutBytes(ctx, folder+evidence.ManifestName, raw, contentJSON, bucket.Condition{IfAbsent: true}); err != nil {
		return errBucket{err}
	}
	sum := sha256.Sum256(raw)
	s.done[h.Start.Unix()] = hex.EncodeToString(sum[:])
	delete(s.partial, h.Start.Unix())
	e.log.Info(msgExported, attrs...)
	return nil
}

// upload streams the window's data object to dataKey; it is created only when absent (never overwritten).
func (e *Exporter) upload(ctx context.Context, s *series, h window.Hour, dataKey string) (encoded, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	type result struct {
		enc encoded
		err error
	}
	done := make(chan result, 1)
	go func() {
		enc, err := e.encode(ctx, s, h, pw)
		_ = pw.CloseWithError(err)
		done <- result{enc, err}
	}()
	obj, putErr := e.bucket.Put(ctx, dataKey, pr, contentNDJSON, bucket.Condition{IfAbsent: true})
	if putErr != nil {
		_ = pr.CloseWithError(putErr)
		cancel()
	}
	r := <-done
	switch {
	case putErr != nil && (r.err == nil || errors.Is(r.err, putErr) || errors.Is(r.err, context.Canceled) || errors.Is(r.err, io.ErrClosedPipe)):
		return encoded{}, errBucket{putErr}
	case r.err != nil:
		return encoded{}, fmt.Errorf("read audit events from %s: %w", e.cfg.LogsURL, r.err)
	case putErr != nil:
		return encoded{}, errBucket{putErr}
	case obj.Size != r.enc.size:
		return encoded{}, errBucket{fmt.Errorf("PUT %s: stored %d bytes, wrote %d", dataKey, obj.Size, r.enc.size)}
	}
	return r.enc, nil
}

// resume handles a window that has objects but no manifest (a run stopped between the data and the manifest): when
// its data object is byte for byte what the source gives now, the window is finished with it; otherwise it is left
// untouched for an operator and reported.
func (e *Exporter) resume(ctx context.Context, s *series, h window.Hour, dataKey string) (encoded, error) {
	rc, obj, err := e.bucket.Open(ctx, dataKey)
	if errors.Is(err, bucket.ErrNotFound) {
		return e.upload(ctx, s, h, dataKey) // only a signature was left: write the data now
	}
	if err != nil {
		return encoded{}, errBucket{err}
	}
	stored := sha256.New()
	_, err = io.Copy(stored, rc)
	_ = rc.Close()
	if err != nil {
		return encoded{}, errBucket{fmt.Errorf("read %s: %w", dataKey, err)}
	}
	enc, err := e.encode(ctx, s, h, io.Discard)
	if err != nil {
		return encoded{}, fmt.Errorf("read audit events from %s: %w", e.cfg.LogsURL, err)
	}
	if got := hex.EncodeToString(stored.Sum(nil)); got != enc.sha256 || obj.Size != enc.size {
		return encoded{}, fmt.Errorf("%s exists without a manifest and differs from the source's events (%d bytes stored, %d now); left untouched for an operator (docs/audit-logs.md)", dataKey, obj.Size, enc.size)
	}
	return enc, nil
}
