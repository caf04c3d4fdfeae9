// Package coldstorage is the cold-storage exporter: every closed UTC hour of metrics (VictoriaMetrics), logs
// (VictoriaLogs) and traces (VictoriaTraces) as Parquet per tenant, cluster and source on S3, under Hive partitions
// `telemetry/tenant=<t>/cluster=<c>/dt=YYYY-MM-DD/hour=HH/<source>/` (metrics: `samples.parquet` and
// `series.parquet`; logs and traces: `<source>.parquet`), exactly once without locks: each data file is completed
// only if absent (If-None-Match), then `_SUCCESS` only if absent; a run that finds complete data files without
// `_SUCCESS` checks their footers and publishes them; every upload a run started and did not complete is aborted on
// its way out. It needs only s3:PutObject, s3:GetObject, s3:AbortMultipartUpload and s3:ListBucket.
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
	"maps"
	"slices"
	"sync"
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
	msgEmpty       = "window empty"
	msgRecovered   = "publishing files a previous run completed"
	msgFailed      = "window failed"
	msgSourceDown  = "source unreachable"
	msgBucketDown  = "S3 unreachable"
	msgFinished    = "export finished"
	msgFailedList  = "failed windows"
	msgLeftovers   = "removed part files a previous run left"
	contentParquet = "application/vnd.apache.parquet"
	contentJSON    = "application/json"
)

// Marker is the content of a `_SUCCESS` object: the layout of the folder and what each data file beside it holds.
type Marker struct {
	// Source, Tenant and Cluster of the folder.
	Source  Source `json:"source"`
	Tenant  string `json:"tenant"`
	Cluster string `json:"cluster"`
	// WindowStart and WindowEnd bound the window [start, end).
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// Layout is the folder's layout version: 2 for metrics (samples and series files), 1 for logs and traces. A
	// marker without it is layout 1 (metrics as one metrics.parquet).
	Layout int `json:"layout"`
	// Rows counts the samples, records or spans of the folder; Series the distinct series (metrics).
	Rows   int64 `json:"rows"`
	Series int64 `json:"series,omitempty"`
	// MinTime and MaxTime bound the row timestamps.
	MinTime time.Time `json:"min_time"`
	MaxTime time.Time `json:"max_time"`
	// Files describe each data file, in the layout's order.
	Files []MarkerFile `json:"files"`
	// Producer and Version of the exporter; ExportedAt when the marker was written.
	Producer   string    `json:"producer"`
	Version    string    `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
}

// MarkerFile describes one data file of a folder: its name, key and ETag, and its rows, bytes, sha256 and time
// range.
type MarkerFile struct {
	Name string `json:"name"`
	Key  string `json:"key"`
	ETag string `json:"etag"`
	columnar.Summary
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
	// Exported, Skipped (already exported) and Empty (no rows in the window: nothing written) folders.
	Exported, Skipped, Empty int
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
	// Owner names this run in logs (pod name and a random suffix).
	Owner string
	// Version of the exporter, written into markers.
	Version string
}

// New returns an exporter of cfg. When cfg.ScratchDir is set, uploads hold their parts in files there, and the part
// files a crashed run left there are removed (and logged). Errors are configuration errors (invalid cfg or bucket
// settings, a scratch folder that is missing or not writable, named by its variable).
func New(cfg Config, opts Options) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, err := bucket.Open(cfg.S3)
	if err != nil {
		return nil, err
	}
	removed, err := b.SpillTo(cfg.ScratchDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvScratchDir, err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if removed > 0 {
		log.Info(msgLeftovers, "folder", cfg.ScratchDir, "files", removed)
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

// RunWindows exports every source of every window in ws and returns what happened. The bucket is checked first
// (its request runs while the first source lists its first window, and nothing is written before it answers): when
// S3 cannot be reached every window fails with that error. A source that cannot be listed fails all its windows
// with one log line; an S3 failure stops the run and fails every window not yet done. It logs the counts and every
// failure at the end.
func (e *Exporter) RunWindows(ctx context.Context, ws []window.Hour) Result {
	var res Result
	ping := make(chan error, 1)
	go func() { ping <- e.bucket.Ping(ctx) }()
	pinged := false
	bucketUp := func() bool {
		if pinged {
			return true
		}
		pinged = true
		err := <-ping
		if err == nil {
			return true
		}
		e.log.Error(msgBucketDown, "url", e.bucket.URL(), "error", err.Error())
		res = Result{}
		for _, s := range e.cfg.Sources {
			for _, h := range ws {
				res.Failed = append(res.Failed, Failure{Source: s, Window: h, Err: err})
			}
		}
		return false
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
			if !bucketUp() {
				return e.finish(res)
			}
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
				out, err := e.exportOne(ctx, s, h, p)
				switch {
				case err == nil && out == exported:
					res.Exported++
				case err == nil && out == empty:
					res.Empty++
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
	bucketUp() // when no window was listed, the bucket's answer still decides the result
	return e.finish(res)
}

func (e *Exporter) finish(res Result) Result {
	e.log.Info(msgFinished, "run", e.owner, "exported", res.Exported, "skipped", res.Skipped, "empty", res.Empty, "failed", len(res.Failed))
	if len(res.Failed) > 0 {
		list := make([]string, len(res.Failed))
		for i, f := range res.Failed {
			list[i] = f.String()
		}
		e.log.Error(msgFailedList, "count", len(list), "windows", list)
	}
	return res
}

// Close aborts every multipart upload the exporter started and did not complete (call it on the way out; a signal
// that cancelled the run leaves none behind). It returns the abort errors.
func (e *Exporter) Close() error { return e.bucket.AbortAll() }

// outcome is what exportOne did with a folder.
type outcome int

const (
	skipped  outcome = iota // the folder was exported already
	exported                // this run published it
	empty                   // the window holds no rows: nothing was written
)

// errRace says that another run completed an object of the folder while this run wrote it; the folder is looked
// at again.
var errRace = errors.New("another run wrote this folder at the same time")

// raceAttempts bounds how often exportOne looks at a folder again after a race.
const raceAttempts = 3

// exportOne exports one folder: it returns skipped when `_SUCCESS` exists, empty when the window has no rows (and
// writes nothing), exported when it published the folder. Errors of the S3 side are errBucket.
func (e *Exporter) exportOne(ctx context.Context, s Source, h window.Hour, p Partition) (outcome, error) {
	for attempt := 1; ; attempt++ {
		out, err := e.tryFolder(ctx, s, h, p)
		if !errors.Is(err, errRace) || attempt == raceAttempts {
			return out, err
		}
	}
}

// tryFolder is one look at a folder: skip it when marked; write the data files it lacks from the source (each
// completed only if absent); check every data file; write `_SUCCESS` only if absent.
func (e *Exporter) tryFolder(ctx context.Context, s Source, h window.Hour, p Partition) (outcome, error) {
	folder := Folder(e.cfg.Prefix, p.Tenant, p.Cluster, h, s)
	successKey := folder + SuccessName
	// One listing of the folder says both whether it is published and which data files are complete (one request
	// per folder instead of a HEAD of the marker and then the listing).
	list, err := e.bucket.List(ctx, folder)
	if err != nil {
		return skipped, errBucket{err}
	}
	found := map[string]bucket.Object{}
	for _, o := range list {
		found[o.Key] = o
	}
	if _, ok := found[successKey]; ok {
		e.log.Debug(msgSkipped, "key", successKey)
		return skipped, nil
	}
	layout, files := layoutOf(s)
	objs := make([]bucket.Object, len(files))
	var missing []int
	for i, f := range files {
		o, ok := found[folder+f.name]
		if !ok {
			missing = append(missing, i)
		}
		objs[i] = o
	}
	sums := make([]columnar.Summary, len(files))
	var wrote written
	if len(missing) > 0 {
		n, w, err := e.writeMissing(ctx, s, h, p, folder, files, missing, objs, sums)
		if err != nil {
			return skipped, err
		}
		if n == 0 && len(missing) < len(files) {
			return skipped, fmt.Errorf("%s: the source has no rows for this window, but %s is complete without %s; remove it (it is not published) or restore the source",
				folder, folder+files[0].name, SuccessName)
		}
		if n == 0 {
			e.log.Debug(msgEmpty, "folder", folder, "source", string(s), "window", h.String(), "tenant", p.Tenant, "cluster", p.Cluster)
			return empty, nil
		}
		wrote = w
	} else {
		e.log.Info(msgRecovered, "folder", folder, "source", string(s), "window", h.String(), "tenant", p.Tenant, "cluster", p.Cluster)
	}
	m := Marker{
		Source: s, Tenant: p.Tenant, Cluster: p.Cluster, WindowStart: h.Start, WindowEnd: h.End, Layout: layout,
		Producer: Producer, Version: e.version,
	}
	for i, f := range files {
		if sums[i].SHA256 == "" { // complete before this look: check it
			sum, err := e.check(ctx, objs[i], f, layout)
			if err != nil {
				return skipped, err
			}
			sums[i] = sum
		}
		m.Files = append(m.Files, MarkerFile{Name: f.name, Key: objs[i].Key, ETag: objs[i].ETag, Summary: sums[i]})
	}
	m.Rows, m.MinTime, m.MaxTime = sums[0].Rows, sums[0].MinTime, sums[0].MaxTime
	if s == Metrics {
		series, err := e.checkPair(ctx, objs, missing, wrote)
		if err != nil {
			return skipped, err
		}
		m.Series = series
	}
	m.ExportedAt = e.now().UTC()
	body, err := json.Marshal(m)
	if err != nil {
		return skipped, fmt.Errorf("encode marker: %w", err)
	}
	if _, err := e.bucket.PutBytes(ctx, successKey, body, contentJSON, bucket.Condition{IfAbsent: true}); errors.Is(err, bucket.ErrPrecondition) {
		return skipped, nil // another run published the same files first
	} else if err != nil {
		return skipped, errBucket{err}
	}
	e.log.Info(msgExported, "key", objs[0].Key, "source", string(s), "window", h.String(), "tenant", p.Tenant,
		"cluster", p.Cluster, "rows", m.Rows, "size_bytes", totalBytes(m.Files), "layout", layout)
	return exported, nil
}

func totalBytes(files []MarkerFile) int64 {
	var n int64
	for _, f := range files {
		n += f.Bytes
	}
	return n
}

// writeMissing streams the source into the files of the folder that are missing (indexes missing of files), each
// an Upload, and completes them at once, each only if absent. It fills objs and sums of the files it completed and
// returns the rows read (0: nothing was written) and what the reader wrote. A file another run completed first is
// errRace (this run's uploads are then aborted).
func (e *Exporter) writeMissing(ctx context.Context, s Source, h window.Hour, p Partition, folder string, files []dataFile,
	missing []int, objs []bucket.Object, sums []columnar.Summary) (int64, written, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ups := make([]*bucket.Upload, len(files))
	outs := make([]io.Writer, len(files))
	sinks := make([]*sink, len(files))
	for _, i := range missing {
		ups[i] = e.bucket.NewUpload(ctx, folder+files[i].name, contentParquet)
		sinks[i] = &sink{u: ups[i]}
		outs[i] = sinks[i]
	}
	defer func() {
		for _, u := range ups {
			if u != nil {
				if err := u.Abort(); err != nil {
					e.log.Warn("abort upload", "key", u.Key(), "error", err.Error())
				}
			}
		}
	}()
	e.log.Info(msgStreaming, "key", folder+files[missing[0]].name, "source", string(s), "window", h.String(), "tenant", p.Tenant, "cluster", p.Cluster)
	w, err := e.readers[s].write(ctx, p, h, outs, columnar.Options{RowGroupRows: e.cfg.RowGroupRows, CreatedBy: Producer + " " + e.version})
	for _, sk := range sinks {
		if sk != nil && sk.err != nil {
			return 0, written{}, errBucket{sk.err}
		}
	}
	if err != nil {
		return 0, written{}, fmt.Errorf("read %s from %s: %w", s, e.cfg.SourceURL(s), err)
	}
	if w.rows == 0 {
		return 0, w, nil
	}
	// The files are completed at once, each only if absent: neither is published before `_SUCCESS`, and a run that
	// stops between the two commits leaves one complete file, which the next run checks and keeps.
	done := make([]bucket.Object, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for _, i := range missing {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[i], errs[i] = ups[i].Commit(ctx, bucket.Condition{IfAbsent: true})
		}()
	}
	wg.Wait()
	for _, i := range missing {
		if errors.Is(errs[i], bucket.ErrPrecondition) {
			return 0, written{}, errRace
		}
	}
	for _, i := range missing {
		if errs[i] != nil {
			return 0, written{}, errBucket{errs[i]}
		}
		if done[i].Size != w.sums[i].Bytes {
			return 0, written{}, errBucket{fmt.Errorf("PUT %s: stored %d bytes, wrote %d", done[i].Key, done[i].Size, w.sums[i].Bytes)}
		}
		objs[i], sums[i] = done[i], w.sums[i]
	}
	return w.rows, w, nil
}

// sink is an Upload that keeps its first write error, so that a failed write is told apart from a source error.
type sink struct {
	u   *bucket.Upload
	err error
}

func (k *sink) Write(p []byte) (int, error) {
	n, err := k.u.Write(p)
	if err != nil && k.err == nil {
		k.err = err
	}
	return n, err
}

// check reads the footer of the data file obj (complete before this run looked at the folder) and returns its
// summary. The file must be Parquet of f's table and columns in layout with the row count its metadata records;
// otherwise the error names the key and the fix (the folder is not published, so the file may be removed).
func (e *Exporter) check(ctx context.Context, obj bucket.Object, f dataFile, layout int) (columnar.Summary, error) {
	rc, _, err := e.bucket.Open(ctx, obj.Key)
	if err != nil {
		return columnar.Summary{}, errBucket{err}
	}
	defer rc.Close()
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		return columnar.Summary{}, fmt.Errorf("GET %s: object reader cannot seek", obj.Key)
	}
	foot, err := columnar.ReadFooter(ra, obj.Size)
	bad := func(why string) error {
		return fmt.Errorf("%s is complete but not published and %s; remove it so that the next run rewrites the folder", obj.Key, why)
	}
	switch {
	case err != nil:
		return columnar.Summary{}, bad(err.Error())
	case foot.Layout != layout || foot.Table != f.table:
		return columnar.Summary{}, bad(fmt.Sprintf("its footer says layout %d table %q, want layout %d table %q", foot.Layout, foot.Table, layout, f.table))
	case !slices.Equal(foot.Columns, f.columns):
		return columnar.Summary{}, bad(fmt.Sprintf("its columns are %v, want %v", foot.Columns, f.columns))
	}
	sum, err := e.bucket.SHA256(ctx, obj.Key)
	if err != nil {
		return columnar.Summary{}, errBucket{err}
	}
	return columnar.Summary{Rows: foot.Rows, Bytes: obj.Size, SHA256: sum, MinTime: foot.MinTime, MaxTime: foot.MaxTime}, nil
}

// checkPair checks that the series file of a metrics folder names every series_id of its samples file, when the
// two were not both written by this look (a rerun completed one of them, or found both from earlier runs), and
// returns the number of series of the samples. Series ids are SeriesID of each series, the same in every run.
func (e *Exporter) checkPair(ctx context.Context, objs []bucket.Object, missing []int, wrote written) (int64, error) {
	if len(missing) == 2 {
		return wrote.series, nil
	}
	ids := func(i int) (map[int64]bool, error) {
		if slices.Contains(missing, i) {
			return wrote.ids, nil
		}
		rc, _, err := e.bucket.Open(ctx, objs[i].Key)
		if err != nil {
			return nil, errBucket{err}
		}
		defer rc.Close()
		got, err := columnar.ReadSeriesIDs(rc.(io.ReaderAt), objs[i].Size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", objs[i].Key, err)
		}
		return got, nil
	}
	samples, err := ids(0)
	if err != nil {
		return 0, err
	}
	series, err := ids(1)
	if err != nil {
		return 0, err
	}
	for _, id := range slices.Sorted(maps.Keys(samples)) {
		if !series[id] {
			return 0, fmt.Errorf("%s has samples of series_id %d, which %s lacks; remove %s (it is not published) so that the next run rewrites it",
				objs[0].Key, id, objs[1].Key, objs[1].Key)
		}
	}
	return int64(len(samples)), nil
}
