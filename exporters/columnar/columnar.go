// Package columnar writes the Parquet files of the cold-storage exporter (parquet-go): metrics as a samples file
// (series_id, timestamp, value) and a series file (series_id, metric_name, labels) per folder, so each series'
// labels are paid once (SeriesWriter, layout MetricsLayout); one row per log record or span (Writer). Typed columns
// (timestamps as TIMESTAMP, values as DOUBLE), labels and attributes as MAP<STRING,STRING>, ZSTD compression and
// row groups bounded in rows, so memory stays flat however large the hour. Each file is streamed to an io.Writer
// (the S3 upload) while its size, sha256 and time range are measured, and its footer records its layout, table, rows
// and time range (ReadFooter) so that a rerun can check a file it finds.
//
// Source: docs/cold-storage.md ("Schema"); https://parquet.apache.org/docs/file-format/.
package columnar

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
)

// DefaultRowGroupRows bounds a row group (parquet-go buffers one row group in memory before it is flushed).
const DefaultRowGroupRows = 128 * 1024

// batch is how many rows are handed to parquet-go at once.
const batch = 1024

// Row is a row type of this package; At returns the row's timestamp.
type Row interface {
	LogRow | SpanRow
	At() time.Time
}

// Summary describes a written file: what the `_SUCCESS` marker records.
type Summary struct {
	// Rows is the number of rows.
	Rows int64 `json:"rows"`
	// Bytes is the file size.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex sha256 of the file.
	SHA256 string `json:"sha256"`
	// MinTime and MaxTime are the smallest and largest row timestamps (zero when Rows is 0).
	MinTime time.Time `json:"min_time"`
	MaxTime time.Time `json:"max_time"`
}

// Writer streams rows of type T as one Parquet file into an io.Writer.
type Writer[T Row] struct {
	pw      *parquet.GenericWriter[T]
	out     *measure
	buf     []T
	sum     Summary
	started bool
}

// Options tune a Writer.
type Options struct {
	// RowGroupRows bounds the rows of one row group; 0 = DefaultRowGroupRows.
	RowGroupRows int64
	// CreatedBy is written into the file footer (producer and version).
	CreatedBy string
}

// New returns a Writer of T writing to w. Errors are errors of the compression codec's setup.
func New[T Row](w io.Writer, opts Options) (*Writer[T], error) {
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
	}
	if opts.CreatedBy != "" {
		wopts = append(wopts, parquet.CreatedBy(opts.CreatedBy, "", ""))
	}
	return &Writer[T]{pw: parquet.NewGenericWriter[T](m, wopts...), out: m, buf: make([]T, 0, batch)}, nil
}

// Write adds one row. Errors are write errors of the underlying writer.
func (w *Writer[T]) Write(r T) error {
	t := r.At()
	if !w.started || t.Before(w.sum.MinTime) {
		w.sum.MinTime = t
	}
	if !w.started || t.After(w.sum.MaxTime) {
		w.sum.MaxTime = t
	}
	w.started = true
	w.sum.Rows++
	w.buf = append(w.buf, r)
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *Writer[T]) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.pw.Write(w.buf); err != nil {
		return fmt.Errorf("write parquet rows: %w", err)
	}
	clear(w.buf)
	w.buf = w.buf[:0]
	return nil
}

// Rows returns the rows written so far.
func (w *Writer[T]) Rows() int64 { return w.sum.Rows }

// Close writes the footer and returns the file's summary. It does not close the underlying writer.
func (w *Writer[T]) Close() (Summary, error) {
	if err := w.flush(); err != nil {
		return Summary{}, err
	}
	w.sum.MinTime, w.sum.MaxTime = w.sum.MinTime.UTC(), w.sum.MaxTime.UTC()
	setMeta(w.pw, tableOf[T](), w.sum, -1)
	if err := w.pw.Close(); err != nil {
		return Summary{}, fmt.Errorf("close parquet file: %w", err)
	}
	w.sum.Bytes = w.out.n
	w.sum.SHA256 = hex.EncodeToString(w.out.h.Sum(nil))
	w.sum.MinTime, w.sum.MaxTime = w.sum.MinTime.UTC(), w.sum.MaxTime.UTC()
	return w.sum, nil
}

// tableOf returns the table name of row type T, written into the footer (MetaTable).
func tableOf[T Row]() string {
	var zero T
	switch any(zero).(type) {
	case LogRow:
		return "logs"
	case SpanRow:
		return "spans"
	}
	return "unknown"
}

// measure counts and hashes what passes to w.
type measure struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (m *measure) Write(p []byte) (int, error) {
	n, err := m.w.Write(p)
	m.h.Write(p[:n])
	m.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return n, errors.Join(errors.New("write parquet file"), err)
	}
	return n, nil
}
