package columnar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// TestSeriesWriterRoundTrip writes series with SeriesWriter, reads both files back and checks the join, the
// summaries and the footers.
func TestSeriesWriterRoundTrip(t *testing.T) {
	var samples, series bytes.Buffer
	w, err := NewSeriesWriter(&samples, &series, Options{RowGroupRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	up := [][2]string{{"tenant", "t"}, {"job", "a"}}
	if err := w.Series("up", up); err != nil {
		t.Fatal(err)
	}
	if err := w.Samples([]int64{0, 1000, 2000, 3000}, []float64{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.Series("bare", nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Samples([]int64{5000}, []float64{0.5}); err != nil {
		t.Fatal(err)
	}
	// The same series again (VictoriaMetrics sends a series once per block): one series row.
	if err := w.Series("up", [][2]string{{"job", "a"}, {"tenant", "t"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Samples([]int64{4000}, []float64{4}); err != nil {
		t.Fatal(err)
	}
	sum, ser, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 6 || sum.Bytes != int64(samples.Len()) || ser.Rows != 2 || ser.Bytes != int64(series.Len()) ||
		!sum.MinTime.Equal(time.UnixMilli(0)) || !sum.MaxTime.Equal(time.UnixMilli(5000)) {
		t.Errorf("summaries = %+v, %+v", sum, ser)
	}
	rows, err := parquet.Read[SampleRow](bytes.NewReader(samples.Bytes()), int64(samples.Len()))
	if err != nil {
		t.Fatal(err)
	}
	srows, err := parquet.Read[SeriesRow](bytes.NewReader(series.Bytes()), int64(series.Len()))
	if err != nil {
		t.Fatal(err)
	}
	upID := SeriesID("up", up)
	bareID := SeriesID("bare", nil)
	want := []SeriesRow{{SeriesID: upID, MetricName: "up", Labels: map[string]string{"job": "a", "tenant": "t"}}, {SeriesID: bareID, MetricName: "bare", Labels: map[string]string{}}}
	if d := cmp.Diff(want, srows, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("series rows (-want +got):\n%s", d)
	}
	wantSamples := []SampleRow{{upID, 0, 0}, {upID, 1000, 1}, {upID, 2000, 2}, {upID, 3000, 3}, {bareID, 5000, 0.5}, {upID, 4000, 4}}
	if d := cmp.Diff(wantSamples, rows); d != "" {
		t.Errorf("sample rows (-want +got):\n%s", d)
	}
	for name, buf := range map[string]*bytes.Buffer{"samples": &samples, "series": &series} {
		f, err := ReadFooter(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if f.Layout != MetricsLayout || f.Table != name || f.Series != 2 || !f.MinTime.Equal(time.UnixMilli(0)) || !f.MaxTime.Equal(time.UnixMilli(5000)) {
			t.Errorf("%s footer = %+v", name, f)
		}
		ids, err := ReadSeriesIDs(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil || len(ids) != 2 || !ids[upID] || !ids[bareID] {
			t.Errorf("%s series ids = %v, %v; want %d and %d", name, ids, err, upID, bareID)
		}
	}
	if d := cmp.Diff([]string{"series_id", "timestamp", "value"}, Columns[SampleRow]()); d != "" {
		t.Errorf("samples columns (-want +got):\n%s", d)
	}
}

// TestSeriesRowsSurviveReuse writes more series than the series file's batches hold at once, with label counts that
// grow, shrink and vanish from one series to the next (so a reused row is longer or shorter than the one it held
// before), and reads every series row back as written.
func TestSeriesRowsSurviveReuse(t *testing.T) {
	var series bytes.Buffer
	w, err := NewSeriesWriter(nil, &series, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 5 * encoderBuffers * seriesBatch
	var want []SeriesRow
	for s := range n {
		labels := [][2]string{}
		for l := range (s * 7) % 16 { // 0 to 15 labels
			labels = append(labels, [2]string{fmt.Sprintf("l%02d", l), fmt.Sprintf("v%d-%d", s, l)})
		}
		name := fmt.Sprintf("m%d", s%3)
		if len(labels) == 0 {
			name = fmt.Sprintf("bare%d", s) // a distinct series
		}
		if err := w.Series(name, labels); err != nil {
			t.Fatal(err)
		}
		id := SeriesID(name, labels)
		m := map[string]string{}
		for _, l := range labels {
			m[l[0]] = l[1]
		}
		want = append(want, SeriesRow{SeriesID: id, MetricName: name, Labels: m})
	}
	if _, _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.Read[SeriesRow](bytes.NewReader(series.Bytes()), int64(series.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("series rows (-want +got):\n%s", d)
	}
}

// TestSeriesIDIgnoresLabelOrder checks that the id depends on the label set, not its order, and that values
// cannot run into names.
func TestSeriesIDIgnoresLabelOrder(t *testing.T) {
	a := SeriesID("m", [][2]string{{"a", "1"}, {"b", "2"}})
	b := SeriesID("m", [][2]string{{"b", "2"}, {"a", "1"}})
	c := SeriesID("m", [][2]string{{"a", "1b"}, {"", "2"}})
	if a != b || a == c {
		t.Errorf("ids %d %d %d; want the first two equal and the third different", a, b, c)
	}
}

// TestSeriesIDIsFNV checks SeriesID against hash/fnv's FNV-1a over the documented encoding (name, then the labels
// sorted by name, each string uvarint-length-prefixed), for sorted and unsorted labels and strings longer than one
// length byte: ids of files already written must not change. The check hash of seriesKey must come with the same id
// and tell the series apart.
func TestSeriesIDIsFNV(t *testing.T) {
	long := strings.Repeat("v", 300)
	var check maphash.Hash
	checks := map[uint64]int{}
	cases := []struct {
		name   string
		labels [][2]string
	}{
		{"up", nil},
		{"up", [][2]string{{"job", "a"}, {"tenant", "t"}}},
		{"up", [][2]string{{"tenant", "t"}, {"job", "a"}, {"", ""}}},
		{long, [][2]string{{"pod", long}, {"ns", "é"}}},
		{"up", [][2]string{{"job", "a"}, {"tenant", "t"}, {"", ""}}}, // case 2 sorted: the same series
	}
	for i, tc := range cases {
		sorted := slices.Clone(tc.labels)
		slices.SortFunc(sorted, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
		a := fnv.New64a()
		put := func(s string) {
			a.Write(binary.AppendUvarint(nil, uint64(len(s))))
			a.Write([]byte(s))
		}
		put(tc.name)
		for _, l := range sorted {
			put(l[0])
			put(l[1])
		}
		before := slices.Clone(tc.labels)
		if id := SeriesID(tc.name, tc.labels); id != int64(a.Sum64()) { //nolint:gosec // the id is the hash's bits
			t.Errorf("SeriesID(%.10s, %v) = %d; want %d", tc.name, tc.labels, id, int64(a.Sum64())) //nolint:gosec
		}
		id, sum := seriesKey(&check, tc.name, tc.labels)
		if id != SeriesID(tc.name, tc.labels) {
			t.Errorf("seriesKey(%.10s, %v) gives id %d; want SeriesID's %d", tc.name, tc.labels, id, SeriesID(tc.name, tc.labels))
		}
		if !slices.Equal(before, tc.labels) {
			t.Errorf("SeriesID changed its labels: %v, was %v", tc.labels, before)
		}
		if j, dup := checks[sum]; dup && !(i == 4 && j == 2) {
			t.Errorf("cases %d and %d have the same check hash %d", j, i, sum)
		}
		checks[sum] = i
	}
	if len(checks) != len(cases)-1 {
		t.Errorf("%d distinct check hashes for %d cases, two of them one series; want %d", len(checks), len(cases), len(cases)-1)
	}
}

// TestSeriesWriterCatchesIDCollision checks the SeriesWriter's answer to a series whose id another series of the file
// has: an error naming the id, with no row written for it; a series given twice is written once.
func TestSeriesWriterCatchesIDCollision(t *testing.T) {
	var samples, series bytes.Buffer
	w, err := NewSeriesWriter(&samples, &series, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := [][2]string{{"job", "a"}}
	for range 2 {
		if err := w.Series("up", a); err != nil {
			t.Fatalf("the same series twice: %v", err)
		}
	}
	// Another series had the id of "up" b, with a check hash of its own (1: no series' check hash, but by a chance of
	// 2^-64).
	b := [][2]string{{"job", "b"}}
	idB := SeriesID("up", b)
	w.seen[idB] = 1
	err = w.Series("up", b)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("series_id %d is already the id of another series", idB)) {
		t.Fatalf("Series of a colliding id: %v; want the collision named", err)
	}
	w.Abort()
	if got := w.SeriesCount(); got != 1 {
		t.Errorf("SeriesCount = %d, want 1 (the series given twice counted once, the colliding one not at all)", got)
	}
}

// TestSeriesRowsAsMapWriterWritesThem checks that the series file written from rows built by seriesRow is byte for
// byte the file parquet-go writes from SeriesRow values with the labels as a Go map (entries ordered by name, the
// last of a name given twice kept, an empty map, empty values), over several row groups.
func TestSeriesRowsAsMapWriterWritesThem(t *testing.T) {
	type series struct {
		name   string
		labels [][2]string
	}
	in := []series{{"up", [][2]string{{"job", "a"}, {"tenant", ""}}}, {"bare", nil}, {"x", [][2]string{{"z", "1"}, {"a", "2"}, {"z", "3"}}}}
	for s := range 3000 {
		in = append(in, series{"container_cpu_usage_seconds_total", benchLabels(s)})
	}
	var fromMaps, fromRows bytes.Buffer
	mw := parquet.NewGenericWriter[SeriesRow](&fromMaps, parquet.MaxRowsPerRowGroup(1000))
	rw := rowWriter[SeriesRow]{parquet.NewGenericWriter[SeriesRow](&fromRows, parquet.MaxRowsPerRowGroup(1000))}
	for _, s := range in {
		id := SeriesID(s.name, s.labels)
		m := map[string]string{}
		for _, l := range s.labels {
			m[l[0]] = l[1]
		}
		if _, err := mw.Write([]SeriesRow{{SeriesID: id, MetricName: s.name, Labels: m}}); err != nil {
			t.Fatal(err)
		}
		if _, err := rw.Write([]parquet.Row{appendSeriesRow(nil, id, s.name, s.labels)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(mw.Close(), rw.Close()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromMaps.Bytes(), fromRows.Bytes()) {
		t.Errorf("series file from rows (%d bytes) differs from the one from maps (%d bytes)", fromRows.Len(), fromMaps.Len())
	}
}

// TestReadFooterRejectsForeignFiles checks that a Parquet file without this package's metadata, or with a row
// count other than its metadata's, is refused with the reason.
func TestReadFooterRejectsForeignFiles(t *testing.T) {
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []SampleRow{{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFooter(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil || !strings.Contains(err.Error(), MetaLayout) {
		t.Errorf("foreign file: %v; want an error naming %s", err, MetaLayout)
	}
	buf.Reset()
	pw := parquet.NewGenericWriter[SampleRow](&buf)
	if _, err := pw.Write([]SampleRow{{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	setMeta(pw, "samples", Summary{Rows: 2}, 1)
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFooter(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err == nil || !strings.Contains(err.Error(), "hold 1 rows") {
		t.Errorf("wrong row count: %v; want an error naming the rows", err)
	}
	if _, err := ReadFooter(bytes.NewReader([]byte("PAR1 truncated")), 14); err == nil {
		t.Error("truncated file: no error")
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

// SortLabels orders by name in place and keeps labels of one name in their order; the sorted slice has the series
// id of the unsorted one, and a sorted slice is left as it is.
func TestSortLabels(t *testing.T) {
	in := [][2]string{{"pod", "a"}, {"cluster", "c1"}, {"job", "x"}, {"cluster", "c2"}, {"app", "z"}}
	got := slices.Clone(in)
	SortLabels(got)
	want := [][2]string{{"app", "z"}, {"cluster", "c1"}, {"cluster", "c2"}, {"job", "x"}, {"pod", "a"}}
	if !slices.Equal(got, want) {
		t.Errorf("SortLabels(%v) = %v, want %v", in, got, want)
	}
	var h maphash.Hash
	idIn, checkIn := seriesKey(&h, "m", in)
	idGot, checkGot := seriesKey(&h, "m", got)
	if idIn != idGot || checkIn != checkGot {
		t.Errorf("seriesKey of the sorted labels %d/%d, of the unsorted %d/%d; want equal", idGot, checkGot, idIn, checkIn)
	}
	again := slices.Clone(want)
	SortLabels(again)
	if !slices.Equal(again, want) {
		t.Errorf("SortLabels changed sorted labels: %v", again)
	}
}

// TestSortLabelsIsStableSort compares SortLabels with slices.SortStableFunc on random label lists of every length up
// to past insertionSortMax, with repeated names (whose order must be kept).
func TestSortLabelsIsStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20_000 {
		labels := make([][2]string, r.IntN(insertionSortMax+8))
		for i := range labels {
			labels[i] = [2]string{fmt.Sprintf("n%d", r.IntN(12)), fmt.Sprint(i)}
		}
		want := slices.Clone(labels)
		slices.SortStableFunc(want, byName)
		got := slices.Clone(labels)
		SortLabels(got)
		if !slices.Equal(got, want) {
			t.Fatalf("SortLabels(%v) = %v, want %v", labels, got, want)
		}
	}
}

// TestSamplesFileEncodings checks the encodings of the samples file: series_id by dictionary (the distinct ids of a
// row group once, then runs of indexes; delta encoding paid a 64-bit jump at every series change, over half the
// file), timestamp by delta and value by byte stream split, and that an hour of the benchmarks' shape stays under
// 0.25 bytes per sample (0.21; 0.49 with series_id delta-encoded).
func TestSamplesFileEncodings(t *testing.T) {
	var samples bytes.Buffer
	w, err := NewSeriesWriter(&samples, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const series, per = 2000, 120
	ts, vals := make([]int64, per), make([]float64, per)
	for s := 0; s < series; s++ {
		if err := w.Series("container_cpu_usage_seconds_total", benchLabels(s)); err != nil {
			t.Fatal(err)
		}
		for j := range ts {
			ts[j], vals[j] = 1_750_000_000_000+int64(j)*30_000, float64(s*per+j)*0.25
		}
		if err := w.Samples(ts, vals); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(samples.Bytes()), int64(samples.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]format.Encoding{"series_id": format.RLEDictionary, "timestamp": format.DeltaBinaryPacked, "value": format.ByteStreamSplit}
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			col := strings.Join(c.MetaData.PathInSchema, ".")
			if !slices.Contains(c.MetaData.Encoding, want[col]) {
				t.Errorf("column %s encoded %v, want %v among them", col, c.MetaData.Encoding, want[col])
			}
		}
	}
	if perSample := float64(samples.Len()) / (series * per); perSample > 0.25 {
		t.Errorf("samples file: %.3f bytes per sample, want at most 0.25", perSample)
	}
}
