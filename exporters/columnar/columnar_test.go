package columnar

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
)

// TestMetricColumns checks the leaf column indexes MetricWriter relies on.
func TestMetricColumns(t *testing.T) {
	s := parquet.SchemaOf(MetricRow{})
	want := map[int][]string{
		colTimestamp: {"timestamp"}, colMetricName: {"metric_name"}, colValue: {"value"},
		colLabelKey: {"labels", "key_value", "key"}, colLabelValue: {"labels", "key_value", "value"},
	}
	for idx, path := range want {
		leaf, ok := s.Lookup(path...)
		if !ok || leaf.ColumnIndex != idx {
			t.Errorf("column %v: index %d (found %v), want %d", path, leaf.ColumnIndex, ok, idx)
		}
	}
}

// TestMetricWriterRoundTrip writes series with MetricWriter, reads the rows back as MetricRow values and checks
// them and the summary.
func TestMetricWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewMetricWriter(&buf, Options{RowGroupRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Series("up", [][2]string{{"job", "a"}, {"tenant", "t"}}); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4; i++ {
		if err := w.Sample(1000*i, float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Series("bare", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Sample(5000, 0.5); err != nil {
		t.Fatal(err)
	}
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 5 || sum.Bytes != int64(buf.Len()) || !sum.MinTime.Equal(time.UnixMilli(0)) || !sum.MaxTime.Equal(time.UnixMilli(5000)) {
		t.Errorf("summary = %+v", sum)
	}
	rows, err := parquet.Read[MetricRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("read %d rows, want 5", len(rows))
	}
	want := MetricRow{Timestamp: time.UnixMilli(3000).UTC(), MetricName: "up", Value: 3, Labels: map[string]string{"job": "a", "tenant": "t"}}
	got := rows[3]
	got.Timestamp = got.Timestamp.UTC()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("row 3 (-want +got):\n%s", d)
	}
	if rows[4].MetricName != "bare" || len(rows[4].Labels) != 0 {
		t.Errorf("row 4 = %+v, want bare with no labels", rows[4])
	}
}

// TestWriterSummary checks the generic writer's summary against the bytes written.
func TestWriterSummary(t *testing.T) {
	var buf bytes.Buffer
	w, err := New[LogRow](&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2026-06-29T17:00:00.5Z", "2026-06-29T16:59:59Z"} {
		ts, _ := time.Parse(time.RFC3339Nano, s)
		if err := w.Write(LogRow{Timestamp: ts, Body: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := w.Close()
	if err != nil || sum.Rows != 2 || sum.Bytes != int64(buf.Len()) || sum.MinTime.Format(time.RFC3339) != "2026-06-29T16:59:59Z" {
		t.Errorf("summary = %+v, %v", sum, err)
	}
}

// TestMetricWriterRowGroups checks that row groups hold at most RowGroupRows rows when a series spans several
// chunks and row groups, and that every sample comes back in order.
func TestMetricWriterRowGroups(t *testing.T) {
	var buf bytes.Buffer
	const n, group = 3*chunkRows + 7, 1000
	w, err := NewMetricWriter(&buf, Options{RowGroupRows: group})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Series("up", [][2]string{{"job", "a"}}); err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < n; i++ {
		if err := w.Sample(i, float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, rg := range f.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	if d := cmp.Diff([]int64{1000, 1000, 1000, 79}, sizes); d != "" {
		t.Errorf("row group sizes (-want +got):\n%s", d)
	}
	rows, err := parquet.Read[MetricRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if r.Timestamp.UnixMilli() != int64(i) || r.Value != float64(i) || r.Labels["job"] != "a" {
			t.Fatalf("row %d = %+v", i, r)
		}
	}
}

// TestZstdCodecRoundTrip checks that the codec's frames decode to the input, with parquet-go's own ZSTD codec (the
// one readers of the file use) and with its own decoder, and that corrupt input is an error.
func TestZstdCodecRoundTrip(t *testing.T) {
	c, err := newZstdCodec(1)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.Repeat([]byte("container_cpu_usage_seconds_total pod-17 "), 20000) // larger than the window
	enc, err := c.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) >= len(src)/10 {
		t.Errorf("compressed %d bytes to %d; want a tenth or less", len(src), len(enc))
	}
	for name, dec := range map[string]func(dst, src []byte) ([]byte, error){"parquet.Zstd": parquet.Zstd.Decode, "zstdCodec": c.Decode} {
		got, err := dec(nil, enc)
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: decoded %d bytes (err %v), want the %d input bytes", name, len(got), err, len(src))
		}
	}
	if _, err := c.Decode(nil, []byte("not zstd")); err == nil {
		t.Error("decoding corrupt input gave no error")
	}
}
