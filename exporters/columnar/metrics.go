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
	numMetricColumns
)

// chunkRows is how many samples MetricWriter collects before it hands them to the column writers: large enough to
// amortise a call per column, small enough that one chunk is a fraction of a page.
const chunkRows = 1024

// MetricWriter writes MetricRow files column by column and series by series. The samples of the current series
// are collected in typed slices (timestamps, values) and written to each leaf column's writer in chunks
// (parquet-go's ColumnWriter.WriteRowValues), the series' name and label entries are encoded once per series and
// repeated, and the row group is flushed every RowGroupRows rows, so no row is assembled, no Go map is walked and no
// reflection runs per sample, and memory is bounded by one row group whatever the size of the hour. The file is
// identical in schema to one written from MetricRow values (TestMetricWriterRoundTrip reads it back as MetricRow).
type MetricWriter struct {
	pw      *parquet.GenericWriter[MetricRow]
	cols    []*parquet.ColumnWriter
	out     *measure
	maxRows int64
	inGroup int64 // rows of the open row group

	// The current series: its metric_name value and its label key and value entries with their levels.
	name         parquet.Value
	keys, values []parquet.Value
	// The samples of the current series not yet written.
	ts   []int64
	vals []float64
	// Reused value buffers, one per leaf column.
	buf [numMetricColumns][]parquet.Value
	sum Summary
}

// NewMetricWriter returns a MetricWriter writing to w. Errors are errors of the compression codec's setup.
func NewMetricWriter(w io.Writer, opts Options) (*MetricWriter, error) {
	rows := opts.RowGroupRows
	if rows <= 0 {
		rows = DefaultRowGroupRows
	}
	m := &measure{w: w, h: sha256.New()}
	codec, err := newZstdCodec(1)
	if err != nil {
		return nil, err
	}
	wopts := []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.MaxRowsPerRowGroup(rows),
		// Label keys and values are long, repeated byte arrays: page min/max bounds over them cost more than the
		// rest of a row and prune nothing the partition folders do not.
		parquet.SkipPageBounds("labels", "key_value", "key"),
		parquet.SkipPageBounds("labels", "key_value", "value"),
		// The deprecated per-page header statistics: readers use the column index and the column chunk statistics,
		// which are still written; computing the header copy took a quarter of the write time.
		parquet.DataPageStatistics(false),
	}
	if opts.CreatedBy != "" {
		wopts = append(wopts, parquet.CreatedBy(opts.CreatedBy, "", ""))
	}
	pw := parquet.NewGenericWriter[MetricRow](m, wopts...)
	return &MetricWriter{
		pw: pw, cols: pw.ColumnWriters(), out: m, maxRows: rows,
		ts: make([]int64, 0, chunkRows), vals: make([]float64, 0, chunkRows),
	}, nil
}

// Series starts a series: the samples written next carry name and labels (name/value pairs, `__name__` already
// removed). labels is copied. Errors are write errors of the previous series' pending samples.
func (w *MetricWriter) Series(name string, labels [][2]string) error {
	if err := w.flushChunk(); err != nil {
		return err
	}
	w.name = parquet.ByteArrayValue([]byte(name)).Level(0, 0, colMetricName)
	w.keys, w.values = w.keys[:0], w.values[:0]
	if len(labels) == 0 { // an empty map: one null entry at definition level 0
		w.keys = append(w.keys, parquet.NullValue().Level(0, 0, colLabelKey))
		w.values = append(w.values, parquet.NullValue().Level(0, 0, colLabelValue))
		return nil
	}
	for i, l := range labels {
		w.keys = append(w.keys, parquet.ByteArrayValue([]byte(l[0])).Level(rep(i), 1, colLabelKey))
		w.values = append(w.values, parquet.ByteArrayValue([]byte(l[1])).Level(rep(i), 1, colLabelValue))
	}
	return nil
}

// rep is the repetition level of the i-th entry of a map: 0 starts the row's map, 1 repeats it.
func rep(i int) int {
	if i == 0 {
		return 0
	}
	return 1
}

// Sample adds one sample of the current series (ms since the Unix epoch). Errors are write errors.
func (w *MetricWriter) Sample(ms int64, v float64) error {
	if w.sum.Rows == 0 || ms < w.sum.MinTime.UnixMilli() {
		w.sum.MinTime = time.UnixMilli(ms)
	}
	if w.sum.Rows == 0 || ms > w.sum.MaxTime.UnixMilli() {
		w.sum.MaxTime = time.UnixMilli(ms)
	}
	w.sum.Rows++
	w.ts = append(w.ts, ms)
	w.vals = append(w.vals, v)
	if len(w.ts) == chunkRows || w.inGroup+int64(len(w.ts)) == w.maxRows {
		return w.flushChunk()
	}
	return nil
}

// flushChunk writes the pending samples of the current series to every column, and closes the row group when it
// is full.
func (w *MetricWriter) flushChunk() error {
	n := len(w.ts)
	if n == 0 {
		return nil
	}
	for col := range w.cols {
		if err := w.writeColumn(col, n); err != nil {
			return fmt.Errorf("write parquet column %d: %w", col, err)
		}
	}
	w.ts, w.vals = w.ts[:0], w.vals[:0]
	w.inGroup += int64(n)
	if w.inGroup >= w.maxRows {
		if err := w.pw.Flush(); err != nil {
			return fmt.Errorf("write parquet row group: %w", err)
		}
		w.inGroup = 0
	}
	return nil
}

// writeColumn encodes the values of leaf column col for the n pending samples into its reused buffer and writes
// them to the column's writer.
func (w *MetricWriter) writeColumn(col, n int) error {
	b := w.buf[col][:0]
	switch col {
	case colTimestamp:
		for _, ms := range w.ts {
			b = append(b, parquet.Int64Value(ms).Level(0, 0, colTimestamp))
		}
	case colValue:
		for _, v := range w.vals {
			b = append(b, parquet.DoubleValue(v).Level(0, 0, colValue))
		}
	case colMetricName:
		for range n {
			b = append(b, w.name)
		}
	case colLabelKey:
		for range n {
			b = append(b, w.keys...)
		}
	case colLabelValue:
		for range n {
			b = append(b, w.values...)
		}
	}
	w.buf[col] = b
	_, err := w.cols[col].WriteRowValues(b)
	return err
}

// Close writes the pending samples and the footer and returns the file's summary. It does not close the
// underlying writer.
func (w *MetricWriter) Close() (Summary, error) {
	if err := w.flushChunk(); err != nil {
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
