package coldstorage_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// table is a Parquet file read back with Apache Arrow's Go Parquet reader (not the writer's library), so the files
// are checked the way the query engines' readers see them.
type table struct {
	t   testing.TB
	tbl arrow.Table
}

func readParquet(t testing.TB, data []byte) *table {
	t.Helper()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), parquet.NewReaderProperties(memory.DefaultAllocator),
		pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("read parquet with arrow: %v", err)
	}
	t.Cleanup(tbl.Release)
	return &table{t: t, tbl: tbl}
}

// rows returns the number of rows.
func (tb *table) rows() int { return int(tb.tbl.NumRows()) }

// column returns the chunks of column name, failing when it is missing.
func (tb *table) column(name string) (arrow.DataType, []arrow.Array) {
	tb.t.Helper()
	idx := tb.tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		tb.t.Fatalf("column %q: not in schema %s", name, tb.tbl.Schema())
	}
	col := tb.tbl.Column(idx[0])
	return col.DataType(), col.Data().Chunks()
}

// typeOf returns the Arrow type of column name.
func (tb *table) typeOf(name string) arrow.DataType {
	dt, _ := tb.column(name)
	return dt
}

// times returns a TIMESTAMP column as times.
func (tb *table) times(name string) []time.Time {
	tb.t.Helper()
	dt, chunks := tb.column(name)
	ts, ok := dt.(*arrow.TimestampType)
	if !ok {
		tb.t.Fatalf("column %s is %s, want a timestamp", name, dt)
	}
	toTime, err := ts.GetToTimeFunc()
	if err != nil {
		tb.t.Fatal(err)
	}
	var out []time.Time
	for _, c := range chunks {
		a := c.(*array.Timestamp)
		for i := 0; i < a.Len(); i++ {
			out = append(out, toTime(a.Value(i)).UTC())
		}
	}
	return out
}

// strs returns a string column.
func (tb *table) strs(name string) []string {
	tb.t.Helper()
	_, chunks := tb.column(name)
	var out []string
	for _, c := range chunks {
		switch a := c.(type) {
		case *array.String:
			for i := 0; i < a.Len(); i++ {
				out = append(out, a.Value(i))
			}
		case *array.Dictionary:
			d := a.Dictionary().(*array.String)
			for i := 0; i < a.Len(); i++ {
				out = append(out, d.Value(a.GetValueIndex(i)))
			}
		default:
			tb.t.Fatalf("column %s: %T is not a string column", name, c)
		}
	}
	return out
}

// floats returns a DOUBLE column.
func (tb *table) floats(name string) []float64 {
	tb.t.Helper()
	_, chunks := tb.column(name)
	var out []float64
	for _, c := range chunks {
		a, ok := c.(*array.Float64)
		if !ok {
			tb.t.Fatalf("column %s: %T is not DOUBLE", name, c)
		}
		out = append(out, a.Float64Values()...)
	}
	return out
}

// maps returns a MAP<STRING,STRING> column.
func (tb *table) maps(name string) []map[string]string {
	tb.t.Helper()
	dt, chunks := tb.column(name)
	mt, ok := dt.(*arrow.MapType)
	if !ok || mt.KeyType().ID() != arrow.STRING || mt.ItemType().ID() != arrow.STRING {
		tb.t.Fatalf("column %s is %s, want map<string, string>", name, dt)
	}
	var out []map[string]string
	for _, c := range chunks {
		a := c.(*array.Map)
		keys, items := a.Keys().(*array.String), a.Items().(*array.String)
		for i := 0; i < a.Len(); i++ {
			start, end := a.ValueOffsets(i)
			m := map[string]string{}
			for j := start; j < end; j++ {
				m[keys.Value(int(j))] = items.Value(int(j))
			}
			out = append(out, m)
		}
	}
	return out
}

// ints returns an INT64 column.
func (tb *table) ints(name string) []int64 {
	tb.t.Helper()
	_, chunks := tb.column(name)
	var out []int64
	for _, c := range chunks {
		a, ok := c.(*array.Int64)
		if !ok {
			tb.t.Fatalf("column %s: %T is not INT64", name, c)
		}
		out = append(out, a.Int64Values()...)
	}
	return out
}
