package columnar

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Leaf column indexes of MetricRow's schema (parquet.SchemaOf keeps the struct's field order; TestMetricColumns
// checks them).
const (
	colTimestamp = iota
	colMetricName
	colValue
	colLabelKey
	colLabelValue
)

// MetricWriter writes MetricRow files series by series: the label columns of a series are encoded once and reused
// for each of its samples, so a sample costs three values plus a copy of the series' label values instead of a Go
// map walk per row. The file is identical in schema to one written from MetricRow values.
type MetricWriter struct {
	pw     *parquet.Writer
	out    *measure
	batch  []parquet.Row
	n      int
	series []parquet.Value // metric_name, then the label keys, then the label values, with their levels
	labels int
	sum    Summary
}

// NewMetricWriter returns a MetricWriter writing to w.
func NewMetricWriter(w io.Writer, opts Options) *MetricWriter {
	rows := opts.RowGroupRows
	if rows <= 0 {
		rows = DefaultRowGroupRows
	}
	m := &measure{w: w, h: sha256.New()}
	wopts := []parquet.WriterOption{
		parquet.SchemaOf(MetricRow{}),
		parquet.Compression(&parquet.Zstd),
		parquet.MaxRowsPerRowGroup(rows),
		// Label keys and values are long, repeated byte arrays: page min/max bounds over them cost more than the
		// rest of a row and prune nothing the partition folders do not.
		parquet.SkipPageBounds("labels", "key_value", "key"),
		parquet.SkipPageBounds("labels", "key_value", "value"),
	}
	if opts.CreatedBy != "" {
		wopts = append(wopts, parquet.CreatedBy(opts.CreatedBy, "", ""))
	}
	b := make([]parquet.Row, batch)
	return &MetricWriter{pw: parquet.NewWriter(m, wopts...), out: m, batch: b}
}

// Series starts a series: the samples written next carry name and labels (name/value pairs, `__name__` already
// removed). labels is copied.
func (w *MetricWriter) Series(name string, labels [][2]string) {
	w.series = w.series[:0]
	w.series = append(w.series, parquet.ByteArrayValue([]byte(name)).Level(0, 0, colMetricName))
	w.labels = len(labels)
	if len(labels) == 0 { // an empty map: one null entry at definition level 0
		w.series = append(w.series, parquet.NullValue().Level(0, 0, colLabelKey), parquet.NullValue().Level(0, 0, colLabelValue))
		return
	}
	for i, l := range labels {
		w.series = append(w.series, parquet.ByteArrayValue([]byte(l[0])).Level(rep(i), 1, colLabelKey))
	}
	for i, l := range labels {
		w.series = append(w.series, parquet.ByteArrayValue([]byte(l[1])).Level(rep(i), 1, colLabelValue))
	}
}

// rep is the repetition level of the i-th entry of a map: 0 starts the row's map, 1 repeats it.
func rep(i int) int {
	if i == 0 {
		return 0
	}
	return 1
}

// Sample writes one sample of the current series (ms since the Unix epoch). Errors are write errors.
func (w *MetricWriter) Sample(ms int64, v float64) error {
	t := time.UnixMilli(ms)
	if w.sum.Rows == 0 || t.Before(w.sum.MinTime) {
		w.sum.MinTime = t
	}
	if w.sum.Rows == 0 || t.After(w.sum.MaxTime) {
		w.sum.MaxTime = t
	}
	w.sum.Rows++
	row := w.batch[w.n][:0]
	row = append(row, parquet.Int64Value(ms).Level(0, 0, colTimestamp), w.series[0], parquet.DoubleValue(v).Level(0, 0, colValue))
	row = append(row, w.series[1:]...)
	w.batch[w.n] = row
	w.n++
	if w.n == len(w.batch) {
		return w.flush()
	}
	return nil
}

func (w *MetricWriter) flush() error {
	if w.n == 0 {
		return nil
	}
	if _, err := w.pw.WriteRows(w.batch[:w.n]); err != nil {
		return fmt.Errorf("write parquet rows: %w", err)
	}
	w.n = 0
	return nil
}

// Close writes the footer and returns the file's summary. It does not close the underlying writer.
func (w *MetricWriter) Close() (Summary, error) {
	if err := w.flush(); err != nil {
		return Summary{}, err
	}
	if err := w.pw.Close(); err != nil {
		return Summary{}, fmt.Errorf("close parquet file: %w", err)
	}
	w.sum.Bytes = w.out.n
	w.sum.SHA256 = hex.EncodeToString(w.out.h.Sum(nil))
	w.sum.MinTime, w.sum.MaxTime = w.sum.MinTime.UTC(), w.sum.MaxTime.UTC()
	return w.sum, nil
}
