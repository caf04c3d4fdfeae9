// Package auditlog is the audit-logs exporter: every closed UTC hour of the Kubernetes audit events in the audit
// VictoriaLogs cluster, per stream (`platform-audit-log` for tenant PLATFORM, `tenant-audit-log` per tenant), as
// gzip NDJSON (one canonical JSON event per line) with a signed manifest chained to the previous window's, so
// anyone can check the trail (package evidence, `kof audit verify`). The data object is written first, then the
// signature, then manifest.json, whose presence marks the window done; nothing is ever overwritten.
//
// Source: docs/audit-logs.md.
package auditlog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/klauspost/compress/gzip"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
)

// Producer is written into every manifest.
const Producer = "kof-audit-logs-exporter"

// Log messages (the user guide quotes the first three).
const (
	msgSignature   = "uploading manifest signature"
	msgManifest    = "uploading manifest"
	msgExported    = "window exported successfully"
	msgLock        = "object lock"
	msgNoLock      = "bucket has no object lock; audit objects can be overwritten or deleted by anyone with write access"
	msgRefuse      = "compliance mode requires S3 Object Lock; not exporting"
	msgSourceDown  = "source unreachable"
	msgBucketDown  = "S3 unreachable"
	msgFailed      = "window failed"
	msgFinished    = "export finished"
	msgFailedList  = "failed windows"
	msgKey         = "public key published"
	contentNDJSON  = "application/x-ndjson"
	contentJSON    = "application/json"
	contentText    = "text/plain"
	sortPipe       = " | sort by (_time, _stream_id, _msg)"
	dataCompressor = gzip.DefaultCompression
)

// ErrNoObjectLock is returned (as the only failure) when ComplianceMode is on and the bucket has no object lock.
var ErrNoObjectLock = errors.New("compliance mode: the bucket has no S3 Object Lock; enable it or set complianceMode: false")

// Failure is one window of one series that was not exported.
type Failure struct {
	// Stream, Tenant and Window that failed ("" stream: the whole run).
	Stream, Tenant string
	Window         window.Hour
	// Err says why.
	Err error
}

// String returns `<stream>/<tenant> <window>: <error>`.
func (f Failure) String() string {
	if f.Stream == "" {
		return f.Window.String() + ": " + f.Err.Error()
	}
	return f.Stream + "/" + f.Tenant + " " + f.Window.String() + ": " + f.Err.Error()
}

// Result counts a run's windows (one per stream, tenant and hour).
type Result struct {
	// Exported and Skipped (already done) windows.
	Exported, Skipped int
	// Failed lists every window not exported.
	Failed []Failure
	// Lock is the bucket's object lock configuration.
	Lock bucket.Lock
}

// Options are the Exporter's dependencies.
type Options struct {
	// Log receives the JSON log; Now is the clock (time.Now when nil); Version is written into manifests.
	Log     *slog.Logger
	Now     func() time.Time
	Version string
}

// Exporter runs exports. Build it with New.
type Exporter struct {
	cfg    Config
	bucket *bucket.Bucket
	logs   victoria.Logs
	log    *slog.Logger
	now    func() time.Time
	ver    string
}

// New returns an exporter of cfg; errors are configuration errors.
func New(cfg Config, opts Options) (*Exporter, error) {
	if cfg.Signer == nil {
		return nil, errors.New("audit exporter: no signer")
	}
	b, err := bucket.Open(cfg.S3)
	if err != nil {
		return nil, err
	}
	e := &Exporter{cfg: cfg, bucket: b, log: opts.Log, now: opts.Now, ver: opts.Version,
		logs: victoria.Logs{Endpoint: victoria.Endpoint{Base: cfg.LogsURL, HTTP: victoria.NewHTTPClient()}}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e, nil
}

// Run exports the windows of the configured plan at the current time (see RunWindows).
func (e *Exporter) Run(ctx context.Context) Result {
	ws, err := e.cfg.Plan.Windows(e.now())
	if err != nil {
		return Result{Failed: []Failure{{Err: err}}}
	}
	return e.RunWindows(ctx, ws)
}

// series is one stream and tenant and what the bucket holds of it.
type series struct {
	stream, tenant string
	values         []string // stored tenant values selected
	// done maps a window start (Unix seconds) to the sha256 of its manifest; partial holds windows with objects but
	// no manifest.
	done    map[int64]string
	partial map[int64]bool
	listed  bool
	blocked error
}

// RunWindows exports ws (oldest first). It reads the bucket's object lock configuration once, before anything
// else: without lock it warns and goes on, or with ComplianceMode refuses before reading any event. A source or S3
// failure is logged once and fails every remaining window; a failed window blocks the later windows of its series
// (the chain must not skip it).
func (e *Exporter) RunWindows(ctx context.Context, ws []window.Hour) Result {
	var res Result
	failAll := func(err error) Result {
		for _, h := range ws {
			res.Failed = append(res.Failed, Failure{Window: h, Err: err})
		}
		return e.finish(res)
	}
	lock, err := e.bucket.ObjectLock(ctx)
	if err != nil {
		e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
		return failAll(err)
	}
	res.Lock = lock
	switch {
	case lock.Enabled:
		e.log.Info(msgLock, "bucket", e.bucket.Name(), "enabled", true, "mode", lock.Mode, "retention", lock.Retention.String())
	case e.cfg.ComplianceMode:
		e.log.Error(msgRefuse, "bucket", e.bucket.Name())
		res.Failed = []Failure{{Err: ErrNoObjectLock}}
		return e.finish(res)
	default:
		e.log.Warn(msgNoLock, "bucket", e.bucket.Name())
	}
	if err := e.publishKey(ctx); err != nil {
		e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
		return failAll(err)
	}
	known := map[string]*series{}
	for i, h := range ws {
		list, err := e.discover(ctx, h, known)
		if err != nil {
			e.log.Error(msgSourceDown, "url", e.cfg.LogsURL, "error", err.Error())
			return failAll(fmt.Errorf("list audit events from %s: %w", e.cfg.LogsURL, err)) // nothing of later windows either
		}
		for _, s := range list {
			if s.blocked != nil {
				res.Failed = append(res.Failed, Failure{Stream: s.stream, Tenant: s.tenant, Window: h, Err: fmt.Errorf("not attempted: %w", s.blocked)})
				continue
			}
			done, err := e.exportWindow(ctx, s, h)
			switch {
			case err == nil && done:
				res.Exported++
			case err == nil:
				res.Skipped++
			default:
				s.blocked = fmt.Errorf("window %s failed", h)
				res.Failed = append(res.Failed, Failure{Stream: s.stream, Tenant: s.tenant, Window: h, Err: err})
				e.log.Error(msgFailed, "stream", s.stream, "tenant", s.tenant, "window", h.String(), "error", err.Error())
				var be errBucket
				if errors.As(err, &be) {
					for _, later := range ws[i+1:] {
						res.Failed = append(res.Failed, Failure{Window: later, Err: fmt.Errorf("not attempted: %w", err)})
					}
					return e.finish(res)
				}
			}
		}
	}
	return e.finish(res)
}

// errBucket marks S3 failures (they stop the run).
type errBucket struct{ error }

func (e errBucket) Unwrap() error { return e.error }

func (e *Exporter) finish(res Result) Result {
	e.log.Info(msgFinished, "exported", res.Exported, "skipped", res.Skipped, "failed", len(res.Failed))
	if len(res.Failed) > 0 {
		list := make([]string, len(res.Failed))
		for i, f := range res.Failed {
			list[i] = f.String()
		}
		e.log.Error(msgFailedList, "count", len(list), "windows", list)
	}
	return res
}

// publishKey writes the signer's public key to `audit/keys/<key id>.pub` once (Ed25519 only).
func (e *Exporter) publishKey(ctx context.Context) error {
	pem := e.cfg.Signer.PublicKeyPEM()
	if pem == nil {
		return nil
	}
	key := evidence.KeysPrefix + e.cfg.Signer.KeyID() + ".pub"
	if _, ok, err := e.bucket.Stat(ctx, key); err != nil || ok {
		return err
	}
	if _, err := e.bucket.PutBytes(ctx, key, pem, contentText, bucket.Condition{IfAbsent: true}); err != nil && !errors.Is(err, bucket.ErrPrecondition) {
		return err
	}
	e.log.Info(msgKey, "key", key, "key_id", e.cfg.Signer.KeyID())
	return nil
}

// discover returns the series with events in h, sorted (PLATFORM first), reusing known series' state.
func (e *Exporter) discover(ctx context.Context, h window.Hour, known map[string]*series) ([]*series, error) {
	base := victoria.TimeFilter(h)
	vals, err := e.logs.FieldValues(ctx, base, e.cfg.TenantField)
	if err != nil {
		return nil, err
	}
	missing, err := e.logs.FieldValues(ctx, base+" "+victoria.Exact(e.cfg.TenantField, ""), fieldStreamID)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		vals = append(vals, "")
	}
	var out []*series
	seen := map[string]bool{}
	for _, v := range vals {
		stream, tenant := evidence.StreamTenant, v
		if v == "" || v == evidence.TenantPlatform {
			stream, tenant = evidence.StreamPlatform, evidence.TenantPlatform
		}
		id := stream + "/" + tenant
		if seen[id] {
			continue
		}
		seen[id] = true
		s := known[id]
		if s == nil {
			s = &series{stream: stream, tenant: tenant}
			if stream == evidence.StreamPlatform {
				s.values = []string{"", evidence.TenantPlatform}
			} else {
				s.values = []string{v}
			}
			known[id] = s
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].stream != out[j].stream {
			return out[i].stream < out[j].stream
		}
		return out[i].tenant < out[j].tenant
	})
	return out, nil
}

// load lists the series' folder once: which windows have a manifest (and its sha256) and which only other objects.
func (e *Exporter) load(ctx context.Context, s *series) error {
	if s.listed {
		return nil
	}
	objs, err := e.bucket.List(ctx, evidence.SeriesPrefix(s.stream, s.tenant))
	if err != nil {
		return errBucket{err}
	}
	s.done, s.partial = map[int64]string{}, map[int64]bool{}
	for _, o := range objs {
		_, _, h, name, ok := evidence.ParseKey(o.Key)
		if !ok {
			continue
		}
		if name == evidence.ManifestName {
			raw, _, err := e.bucket.Get(ctx, o.Key)
			if err != nil {
				return errBucket{err}
			}
			sum := sha256.Sum256(raw)
			s.done[h.Start.Unix()] = hex.EncodeToString(sum[:])
			delete(s.partial, h.Start.Unix())
		} else if _, ok := s.done[h.Start.Unix()]; !ok {
			s.partial[h.Start.Unix()] = true
		}
	}
	s.listed = true
	return nil
}

// previous returns the latest window before h with a manifest, and an error when a window between it and h holds
// objects without a manifest (the chain would skip it).
func (s *series) previous(h window.Hour) (*time.Time, string, error) {
	var best int64 = -1 << 62
	for w := range s.done {
		if w < h.Start.Unix() && w > best {
			best = w
		}
	}
	for w := range s.partial {
		if w < h.Start.Unix() && w > best {
			return nil, "", fmt.Errorf("window %s has objects but no manifest; an operator must check it (docs/audit-logs.md)", window.Of(time.Unix(w, 0)))
		}
	}
	if best == -1<<62 {
		return nil, "", nil
	}
	t := time.Unix(best, 0).UTC()
	return &t, s.done[best], nil
}

// measure counts and hashes bytes on their way to w.
type measure struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (m *measure) Write(p []byte) (int, error) {
	n, err := m.w.Write(p)
	m.h.Write(p[:n])
	m.n += int64(n)
	return n, err
}
