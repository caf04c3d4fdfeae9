package columnar

import (
	"fmt"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// The batches a SeriesWriter hands to the goroutine encoding a file: sampleBatch rows of a samples file (24 bytes
// each) or seriesBatch rows of a series file (each with its labels map), encoderBuffers batches per file (one being
// filled, one being encoded, one queued). A samples batch is 48 KiB, and a file's pending samples 144 KiB: on one
// core (the exporter's default) the encoder runs when the reader has filled the batches, and still finds their rows
// in the cache (BenchmarkSeriesWriter on one core: 46.6-52.3 CPU ns per sample with batches of 2K rows, 47.3-55.1
// with 8K).
const (
	sampleBatch    = 2 << 10
	seriesBatch    = 256
	encoderBuffers = 3
)

// fileWriter is a Parquet file written from rows of type T: parquet-go's GenericWriter, or rowWriter.
type fileWriter[T any] interface {
	Write(rows []T) (int, error)
	SetKeyValueMetadata(key, value string)
	Close() error
}

// rowWriter writes rows given as parquet.Row values (columns and levels already set, as Schema.Deconstruct would set
// them) into a file of T's schema.
type rowWriter[T any] struct{ *parquet.GenericWriter[T] }

// Write writes rows; errors are parquet-go's.
func (w rowWriter[T]) Write(rows []parquet.Row) (int, error) { return w.WriteRows(rows) }

// encoder writes the rows of one Parquet file in its own goroutine (page encoding and ZSTD), so that the samples
// file, the series file and the caller each use a core. Rows are added in batches that are handed over and reused.
// Its methods are called from one goroutine; pw is the goroutine's until stop returns.
type encoder[T any] struct {
	pw   fileWriter[T]
	what string
	// keep: the rows of a written batch are left in place (not cleared), so that the next rows can reuse their
	// arrays (parquet.Row batches of a series file: one allocation per row otherwise, about 5% of an export's CPU).
	// The written rows then keep the label bytes they refer to alive until overwritten: at most encoderBuffers
	// batches of them.
	keep bool
	cur  []T
	free chan []T
	full chan []T
	done chan struct{}

	mu  sync.Mutex
	err error
}

// newEncoder returns an encoder of rows of what ("sample" or "series") into pw, handing over batches of rows rows,
// and starts its goroutine (stop ends it).
func newEncoder[T any](pw fileWriter[T], what string, rows int) *encoder[T] {
	e := &encoder[T]{pw: pw, what: what, cur: make([]T, 0, rows),
		free: make(chan []T, encoderBuffers), full: make(chan []T, encoderBuffers), done: make(chan struct{})}
	for range encoderBuffers - 1 {
		e.free <- make([]T, 0, rows)
	}
	go e.run()
	return e
}

func (e *encoder[T]) run() {
	defer close(e.done)
	for rows := range e.full {
		if e.failed() == nil {
			if _, err := e.pw.Write(rows); err != nil {
				e.mu.Lock()
				e.err = fmt.Errorf("write %s rows: %w", e.what, err)
				e.mu.Unlock()
			}
		}
		if !e.keep {
			clear(rows)
		}
		e.free <- rows[:0]
	}
}

// failed returns the first write error of the goroutine, nil while there is none.
func (e *encoder[T]) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// reusable returns the row the next add will take the place of in the current batch: with keep, a row of a batch
// written before, whose memory the caller may reuse; else the zero T.
func (e *encoder[T]) reusable() T {
	var zero T
	if n := len(e.cur); e.keep && n < cap(e.cur) {
		return e.cur[: n+1 : n+1][n]
	}
	return zero
}

// add adds one row; a full batch is handed to the goroutine. It returns the goroutine's first write error.
func (e *encoder[T]) add(r T) error {
	e.cur = append(e.cur, r)
	if len(e.cur) < cap(e.cur) {
		return nil
	}
	return e.handOver()
}

// handOver hands the current batch, full, to the goroutine and takes a free one. It returns the goroutine's first
// write error (and then keeps the batch).
func (e *encoder[T]) handOver() error {
	if err := e.failed(); err != nil {
		return err
	}
	e.full <- e.cur
	e.cur = <-e.free
	return nil
}

// stop hands the pending rows to the goroutine (unless it failed), waits until it has written them and ends it. It
// returns the goroutine's first write error. A nil encoder (a skipped file) and a stopped one return nil.
func (e *encoder[T]) stop() error {
	if e == nil || e.full == nil {
		return nil
	}
	if len(e.cur) > 0 && e.failed() == nil {
		e.full <- e.cur
		e.cur = nil
	}
	close(e.full)
	<-e.done
	e.full = nil
	return e.failed()
}
