package columnar

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// MetricsLayout is the layout version of the metrics folders SeriesWriter writes: a samples file and a series file
// joined on series_id (layout 1 was one metrics.parquet with the labels on every sample).
const MetricsLayout = 2

// Footer key-value metadata every file of this package carries, so a rerun can check a file it finds without a
// `_SUCCESS` marker.
const (
	// MetaLayout is the layout version (MetricsLayout, or 1 for logs and spans).
	MetaLayout = "kof.layout"
	// MetaTable names the table of the file: samples, series, logs or spans.
	MetaTable = "kof.table"
	// MetaRows is the row count; MetaMinTime and MetaMaxTime bound the row timestamps (RFC 3339, UTC).
	MetaRows    = "kof.rows"
	MetaMinTime = "kof.min_time"
	MetaMaxTime = "kof.max_time"
	// MetaSeries is the number of distinct series_id values of a samples or series file.
	MetaSeries = "kof.series"
)

// seriesRowGroupRows bounds the row groups of a series file: its rows are wide (every label), and a small row group
// keeps the exporter's memory flat when an hour holds many series.
const seriesRowGroupRows = 4096

// SampleRow is one sample: the schema of `samples.parquet`.
type SampleRow struct {
	// SeriesID joins the sample to its row of `series.parquet`. Dictionary-encoded: a row group stores its distinct
	// ids once and then runs of indexes (a series' samples are consecutive), where delta encoding paid a 64-bit jump
	// at every change of series; the benchmark's samples file is 62% smaller and its write path 15% cheaper.
	SeriesID int64 `parquet:"series_id,dict"`
	// Timestamp of the sample in ms since the Unix epoch (TIMESTAMP(MILLIS), UTC).
	Timestamp int64 `parquet:"timestamp,timestamp(millisecond),delta"`
	// Value of the sample (DOUBLE, BYTE_STREAM_SPLIT: the bytes of the values of a page are stored byte plane by byte
	// plane, so ZSTD finds the repeated sign, exponent and high mantissa bytes; the benchmark's files are 55% smaller
	// and ZSTD's share of the write path falls from about half to a tenth).
	Value float64 `parquet:"value,split"`
}

// SeriesRow is one series: the schema of `series.parquet`.
type SeriesRow struct {
	// SeriesID is SeriesID of the name and labels.
	SeriesID int64 `parquet:"series_id"`
	// MetricName is the `__name__` label.
	MetricName string `parquet:"metric_name,dict"`
	// Labels are the other labels of the series (MAP<STRING,STRING>). The names are dictionary-encoded (a few
	// dozen per file); the values are not: most of them (pod, id, instance) differ from series to series, so a
	// dictionary only costs a hash lookup per value. Without it the series file of BenchmarkSeriesWriter is 2.5%
	// smaller and the write path uses about a tenth less CPU.
	Labels map[string]string `parquet:"labels" parquet-key:",dict"`
}

// SeriesID returns the id of a series: the 64-bit FNV-1a hash of the metric name and the labels sorted by name, each
// string length-prefixed (a uvarint, so no two label sets encode alike). The id depends on the series alone, so every
// run gives a series the same id, and a series file written by one run joins the samples file of another. labels is
// not modified; labels already sorted by name (as VictoriaMetrics exports them) are hashed without a copy.
func SeriesID(name string, labels [][2]string) int64 {
	id, _ := seriesKey(nil, name, labels)
	return id
}

// seriesKey returns SeriesID of name and labels and, when check is not nil, a second hash of the same encoding
// written to check (reset first): hash/maphash with the check's seed, independent of FNV-1a, so that two series with
// one id are told apart. The check hash is only compared within one process (its seed is random).
func seriesKey(check *maphash.Hash, name string, labels [][2]string) (int64, uint64) {
	sorted := labels
	if !slices.IsSortedFunc(labels, byName) {
		sorted = slices.Clone(labels)
		slices.SortFunc(sorted, byName)
	}
	if check != nil {
		check.Reset()
	}
	h := fnv1a(fnvOffset)
	put := func(s string) {
		h = h.put(s)
		if check != nil { // the same encoding: the length as a uvarint, then the bytes
			var n [binary.MaxVarintLen64]byte
			_, _ = check.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
			_, _ = check.WriteString(s)
		}
	}
	put(name)
	for _, l := range sorted {
		put(l[0])
		put(l[1])
	}
	if check == nil {
		return int64(h), 0 //nolint:gosec // the id is the hash's bits
	}
	return int64(h), check.Sum64() //nolint:gosec // the id is the hash's bits
}

// byName orders labels by name.
func byName(a, b [2]string) int { return strings.Compare(a[0], b[0]) }

// SortLabels orders labels by name in place, keeping the order of labels of the same name: the order SeriesID hashes
// and the series file writes, so a SeriesWriter given labels in that order neither copies nor sorts them (a caller
// that owns its labels slice sorts it once here instead of twice there).
func SortLabels(labels [][2]string) {
	if len(labels) > insertionSortMax {
		if !slices.IsSortedFunc(labels, byName) {
			slices.SortStableFunc(labels, byName)
		}
		return
	}
	// Insertion sort (stable: a label moves only past greater names), comparing names directly; an export line's
	// labels are a few sorted runs (VictoriaMetrics writes some names first).
	for i := 1; i < len(labels); i++ {
		x := labels[i]
		j := i
		for j > 0 && x[0] < labels[j-1][0] {
			labels[j] = labels[j-1]
			j--
		}
		labels[j] = x
	}
}

// insertionSortMax bounds the labels SortLabels sorts by insertion; longer lists go to slices.SortStableFunc.
const insertionSortMax = 32

// The 64-bit FNV parameters (hash/fnv, https://datatracker.ietf.org/doc/html/draft-eastlake-fnv).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv1a is a 64-bit FNV-1a hash state, as hash/fnv's New64a computes it, fed strings without converting them to
// byte slices.
type fnv1a uint64

// put returns the state after the length of s as a uvarint, then the bytes of s.
func (h fnv1a) put(s string) fnv1a {
	for n := uint64(len(s)); ; n >>= 7 {
		if n < 0x80 {
			h = (h ^ fnv1a(n)) * fnvPrime
			break
		}
		h = (h ^ fnv1a(n&0x7f|0x80)) * fnvPrime
	}
	for i := 0; i < len(s); i++ {
		h = (h ^ fnv1a(s[i])) * fnvPrime
	}
	return h
}

// SeriesWriter writes one metrics folder of layout MetricsLayout: every sample into the samples file (series_id,
// timestamp, value) and every distinct series once into the series file (series_id, metric_name, labels), both
// streamed to their writers with row groups bounded in rows. Either writer may be nil, which skips that file (a
// rerun that finds one of the two files complete writes only the other). Each file is encoded in a goroutine of its
// own, fed batches of rows; end a SeriesWriter with Close, or with Abort when its files are dropped.
type SeriesWriter struct {
	samples *encoder[SampleRow]
	series  *encoder[parquet.Row]
	sOut    *measure
	rOut    *measure

	seen     map[int64]uint64 // series id → check hash
	check    maphash.Hash     // the check hashes' state (seriesKey)
	cur      int64
	sum, ser Summary
	nSeries  int64
	minT     int64
	maxT     int64
	anyTimes bool
}

// NewSeriesWriter returns a SeriesWriter writing the samples file to samples and the series file to series (nil
// skips one). Errors are errors of the compression codec's setup.
func NewSeriesWriter(samples, series io.Writer, opts Options) (*SeriesWriter, error) {
	rows := opts.RowGroupRows
	if rows <= 0 {
		rows = DefaultRowGroupRows
	}
	w := &SeriesWriter{seen: map[int64]uint64{}}
	common := func(groupRows int64) ([]parquet.WriterOption, error) {
		codec, err := newZstdCodec(1)
		if err != nil {
			return nil, err
		}
		o := []parquet.WriterOption{parquet.Compression(codec), parquet.MaxRowsPerRowGroup(groupRows), parquet.DataPageStatistics(false)}
		if opts.CreatedBy != "" {
			o = append(o, parquet.CreatedBy(opts.CreatedBy, "", ""))
		}
		return o, nil
	}
	if samples != nil {
		o, err := common(rows)
		if err != nil {
			return nil, err
		}
		w.sOut = &measure{w: samples, h: sha256.New()}
		w.samples = newEncoder(parquet.NewGenericWriter[SampleRow](w.sOut, o...), "sample", sampleBatch)
	}
	if series != nil {
		o, err := common(min(rows, seriesRowGroupRows))
		if err != nil {
			return nil, err
		}
		o = append(o, parquet.SkipPageBounds("labels", "key_value", "key"), parquet.SkipPageBounds("labels", "key_value", "value"))
		w.rOut = &measure{w: series, h: sha256.New()}
		w.series = newEncoder[parquet.Row](rowWriter[SeriesRow]{parquet.NewGenericWriter[SeriesRow](w.rOut, o...)}, "series", seriesBatch)
		w.series.keep = true
	}
	return w, nil
}

// Series starts a series: the samples written next belong to name and labels (`__name__` already removed). A series
// seen before in this file is not written again. It returns an error when two different series hash to one id (the
// file would join them), naming both ids, and write errors of the series file.
func (w *SeriesWriter) Series(name string, labels [][2]string) error {
	id, check := seriesKey(&w.check, name, labels)
	w.cur = id
	if prev, ok := w.seen[id]; ok {
		if prev != check {
			return fmt.Errorf("series %s%v: series_id %d is already the id of another series of this hour", name, labels, id)
		}
		return nil
	}
	w.seen[id] = check
	w.nSeries++
	if w.series == nil {
		return nil
	}
	w.ser.Rows++
	row := w.series.reusable()[:0] // a row written before: its array is reused
	if size := 2 + 2*max(len(labels), 1); cap(row) < size {
		row = make(parquet.Row, 0, size)
	}
	return w.series.add(appendSeriesRow(row, id, name, labels))
}

// The columns of SeriesRow, in schema order, and the levels of its labels map (a required group of a repeated
// key_value group: definition level 1 for an entry, 0 for an empty map; repetition level 1 for every entry after
// the first of a row).
const (
	colSeriesID = iota
	colMetricName
	colLabelKey
	colLabelValue
)

// appendSeriesRow appends to row the series.parquet row of SeriesRow{id, name, labels as a map} as parquet-go writes
// that map (entries ordered by name, the last value of a name given twice kept) and returns it. The row refers to
// the strings' bytes without copying them.
func appendSeriesRow(row parquet.Row, id int64, name string, labels [][2]string) parquet.Row {
	labels = mapOrder(labels)
	row = append(row, parquet.Int64Value(id).Level(0, 0, colSeriesID), stringValue(name).Level(0, 0, colMetricName))
	if len(labels) == 0 {
		return append(row, parquet.NullValue().Level(0, 0, colLabelKey), parquet.NullValue().Level(0, 0, colLabelValue))
	}
	for col, part := range []int{colLabelKey, colLabelValue} {
		for i, l := range labels {
			row = append(row, stringValue(l[col]).Level(min(i, 1), 1, part))
		}
	}
	return row
}

// mapOrder returns labels ordered by name with one entry per name (the last one given), as a map of them would be
// written; labels already in that order (as VictoriaMetrics exports them) are returned as they are.
func mapOrder(labels [][2]string) [][2]string {
	ordered := true
	for i := 1; i < len(labels) && ordered; i++ {
		ordered = labels[i-1][0] < labels[i][0]
	}
	if ordered {
		return labels
	}
	out := slices.Clone(labels)
	slices.SortStableFunc(out, byName)
	keep := out[:0]
	for i, l := range out {
		if i+1 < len(out) && out[i+1][0] == l[0] {
			continue
		}
		keep = append(keep, l)
	}
	return keep
}

// stringValue returns s as a BYTE_ARRAY value sharing the bytes of s.
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Samples adds samples of the current series (ms since the Unix epoch; values[i] belongs to ts[i]). The rows are
// copied into the encoder's batch a run at a time, not handed over one by one. Errors are write errors of the samples
// file.
func (w *SeriesWriter) Samples(ts []int64, values []float64) error {
	if len(ts) == 0 {
		return nil
	}
	lo, hi := ts[0], ts[0]
	for _, t := range ts[1:] {
		lo, hi = min(lo, t), max(hi, t)
	}
	if !w.anyTimes || lo < w.minT {
		w.minT = lo
	}
	if !w.anyTimes || hi > w.maxT {
		w.maxT = hi
	}
	w.anyTimes = true
	w.sum.Rows += int64(len(ts))
	if w.samples == nil {
		return nil
	}
	e := w.samples
	values = values[:len(ts)]
	for len(ts) > 0 {
		n := min(cap(e.cur)-len(e.cur), len(ts))
		for i, t := range ts[:n] {
			e.cur = append(e.cur, SampleRow{SeriesID: w.cur, Timestamp: t, Value: values[i]})
		}
		ts, values = ts[n:], values[n:]
		if len(e.cur) == cap(e.cur) {
			if err := e.handOver(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rows returns the samples written so far (counted also when the samples file is skipped).
func (w *SeriesWriter) Rows() int64 { return w.sum.Rows }

// Close writes the pending rows and both footers and returns the summaries of the samples and the series file
// (zero for a skipped one; both count their rows). It does not close the underlying writers. Errors are the first
// write error of either file.
func (w *SeriesWriter) Close() (samples, series Summary, err error) {
	serr, rerr := w.samples.stop(), w.series.stop()
	if err := errors.Join(serr, rerr); err != nil {
		return Summary{}, Summary{}, err
	}
	if w.anyTimes {
		w.sum.MinTime, w.sum.MaxTime = time.UnixMilli(w.minT).UTC(), time.UnixMilli(w.maxT).UTC()
	}
	w.ser.MinTime, w.ser.MaxTime = w.sum.MinTime, w.sum.MaxTime
	if w.samples != nil {
		setMeta(w.samples.pw, "samples", w.sum, w.nSeries)
		if err := w.samples.pw.Close(); err != nil {
			return Summary{}, Summary{}, fmt.Errorf("close samples file: %w", err)
		}
		w.sum.Bytes, w.sum.SHA256 = w.sOut.n, hex.EncodeToString(w.sOut.h.Sum(nil))
	}
	if w.series != nil {
		setMeta(w.series.pw, "series", w.ser, w.nSeries)
		if err := w.series.pw.Close(); err != nil {
			return Summary{}, Summary{}, fmt.Errorf("close series file: %w", err)
		}
		w.ser.Bytes, w.ser.SHA256 = w.rOut.n, hex.EncodeToString(w.rOut.h.Sum(nil))
	}
	return w.sum, w.ser, nil
}

// Abort stops the encoding goroutines of a SeriesWriter that will not be closed (its export failed): the rows not
// yet written and the footers are dropped. It may follow Close, and then does nothing.
func (w *SeriesWriter) Abort() {
	_, _ = w.samples.stop(), w.series.stop()
}

// SeriesCount returns the distinct series seen so far.
func (w *SeriesWriter) SeriesCount() int64 { return w.nSeries }

// SeriesIDs returns the ids of the distinct series seen so far.
func (w *SeriesWriter) SeriesIDs() map[int64]bool {
	out := make(map[int64]bool, len(w.seen))
	for id := range w.seen {
		out[id] = true
	}
	return out
}

// metaWriter is the footer metadata setter of parquet-go's writers.
type metaWriter interface{ SetKeyValueMetadata(key, value string) }

// setMeta writes the footer metadata of a file of table with sum (series < 0: none).
func setMeta(w metaWriter, table string, sum Summary, series int64) {
	layout := 1
	if table == "samples" || table == "series" {
		layout = MetricsLayout
	}
	w.SetKeyValueMetadata(MetaLayout, strconv.Itoa(layout))
	w.SetKeyValueMetadata(MetaTable, table)
	w.SetKeyValueMetadata(MetaRows, strconv.FormatInt(sum.Rows, 10))
	if sum.Rows > 0 || table == "series" {
		w.SetKeyValueMetadata(MetaMinTime, sum.MinTime.UTC().Format(time.RFC3339Nano))
		w.SetKeyValueMetadata(MetaMaxTime, sum.MaxTime.UTC().Format(time.RFC3339Nano))
	}
	if series >= 0 {
		w.SetKeyValueMetadata(MetaSeries, strconv.FormatInt(series, 10))
	}
}

// Footer is what a file's footer says about it.
type Footer struct {
	// Layout and Table from the key-value metadata; Rows from the row groups (checked against MetaRows).
	Layout int
	Table  string
	Rows   int64
	// MinTime and MaxTime from the metadata (zero when the file has no rows).
	MinTime, MaxTime time.Time
	// Series is MetaSeries, -1 when absent.
	Series int64
	// Columns are the leaf column paths of the schema, dot-joined.
	Columns []string
}

// ReadFooter opens the Parquet file r of size bytes and returns its footer. It returns an error when the file is not
// Parquet, lacks this package's metadata, or its row groups do not add up to the rows its metadata records.
func ReadFooter(r io.ReaderAt, size int64) (Footer, error) {
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return Footer{}, fmt.Errorf("not a complete Parquet file: %w", err)
	}
	meta := map[string]string{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	out := Footer{Table: meta[MetaTable], Series: -1}
	for _, rg := range f.RowGroups() {
		out.Rows += rg.NumRows()
	}
	if out.Rows != f.NumRows() {
		return Footer{}, fmt.Errorf("the footer records %d rows, but the row groups hold %d", f.NumRows(), out.Rows)
	}
	if out.Layout, err = strconv.Atoi(meta[MetaLayout]); err != nil {
		return Footer{}, fmt.Errorf("footer metadata %s %q: not written by this exporter", MetaLayout, meta[MetaLayout])
	}
	rows, err := strconv.ParseInt(meta[MetaRows], 10, 64)
	if err != nil || rows != out.Rows {
		return Footer{}, fmt.Errorf("footer metadata %s %q, but the row groups hold %d rows", MetaRows, meta[MetaRows], out.Rows)
	}
	for k, dst := range map[string]*time.Time{MetaMinTime: &out.MinTime, MetaMaxTime: &out.MaxTime} {
		if v, ok := meta[k]; ok {
			if *dst, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return Footer{}, fmt.Errorf("footer metadata %s %q: %w", k, v, err)
			}
		}
	}
	if v, ok := meta[MetaSeries]; ok {
		if out.Series, err = strconv.ParseInt(v, 10, 64); err != nil {
			return Footer{}, fmt.Errorf("footer metadata %s %q: %w", MetaSeries, v, err)
		}
	}
	for _, path := range f.Schema().Columns() {
		out.Columns = append(out.Columns, joinPath(path))
	}
	return out, nil
}

func joinPath(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += "."
		}
		s += x
	}
	return s
}

// Columns returns the leaf column paths (dot-joined) of row type T, to compare with Footer.Columns.
func Columns[T any]() []string {
	var out []string
	var zero T
	for _, path := range parquet.SchemaOf(zero).Columns() {
		out = append(out, joinPath(path))
	}
	return out
}

// ReadSeriesIDs returns the distinct series_id values of the series or samples file r of size bytes. Errors are
// errors of reading the file.
func ReadSeriesIDs(r io.ReaderAt, size int64) (map[int64]bool, error) {
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("not a complete Parquet file: %w", err)
	}
	leaf, ok := f.Schema().Lookup("series_id")
	if !ok {
		return nil, fmt.Errorf("no series_id column")
	}
	out := map[int64]bool{}
	vals := make([]parquet.Value, 4096)
	for _, rg := range f.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				_ = pages.Close()
				return nil, fmt.Errorf("read series_id: %w", err)
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(vals)
				for _, v := range vals[:n] {
					out[v.Int64()] = true
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					parquet.Release(p)
					_ = pages.Close()
					return nil, fmt.Errorf("read series_id: %w", err)
				}
			}
			parquet.Release(p)
		}
		_ = pages.Close()
	}
	return out, nil
}
