package coldstorage

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/victoria"
	"kof.dev/kof/exporters/window"
)

// Partition is one (tenant, cluster) folder of a window: the partition names and the raw values that map to them
// (data without a tenant goes to DefaultTenant, without a cluster to UnknownCluster, together with data whose value
// is that name, so that nothing is skipped as "already exported").
type Partition struct {
	// Tenant and Cluster are the partition names.
	Tenant, Cluster string
	// TenantValues and ClusterValues are the stored values selected ("" = the field is missing).
	TenantValues, ClusterValues []string
}

// reader reads one source.
type reader interface {
	// partitions returns the partitions with data in h, sorted.
	partitions(ctx context.Context, h window.Hour) ([]Partition, error)
	// write streams every row of p in h into the data files of the source's layout, outs[i] receiving file i of
	// layoutOf (a nil writer skips that file; its summary is then zero).
	write(ctx context.Context, p Partition, h window.Hour, outs []io.Writer, opts columnar.Options) (written, error)
}

// written is what a reader wrote: one summary per file, the rows read (samples, records or spans, counted also
// for skipped files) and, for metrics, the number of distinct series read and, only when one of the two files was
// skipped (checkPair then compares them with the other file), their ids.
type written struct {
	sums   []columnar.Summary
	rows   int64
	series int64
	ids    map[int64]bool
}

// tenantName and clusterName map stored values to partition names.
func tenantName(v string) string {
	if v == "" {
		return DefaultTenant
	}
	return v
}

func clusterName(v string) string {
	if v == "" {
		return UnknownCluster
	}
	return v
}

// group builds the sorted partitions of raw (tenant value → cluster values).
func group(raw map[string][]string) []Partition {
	type key struct{ t, c string }
	byKey := map[key]*Partition{}
	for tv, cvs := range raw {
		for _, cv := range cvs {
			k := key{tenantName(tv), clusterName(cv)}
			p := byKey[k]
			if p == nil {
				p = &Partition{Tenant: k.t, Cluster: k.c}
				byKey[k] = p
			}
			p.TenantValues = addUnique(p.TenantValues, tv)
			p.ClusterValues = addUnique(p.ClusterValues, cv)
		}
	}
	out := make([]Partition, 0, len(byKey))
	for _, p := range byKey {
		sort.Strings(p.TenantValues)
		sort.Strings(p.ClusterValues)
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tenant != out[j].Tenant {
			return out[i].Tenant < out[j].Tenant
		}
		return out[i].Cluster < out[j].Cluster
	})
	return out
}

func addUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// metricsReader reads VictoriaMetrics.
type metricsReader struct {
	api victoria.Metrics
	sel Selection
}

// labelMatch selects the series whose label is one of values exactly ("" = the label is missing).
type labelMatch struct {
	label  string
	values []string
}

// String returns the PromQL matcher of the match: `label="v"`, or `label=~"(?:v1|v2)"` with the values quoted.
func (l labelMatch) String() string {
	if len(l.values) == 1 {
		return l.label + "=" + strconv.Quote(l.values[0])
	}
	alts := make([]string, len(l.values))
	for i, v := range l.values {
		alts[i] = regexp.QuoteMeta(v)
	}
	return l.label + "=~" + strconv.Quote("(?:"+strings.Join(alts, "|")+")")
}

// needsValue reports whether the match selects only series that have the label (no value is "").
func (l labelMatch) needsValue() bool { return len(l.values) > 0 && !slices.Contains(l.values, "") }

// selector returns the series selector of every series that all of matches select. PromQL wants a selector to hold
// a matcher that does not match the empty string, so `__name__!=""` (every series has a name) is added only when
// none of matches is such a matcher: VictoriaMetrics checks that filter on every series its index finds (at 41,667
// series in an hour, a cluster lookup of one tenant took 51 ms with it and 34 ms without).
func selector(matches ...labelMatch) string {
	parts := make([]string, 0, len(matches)+1)
	if !slices.ContainsFunc(matches, labelMatch.needsValue) {
		parts = append(parts, `__name__!=""`)
	}
	for _, l := range matches {
		parts = append(parts, l.String())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// partitions lists the (tenant, cluster) partitions of h. The tenants and the clusters of every series are looked
// up at once, neither with a selector, which VictoriaMetrics answers from its per-day index of label values alone.
// When the tenant lookup finds one value (a missing tenant counts as one), every series of those days has it, so the
// clusters of every series are that tenant's: one round of lookups lists the hour. With more tenants, the clusters
// of each are looked up with a tenant selector (a search of the tenant's series: 37 ms at 41,667 series in an hour,
// against 0.5 ms for the lookup without a selector), lookups at a time.
func (m metricsReader) partitions(ctx context.Context, h window.Hour) ([]Partition, error) {
	var tenants, clusters []string
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { tenants, err = m.values(gctx, m.sel.Tenant, h); return err })
	g.Go(func() (err error) { clusters, err = m.values(gctx, m.sel.Cluster, h); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(tenants) == 1 {
		return group(map[string][]string{tenants[0]: clusters}), nil
	}
	raw, err := clustersByTenant(ctx, tenants, func(ctx context.Context, t string) ([]string, error) {
		return m.values(ctx, m.sel.Cluster, h, labelMatch{m.sel.Tenant, []string{t}})
	})
	if err != nil {
		return nil, err
	}
	return group(raw), nil
}

// values returns the values of label among the series of matchers with samples in h, plus "" when some of them
// lack the label (the two lookups are sent at once).
func (m metricsReader) values(ctx context.Context, label string, h window.Hour, matches ...labelMatch) ([]string, error) {
	sel := "" // every series: no selector, so VictoriaMetrics need not list them (Metrics.LabelValues)
	if len(matches) > 0 {
		sel = selector(matches...)
	}
	return withMissing(ctx, func(ctx context.Context) ([]string, error) {
		return m.api.LabelValues(ctx, label, sel, h)
	}, func(ctx context.Context) ([]string, error) {
		return m.api.LabelValues(ctx, "__name__", selector(append(matches, labelMatch{label, []string{""}})...), h)
	})
}

// lookups bounds the value lookups of one partition listing that a reader sends to its source at once. A lookup
// of the clusters of one tenant is a search of the tenant's series (34 ms at 41,667 series in an hour), so an hour
// of many tenants is listed about lookups times faster than one tenant after the other.
const lookups = 4

// clustersByTenant returns clusters(ctx, t) of every tenant t, at most lookups of them at a time. The first error
// cancels the lookups still running and is returned.
func clustersByTenant(ctx context.Context, tenants []string, clusters func(context.Context, string) ([]string, error)) (map[string][]string, error) {
	var mu sync.Mutex
	raw := make(map[string][]string, len(tenants))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(lookups)
	for _, t := range tenants {
		g.Go(func() error {
			cs, err := clusters(ctx, t)
			if err != nil {
				return err
			}
			mu.Lock()
			raw[t] = cs
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return raw, nil
}

// withMissing runs the lookup of the values of a label or field and the lookup of the records that lack it at once,
// and returns the values, sorted, with "" added when the second lookup found any. It returns the first error.
func withMissing(ctx context.Context, values, missing func(context.Context) ([]string, error)) ([]string, error) {
	var vals, lacking []string
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { vals, err = values(ctx); return err })
	g.Go(func() (err error) { lacking, err = missing(ctx); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(lacking) > 0 {
		vals = addUnique(vals, "")
	}
	sort.Strings(vals)
	return vals, nil
}

// write reads the export of p in h (HTTP and JSON) and hands each line to a SeriesWriter, which encodes each file in
// a goroutine of its own (Parquet and ZSTD), so the reading and the two files share the cores. The SeriesWriter is
// built while the export request is on its way (its set-up takes a few milliseconds; the source's first line takes
// longer). It returns what it wrote; errors are the source's, the SeriesWriter's set-up's and its write errors.
func (m metricsReader) write(ctx context.Context, p Partition, h window.Hour, outs []io.Writer, opts columnar.Options) (written, error) {
	type built struct {
		w   *columnar.SeriesWriter
		err error
	}
	ready := make(chan built, 1)
	go func() {
		w, err := columnar.NewSeriesWriter(outs[0], outs[1], opts)
		ready <- built{w, err}
	}()
	var w *columnar.SeriesWriter
	var setupErr error
	await := func() {
		if w == nil && setupErr == nil {
			b := <-ready
			w, setupErr = b.w, b.err
		}
	}
	// The label pairs of a line are reused by the next: the SeriesWriter keeps no pair once Series returns (the
	// series file's rows refer to the label strings, which stay valid, not to the pairs).
	var pairs [][2]string
	sel := selector(labelMatch{m.sel.Tenant, p.TenantValues}, labelMatch{m.sel.Cluster, p.ClusterValues})
	readErr := m.api.Export(ctx, sel, h, func(s *victoria.Series) error {
		if await(); setupErr != nil {
			return setupErr
		}
		pairs = pairs[:0]
		name := ""
		for _, l := range s.Labels {
			if l.Name == "__name__" {
				name = l.Value
				continue
			}
			pairs = append(pairs, [2]string{l.Name, l.Value})
		}
		columnar.SortLabels(pairs) // sorted once here, not copied and sorted by w
		if err := w.Series(name, pairs); err != nil {
			return err
		}
		return w.Samples(s.Timestamps, s.Values)
	})
	if await(); setupErr != nil {
		return written{}, setupErr
	}
	if readErr != nil {
		w.Abort()
		return written{}, readErr
	}
	samples, series, err := w.Close()
	if err != nil {
		return written{}, err
	}
	wr := written{sums: []columnar.Summary{samples, series}, rows: w.Rows(), series: w.SeriesCount()}
	if outs[0] == nil || outs[1] == nil {
		wr.ids = w.SeriesIDs()
	}
	return wr, nil
}

// logsReader reads VictoriaLogs or VictoriaTraces through LogsQL; spans selects the span schema.
type logsReader struct {
	api   victoria.Logs
	sel   Selection
	spans bool
}

// filter returns the LogsQL filter selecting field in values exactly ("" = the field is missing).
func filter(field string, values []string) string {
	if len(values) == 1 {
		return victoria.Exact(field, values[0])
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = victoria.Exact(field, v)
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

func (l logsReader) partitions(ctx context.Context, h window.Hour) ([]Partition, error) {
	base := victoria.TimeFilter(h)
	tenants, err := l.values(ctx, base, l.sel.Tenant)
	if err != nil {
		return nil, err
	}
	raw, err := clustersByTenant(ctx, tenants, func(ctx context.Context, t string) ([]string, error) {
		return l.values(ctx, base+" "+victoria.Exact(l.sel.Tenant, t), l.sel.Cluster)
	})
	if err != nil {
		return nil, err
	}
	return group(raw), nil
}

// values returns the values of field among the records of query, plus "" when some of them lack it (the two
// lookups are sent at once).
func (l logsReader) values(ctx context.Context, query, field string) ([]string, error) {
	return withMissing(ctx, func(ctx context.Context) ([]string, error) {
		return l.api.FieldValues(ctx, query, field)
	}, func(ctx context.Context) ([]string, error) {
		return l.api.FieldValues(ctx, query+" "+victoria.Exact(field, ""), "_stream_id")
	})
}

func (l logsReader) query(p Partition, h window.Hour) string {
	return victoria.TimeFilter(h) + " " + filter(l.sel.Tenant, p.TenantValues) + " " + filter(l.sel.Cluster, p.ClusterValues)
}

func (l logsReader) write(ctx context.Context, p Partition, h window.Hour, outs []io.Writer, opts columnar.Options) (written, error) {
	if l.spans {
		return writeRecords(ctx, l, p, h, outs[0], opts, SpanOf)
	}
	return writeRecords(ctx, l, p, h, outs[0], opts, LogOf)
}

// writeRecords streams the records of p in h, mapped to rows by rowOf, as one Parquet file into out.
func writeRecords[T columnar.Row](ctx context.Context, l logsReader, p Partition, h window.Hour, out io.Writer, opts columnar.Options,
	rowOf func(*victoria.Record) (T, error)) (written, error) {
	w, err := columnar.New[T](out, opts)
	if err != nil {
		return written{}, err
	}
	err = l.api.Query(ctx, l.query(p, h), func(r *victoria.Record) error {
		row, err := rowOf(r)
		if err != nil {
			return err
		}
		return w.Write(row)
	})
	if err != nil {
		return written{}, err
	}
	sum, err := w.Close()
	if err != nil {
		return written{}, err
	}
	return written{sums: []columnar.Summary{sum}, rows: sum.Rows}, nil
}

// errField names a record field that could not be read.
func errField(field, value string, err error) error {
	return fmt.Errorf("record field %s %q: %w", field, value, err)
}
