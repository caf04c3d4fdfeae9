// Package auditlog is the audit-logs exporter: every closed UTC hour of the Kubernetes audit events in the audit
// VictoriaLogs cluster, per stream (`platform-audit-log` for tenant PLATFORM, `tenant-audit-log` per tenant), as
// gzip NDJSON (one canonical JSON event per line) with a signed manifest chained to the previous window's, so
// anyone can check the trail (package evidence, `kof audit verify`). Once a stream and tenant has a window, every
// later closed hour gets one, empty or not, so the chain is continuous and a deleted window shows. The data object
// is written first, then the signature, then manifest.json, whose presence marks the window done; nothing is ever
// overwritten.
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
	msgLockUnread  = "cannot read the bucket's object lock configuration; going on without checking it"
	msgRefuse      = "compliance mode requires S3 Object Lock; not exporting"
	msgRefuseRead  = "compliance mode requires reading the bucket's object lock configuration; not exporting"
	msgBehind      = "series behind: exporting its oldest missing windows first; the next runs continue"
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

// ErrObjectLockUnreadable is wrapped by the only failure of a run in ComplianceMode whose S3 user may not read the
// bucket's object lock configuration; the error names the action to grant.
var ErrObjectLockUnreadable = errors.New("compliance mode: cannot read the bucket's object lock configuration")

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
	// Lock is the bucket's object lock configuration (zero when it could not be read).
	Lock bucket.Lock
	// LockDenied names the IAM action the S3 user lacks to read Lock ("" when it was read).
	LockDenied string
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
	// first is the index of the first window of the run with events of the series (-1: none).
	first int
	// done maps a window start (Unix seconds) to the sha256 of its manifest ("" until read); partial holds windows
	// with objects but no manifest.
	done    map[int64]string
	partial map[int64]bool
	listed  bool
	blocked error
}

// id returns `<stream>/<tenant>`.
func (s *series) id() string { return s.stream + "/" + s.tenant }

// newSeries returns the series of stream and tenant, selecting its events by the tenant field's values: missing
// or PLATFORM for the platform stream, the tenant for a tenant's.
func newSeries(stream, tenant string) *series {
	s := &series{stream: stream, tenant: tenant, first: -1, values: []string{tenant}}
	if stream == evidence.StreamPlatform {
		s.values = []string{"", evidence.TenantPlatform}
	}
	return s
}

// job is one window of one series to export.
type job struct {
	s *series
	h window.Hour
}

// RunWindows exports the windows ws (consecutive hours, oldest first; the newest is the last closed one) of every
// series seen: those with events in ws and those the bucket holds. A series continues from the hour after its
// newest window, so every closed hour gets a window, empty or not, and the chain never skips one; a series that is
// more than len(ws) windows behind exports its len(ws) oldest missing windows (the next run continues). It reads
// the bucket's object lock configuration once, before anything else: without lock it warns and goes on; when the
// S3 user may not read it (the action is not in the user guide's policy) it warns once naming the action and goes
// on; with ComplianceMode either refuses before reading any event. A source or S3 failure is logged once and fails
// every remaining window; a failed window blocks the later windows of its series (the chain must not skip it).
func (e *Exporter) RunWindows(ctx context.Context, ws []window.Hour) Result {
	var res Result
	failAll := func(err error) Result {
		for _, h := range ws {
			res.Failed = append(res.Failed, Failure{Window: h, Err: err})
		}
		return e.finish(res)
	}
	if len(ws) == 0 {
		return e.finish(res)
	}
	lock, err := e.bucket.ObjectLock(ctx)
	var denied *bucket.DeniedError
	switch {
	case errors.As(err, &denied):
		res.LockDenied = denied.Action
		if e.cfg.ComplianceMode {
			e.log.Error(msgRefuseRead, "bucket", e.bucket.Name(), "action", denied.Action, "error", err.Error())
			res.Failed = []Failure{{Err: fmt.Errorf("%w: the S3 user lacks %s; grant it (docs/audit-logs.md, \"S3 permissions\") or set complianceMode: false", ErrObjectLockUnreadable, denied.Action)}}
			return e.finish(res)
		}
		e.log.Warn(msgLockUnread, "bucket", e.bucket.Name(), "action", denied.Action, "error", err.Error())
	case err != nil:
		e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
		return failAll(err)
	case lock.Enabled:
		res.Lock = lock
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
	known, err := e.stored(ctx)
	if err != nil {
		e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
		return failAll(err)
	}
	for i, h := range ws {
		if err := e.discover(ctx, h, i, known); err != nil {
			e.log.Error(msgSourceDown, "url", e.cfg.LogsURL, "error", err.Error())
			return failAll(fmt.Errorf("list audit events from %s: %w", e.cfg.LogsURL, err)) // nothing of later windows either
		}
	}
	var jobs []job
	for _, s := range sortedSeries(known) {
		if err := e.load(ctx, s); err != nil {
			e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
			return failAll(err)
		}
		for _, h := range ws {
			if _, ok := s.done[h.Start.Unix()]; ok {
				res.Skipped++
			}
		}
		todo := s.pending(ws)
		if len(todo) > len(ws) {
			e.log.Warn(msgBehind, "stream", s.stream, "tenant", s.tenant, "missing", len(todo), "exporting", len(ws),
				"from", todo[0].String(), "to", todo[len(ws)-1].String())
			todo = todo[:len(ws)]
		}
		for _, h := range todo {
			jobs = append(jobs, job{s, h})
		}
	}
	// Oldest hour first across series, so that a run stopped by S3 leaves every series at about the same hour.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].h.Start.Before(jobs[j].h.Start) })
	for i, j := range jobs {
		s, h := j.s, j.h
		if s.blocked != nil {
			res.Failed = append(res.Failed, Failure{Stream: s.stream, Tenant: s.tenant, Window: h, Err: fmt.Errorf("not attempted: %w", s.blocked)})
			continue
		}
		if err := e.exportWindow(ctx, s, h); err != nil {
			s.blocked = fmt.Errorf("window %s failed", h)
			res.Failed = append(res.Failed, Failure{Stream: s.stream, Tenant: s.tenant, Window: h, Err: err})
			e.log.Error(msgFailed, "stream", s.stream, "tenant", s.tenant, "window", h.String(), "error", err.Error())
			var be errBucket
			if errors.As(err, &be) {
				for _, later := range jobs[i+1:] {
					res.Failed = append(res.Failed, Failure{Stream: later.s.stream, Tenant: later.s.tenant, Window: later.h, Err: fmt.Errorf("not attempted: %w", err)})
				}
				return e.finish(res)
			}
			continue
		}
		res.Exported++
	}
	return e.finish(res)
}

// pending returns the windows s still needs, oldest first: every hour from the one after its newest window up to
// the last of ws; for a series without a window, from its oldest window with objects but no manifest or its first
// window of ws with events, whichever is older. Hours before its newest window are never written (that would fork
// the chain).
func (s *series) pending(ws []window.Hour) []window.Hour {
	last := ws[len(ws)-1]
	var start window.Hour
	switch newest, ok := latest(s.done); {
	case ok:
		start = window.Of(time.Unix(newest, 0)).Next()
	default:
		found := false
		if s.first >= 0 {
			start, found = ws[s.first], true
		}
		for w := range s.partial {
			if h := window.Of(time.Unix(w, 0)); !found || h.Start.Before(start.Start) {
				start, found = h, true
			}
		}
		if !found {
			return nil
		}
	}
	var out []window.Hour
	for h := start; !h.Start.After(last.Start); h = h.Next() {
		out = append(out, h)
	}
	return out
}

// latest returns the newest window start of m.
func latest[V any](m map[int64]V) (int64, bool) {
	var best int64
	ok := false
	for w := range m {
		if !ok || w > best {
			best, ok = w, true
		}
	}
	return best, ok
}

// sortedSeries returns the series of m, the platform stream first, then tenants by name.
func sortedSeries(m map[string]*series) []*series {
	out := make([]*series, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].stream != out[j].stream {
			return out[i].stream < out[j].stream
		}
		return out[i].tenant < out[j].tenant
	})
	return out
}

// stored returns the series the bucket holds a folder of: `audit/platform-audit-log/PLATFORM/` and
// `audit/tenant-audit-log/<tenant>/` (listed with a delimiter, not object by object).
func (e *Exporter) stored(ctx context.Context) (map[string]*series, error) {
	known := map[string]*series{}
	for _, stream := range []string{evidence.StreamPlatform, evidence.StreamTenant} {
		names, err := e.bucket.Folders(ctx, evidence.Root+"/"+stream+"/")
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			tenant, err := bucket.UnescapeSegment(name)
			if err != nil || (stream == evidence.StreamPlatform) != (tenant == evidence.TenantPlatform) {
				continue // not a folder of the layout
			}
			s := newSeries(stream, tenant)
			known[s.id()] = s
		}
	}
	return known, nil
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

// discover adds the series with events in h, the i-th window of the run, to known, and records i as the first
// window with events of a series that had none so far.
func (e *Exporter) discover(ctx context.Context, h window.Hour, i int, known map[string]*series) error {
	base := victoria.TimeFilter(h)
	vals, err := e.logs.FieldValues(ctx, base, e.cfg.TenantField)
	if err != nil {
		return err
	}
	missing, err := e.logs.FieldValues(ctx, base+" "+victoria.Exact(e.cfg.TenantField, ""), fieldStreamID)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		vals = append(vals, "")
	}
	for _, v := range vals {
		stream, tenant := evidence.StreamTenant, v
		if v == "" || v == evidence.TenantPlatform {
			stream, tenant = evidence.StreamPlatform, evidence.TenantPlatform
		}
		s := known[stream+"/"+tenant]
		if s == nil {
			s = newSeries(stream, tenant)
			known[s.id()] = s
		}
		if s.first < 0 {
			s.first = i
		}
	}
	return nil
}

// load lists the series' folder once: which windows have a manifest and which only other objects. Manifests are
// read only when a new window chains to them (manifestSHA).
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
			s.done[h.Start.Unix()] = ""
			delete(s.partial, h.Start.Unix())
		} else if _, ok := s.done[h.Start.Unix()]; !ok {
			s.partial[h.Start.Unix()] = true
		}
	}
	s.listed = true
	return nil
}

// manifestSHA returns the hex sha256 of the manifest of window w (Unix seconds) of s, reading it once.
func (e *Exporter) manifestSHA(ctx context.Context, s *series, w int64) (string, error) {
	if sum := s.done[w]; sum != "" {
		return sum, nil
	}
	raw, _, err := e.bucket.Get(ctx, evidence.Folder(s.stream, s.tenant, window.Of(time.Unix(w, 0)))+evidence.ManifestName)
	if err != nil {
		return "", errBucket{err}
	}
	sum := sha256.Sum256(raw)
	s.done[w] = hex.EncodeToString(sum[:])
	return s.done[w], nil
}

// previous returns the start of the latest window before h with a manifest (nil: none, h starts the chain), and
// an error when a window between it and h holds objects without a manifest (the chain would skip it).
func (s *series) previous(h window.Hour) (*time.Time, error) {
	var best int64 = -1 << 62
	for w := range s.done {
		if w < h.Start.Unix() && w > best {
			best = w
		}
	}
	for w := range s.partial {
		if w < h.Start.Unix() && w > best {
			return nil, fmt.Errorf("window %s has objects but no manifest; an operator must check it (docs/audit-logs.md)", window.Of(time.Unix(w, 0)))
		}
	}
	if best == -1<<62 {
		return nil, nil
	}
	t := time.Unix(best, 0).UTC()
	return &t, nil
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
