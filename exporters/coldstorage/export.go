// Package coldstorage is the cold-storage exporter: every closed UTC hour of metrics (VictoriaMetrics), logs
// (VictoriaLogs) and traces (VictoriaTraces) as one Parquet file per tenant, cluster and source on S3, under Hive
// partitions `telemetry/tenant=<t>/cluster=<c>/dt=YYYY-MM-DD/hour=HH/<source>/<source>.parquet`, exactly once: a
// window counts as exported only when its Parquet file and then its `_SUCCESS` marker exist, and a lease object
// keeps two runs from writing one window at once.
//
// Source: docs/cold-storage.md.
package coldstorage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
)

// Producer is the name written into markers and Parquet footers.
const Producer = "kof-cold-storage-exporter"

// Log messages (the user guide quotes "streaming parquet to S3").
const (
	msgStreaming   = "streaming parquet to S3"
	msgExported    = "window exported"
	msgSkipped     = "window already exported"
	msgFailed      = "window failed"
	msgSourceDown  = "source unreachable"
	msgBucketDown  = "S3 unreachable"
	msgFinished    = "export finished"
	msgFailedList  = "failed windows"
	contentParquet = "application/vnd.apache.parquet"
	contentJSON    = "application/json"
)

// Marker is the content of a `_SUCCESS` object: what the Parquet file beside it holds.
type Marker struct {
	// Source, Tenant and Cluster of the folder.
	Source  Source `json:"source"`
	Tenant  string `json:"tenant"`
	Cluster string `json:"cluster"`
	// WindowStart and WindowEnd bound the window [start, end).
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// Key and ETag of the Parquet file.
	Key  string `json:"key"`
	ETag string `json:"etag"`
	columnar.Summary
	// Producer and Version of the exporter; ExportedAt when the marker was written.
	Producer   string    `json:"producer"`
	Version    string    `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
}

// Failure is one window that was not exported.
type Failure struct {
	// Source and Window that failed; Tenant and Cluster are "" when the source could not be listed.
	Source          Source
	Window          window.Hour
	Tenant, Cluster string
	// Err says why.
	Err error
}

// String returns `<source> <window> [tenant=<t> cluster=<c>]: <error>`.
func (f Failure) String() string {
	s := string(f.Source) + " " + f.Window.String()
	if f.Tenant != "" {
		s += " tenant=" + f.Tenant + " cluster=" + f.Cluster
	}
	return s + ": " + f.Err.Error()
}

// Result counts a run's windows (one per source, window, tenant and cluster).
type Result struct {
	// Exported and Skipped (already exported) folders.
	Exported, Skipped int
	// Failed lists every folder or window that was not exported.
	Failed []Failure
}

// Exporter runs exports. Build it with New.
type Exporter struct {
	cfg     Config
	bucket  *bucket.Bucket
	log     *slog.Logger
	now     func() time.Time
	owner   string
	version string
	readers map[Source]reader
}

// Options are the Exporter's dependencies.
type Options struct {
	// Log receives the JSON log; Now is the clock (time.Now when nil).
	Log *slog.Logger
	Now func() time.Time
	// Owner names this run in leases (pod name and a random suffix).
	Owner string
	// Version of the exporter, written into markers.
	Version string
}

// New returns an exporter of cfg. Errors are configuration errors (invalid cfg or bucket settings).
func New(cfg Config, opts Options) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, err := bucket.Open(cfg.S3)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Exporter{cfg: cfg, bucket: b, log: log, now: now, owner: opts.Owner, version: opts.Version, readers: map[Source]reader{}}
	hc := victoria.NewHTTPClient()
	for _, s := range cfg.Sources {
		sel := cfg.Selection[s]
		switch s {
		case Metrics:
			e.readers[s] = metricsReader{api: victoria.Metrics{Endpoint: victoria.Endpoint{Base: cfg.MetricsURL, HTTP: hc}}, sel: sel}
		case Logs:
			e.readers[s] = logsReader{api: victoria.Logs{Endpoint: victoria.Endpoint{Base: cfg.LogsURL, HTTP: hc}}, sel: sel}
		case Traces:
			e.readers[s] = logsReader{api: victoria.Logs{Endpoint: victoria.Endpoint{Base: cfg.TracesURL, HTTP: hc}}, sel: sel, spans: true}
		}
	}
	return e, nil
}

// Run exports the windows of the configured plan at the current time. See RunWindows.
func (e *Exporter) Run(ctx context.Context) Result {
	ws, err := e.cfg.Plan.Windows(e.now())
	if err != nil {
		return Result{Failed: []Failure{{Err: err}}}
	}
	return e.RunWindows(ctx, ws)
}

// errBucket marks errors of the S3 side: after one, the run stops (S3 is down or refuses us; every later window
// would fail the same way).
type errBucket struct{ error }

func (e errBucket) Unwrap() error { return e.error }

// RunWindows exports every source of every window in ws and returns what happened. A source that cannot be
// listed fails all its windows with one log line; an S3 failure stops the run and fails every window not yet
// done. It logs the counts and every failure at the end.
func (e *Exporter) RunWindows(ctx context.Context, ws []window.Hour) Result {
	var res Result
	if err := e.bucket.Ping(ctx); err != nil {
		e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
		for _, s := range e.cfg.Sources {
			for _, h := range ws {
				res.Failed = append(res.Failed, Failure{Source: s, Window: h, Err: err})
			}
		}
		return e.finish(res)
	}
	var stop error
	for _, s := range e.cfg.Sources {
		var down error
		for _, h := range ws {
			switch {
			case stop != nil:
				res.Failed = append(res.Failed, Failure{Source: s, Window: h, Err: fmt.Errorf("not attempted: %w", stop)})
				continue
			case down != nil:
				res.Failed = append(res.Failed, Failure{Source: s, Window: h, Err: down})
				continue
			}
			parts, err := e.readers[s].partitions(ctx, h)
			if err != nil {
				down = fmt.Errorf("list %s of %s: %w", s, h, err)
				e.log.Error(msgSourceDown, "source", string(s), "url", e.cfg.SourceURL(s), "error", err.Error())
				res.Failed = append(res.Failed, Failure{Source: s, Window: h, Err: down})
				continue
			}
			for _, p := range parts {
				if stop != nil {
					res.Failed = append(res.Failed, Failure{Source: s, Window: h, Tenant: p.Tenant, Cluster: p.Cluster, Err: fmt.Errorf("not attempted: %w", stop)})
					continue
				}
				done, err := e.exportOne(ctx, s, h, p)
				switch {
				case err == nil && done:
					res.Exported++
				case err == nil:
					res.Skipped++
				default:
					res.Failed = append(res.Failed, Failure{Source: s, Window: h, Tenant: p.Tenant, Cluster: p.Cluster, Err: err})
					e.log.Error(msgFailed, "source", string(s), "window", h.String(), "tenant", p.Tenant, "cluster", p.Cluster, "error", err.Error())
					var be errBucket
					if errors.As(err, &be) {
						stop = err
					}
				}
			}
		}
	}
	return e.finish(res)
}

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

// exportOne exports one folder. It returns true when it wrote the folder, false when the folder was already
// exported; errors of the S3 side are errBucket.
func (e *Exporter) exportOne(ctx context.Context, s Source, h window.Hour, p Partition) (bool, error) {
	folder := Folder(e.cfg.Prefix, p.Tenant, p.Cluster, h, s)
	dataKey, successKey := folder+DataName(s), folder+SuccessName
	if _, ok, err := e.bucket.Stat(ctx, successKey); err != nil {
		return false, errBucket{err}
	} else if ok {
		e.log.Debug(msgSkipped, "key", successKey)
		return false, nil
	}
	lease, err := e.bucket.Acquire(ctx, folder+LockName, e.owner, e.cfg.Lease, e.now())
	if err != nil {
		var held *bucket.HeldError
		if errors.As(err, &held) {
			return false, err
		}
		return false, errBucket{err}
	}
	defer func() { _ = lease.Release(context.WithoutCancel(ctx)) }()
	if _, ok, err := e.bucket.Stat(ctx, successKey); err != nil {
		return false, errBucket{err}
	} else if ok {
		return false, nil // another run finished it while we waited for the lease
	}
	e.log.Info(msgStreaming, "key", dataKey, "source", string(s), "window", h.String(), "tenant", p.Tenant, "cluster", p.Cluster)
	sum, obj, err := e.stream(ctx, s, h, p, dataKey)
	if err != nil {
		return false, err
	}
	if err := lease.Check(ctx, e.now()); err != nil {
		return false, errBucket{fmt.Errorf("not marking %s done: %w", dataKey, err)}
	}
	m := Marker{
		Source: s, Tenant: p.Tenant, Cluster: p.Cluster, WindowStart: h.Start, WindowEnd: h.End,
		Key: dataKey, ETag: obj.ETag, Summary: sum, Producer: Producer, Version: e.version, ExportedAt: e.now().UTC(),
	}
	body, err := json.Marshal(m)
	if err != nil {
		return false, fmt.Errorf("encode marker: %w", err)
	}
	if _, err := e.bucket.PutBytes(ctx, successKey, body, contentJSON, bucket.Condition{IfAbsent: true}); err != nil {
		return false, errBucket{err}
	}
	e.log.Info(msgExported, "key", dataKey, "source", string(s), "window", h.String(), "tenant", p.Tenant,
		"cluster", p.Cluster, "rows", sum.Rows, "size_bytes", sum.Bytes)
	return true, nil
}

// stream writes the folder's Parquet file to dataKey while it reads the source: the source side encodes into a
// pipe that the S3 multipart upload reads. Either side's failure aborts both, and the upload is never completed.
func (e *Exporter) stream(ctx context.Context, s Source, h window.Hour, p Partition, dataKey string) (columnar.Summary, bucket.Object, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	type written struct {
		sum columnar.Summary
		err error
	}
	done := make(chan written, 1)
	go func() {
		sum, err := e.readers[s].write(ctx, p, h, pw, columnar.Options{RowGroupRows: e.cfg.RowGroupRows, CreatedBy: Producer + " " + e.version})
		_ = pw.CloseWithError(err)
		done <- written{sum, err}
	}()
	obj, putErr := e.bucket.Put(ctx, dataKey, pr, contentParquet, bucket.Condition{})
	if putErr != nil {
		_ = pr.CloseWithError(putErr)
		cancel()
	}
	w := <-done
	ours := putErr != nil && (w.err == nil || errors.Is(w.err, putErr) || errors.Is(w.err, context.Canceled) || errors.Is(w.err, io.ErrClosedPipe))
	switch {
	case ours:
		return columnar.Summary{}, bucket.Object{}, errBucket{putErr}
	case w.err != nil:
		return columnar.Summary{}, bucket.Object{}, fmt.Errorf("read %s from %s: %w", s, e.cfg.SourceURL(s), w.err)
	case putErr != nil:
		return columnar.Summary{}, bucket.Object{}, errBucket{putErr}
	case obj.Size != w.sum.Bytes:
		return columnar.Summary{}, bucket.Object{}, errBucket{fmt.Errorf("PUT %s: stored %d bytes, wrote %d", dataKey, obj.Size, w.sum.Bytes)}
	}
	return w.sum, obj, nil
}
