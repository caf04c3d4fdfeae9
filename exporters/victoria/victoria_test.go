package victoria

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/valyala/fastjson"
	"github.com/valyala/fastjson/fastfloat"
)

func TestLinesLongAndLast(t *testing.T) {
	long := strings.Repeat("x", 3<<20) // longer than the reader's buffer
	in := "a\n\n" + long + "\nlast-without-newline"
	var got []string
	if err := Lines(strings.NewReader(in), func(l []byte) error { got = append(got, string(l)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "a" || got[1] != long || got[2] != "last-without-newline" {
		t.Errorf("lines = %d (%q...), want a, the long line and the last line", len(got), got[0])
	}
}

// TestLinesCutMidLine checks that a stream cut mid-line (a server or connection dying mid-body) ends with the read
// error, and that the half line is not handed on (it would be reported as a JSON error).
func TestLinesCutMidLine(t *testing.T) {
	r := io.MultiReader(strings.NewReader("{\"a\":1}\n{\"a\":"), iotest.ErrReader(io.ErrUnexpectedEOF))
	var got []string
	err := Lines(r, func(l []byte) error { got = append(got, string(l)); return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 1 || got[0] != `{"a":1}` {
		t.Errorf("Lines = %v, lines %q; want io.ErrUnexpectedEOF after the one whole line", err, got)
	}
}

func TestDecodeSeries(t *testing.T) {
	var p fastjson.Parser
	s := &Series{}
	line := `{"metric":{"__name__":"up","job":"a"},"values":[1,"NaN",null,2.5],"timestamps":[1000,2000,3000,4000]}`
	if err := decodeSeries(&p, []byte(line), s); err != nil {
		t.Fatal(err)
	}
	if len(s.Labels) != 2 || s.Labels[0] != (Label{"__name__", "up"}) || s.Values[0] != 1 || !math.IsNaN(s.Values[1]) ||
		!math.IsNaN(s.Values[2]) || s.Values[3] != 2.5 || s.Timestamps[3] != 4000 {
		t.Errorf("series = %+v", s)
	}
	// A line without "metric" once dereferenced a nil value: every malformed line must be an error, never a panic.
	for _, bad := range []string{`{"metric":{},"values":[1],"timestamps":[]}`, `{"values":[1],"timestamps":[1]}`, `not json`, `[1]`, `{"metric":{}}`} {
		if err := decodeSeries(&p, []byte(bad), s); err == nil {
			t.Errorf("decodeSeries(%s): want an error", bad)
		}
	}
}

func TestHTTPErrorNamesURLAndStatus(t *testing.T) {
	err := &HTTPError{Method: "GET", URL: "http://vmselect:8481/api/v1/export", Status: 503, Body: "unavailable\n"}
	if got := err.Error(); got != "GET http://vmselect:8481/api/v1/export: HTTP 503: unavailable" {
		t.Errorf("Error() = %q", got)
	}
	if got := Exact("k8s.cluster.name", `a"b`); got != `"k8s.cluster.name":="a\"b"` {
		t.Errorf("Exact = %s", got)
	}
}

// FuzzDecodeSeries checks that no export line makes the decoder panic.
func FuzzDecodeSeries(f *testing.F) {
	for _, s := range []string{`{"metric":{"a":"b"},"values":[1],"timestamps":[1]}`, `{"metric":1}`, `{}`, `[]`, `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var p fastjson.Parser
		_ = decodeSeries(&p, []byte(line), &Series{})
	})
}

// TestDecodeExactMatchesFastjson decodes lines of the exact export form in place and in full with fastjson, and checks
// that lines of any other form are left to fastjson.
func TestDecodeExactMatchesFastjson(t *testing.T) {
	exact := []string{
		`{"metric":{"__name__":"up","job":"a"},"values":[1,0.25,-3e-5,12345678901234567890],"timestamps":[1,2,3,4]}`,
		`{"metric":{"__name__":"x","q":"a \"}\" b\\","n":"{}"},"values":[],"timestamps":[]}`,
		`{"metric":{},"values":[1.5],"timestamps":[-1000]}`,
	}
	other := []string{
		`{"metric":{"__name__":"up"},"values":[1,"NaN",null],"timestamps":[1,2,3]}`,
		`{"metric":{"__name__":"up"}, "values":[1],"timestamps":[1]}`,
		`{"values":[1],"timestamps":[1],"metric":{"__name__":"up"}}`,
		`{"metric":{"__name__":"up"},"values":[1,2],"timestamps":[1]}`,
		`{"metric":{"__name__":"up"},"values":[1],"timestamps":[1.5]}`,
		`{"metric":{"__name__":"up"},"values":[1],"timestamps":[1]} `,
		`{"metric":{"__name__":"up"`,
		`{"metric":{"__name__":"up"},"values":[1,],"timestamps":[1]}`,
	}
	var p fastjson.Parser
	for _, line := range exact {
		var fast, full Series
		if !decodeExact(&p, []byte(line), &fast) {
			t.Fatalf("%s: not decoded in place", line)
		}
		if err := decodeSeries(&p, []byte(line), &full); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var want Series
		v, err := p.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		v.GetObject("metric").Visit(func(k []byte, lv *fastjson.Value) {
			want.Labels = append(want.Labels, Label{Name: string(k), Value: string(lv.GetStringBytes())})
		})
		for _, x := range v.GetArray("values") {
			want.Values = append(want.Values, x.GetFloat64())
		}
		for _, x := range v.GetArray("timestamps") {
			want.Timestamps = append(want.Timestamps, x.GetInt64())
		}
		for _, got := range []Series{fast, full} {
			if fmt.Sprint(got.Labels) != fmt.Sprint(want.Labels) || fmt.Sprint(got.Values) != fmt.Sprint(want.Values) ||
				fmt.Sprint(got.Timestamps) != fmt.Sprint(want.Timestamps) {
				t.Errorf("%s: decoded %+v, want %+v", line, got, want)
			}
		}
	}
	for _, line := range other {
		var s Series
		if decodeExact(&p, []byte(line), &s) {
			t.Errorf("%s: decoded in place, want it left to fastjson", line)
		}
	}
}

// FuzzDecodeExact checks the in-place decoder against fastjson on any line: a line it decodes must be one fastjson
// parses to the same labels (names, values, order), values and timestamps. It decodes a sequence into one Series, as
// Export does, so the names remembered from the line before are exercised.
func FuzzDecodeExact(f *testing.F) {
	for _, s := range []string{
		`{"metric":{"__name__":"up","job":"a"},"values":[1,0.25],"timestamps":[1,2]}`,
		`{"metric":{"__name__":"up","job":"a\"b","k":""},"values":[1],"timestamps":[1]}`,
		`{"metric":{"a":"1","a":"2"},"values":[],"timestamps":[]}`,
		`{"metric":{"":"x","é":"ü}{,:"},"values":[3],"timestamps":[3]}`,
		`{"metric":{"job":1},"values":[1],"timestamps":[1]}`,
		`{"metric":{ "job":"a"},"values":[1],"timestamps":[1]}`,
		`{"metric":{"job":"a",},"values":[1],"timestamps":[1]}`,
		`{"metric":{"job":"a"}},"values":[1],"timestamps":[1]}`,
	} {
		f.Add(s, `{"metric":{"__name__":"up","job":"b"},"values":[2],"timestamps":[2]}`)
	}
	f.Fuzz(func(t *testing.T, first, second string) {
		var p, q fastjson.Parser
		var s Series
		for _, line := range []string{first, second, first} {
			if !decodeExact(&p, []byte(line), &s) {
				continue
			}
			v, err := q.Parse(line)
			if err != nil {
				t.Fatalf("%q: decoded in place, but fastjson: %v", line, err)
			}
			var want []Label
			metric, err := v.Get("metric").Object()
			if err != nil {
				t.Fatalf("%q: decoded in place, but the metric is not an object: %v", line, err)
			}
			metric.Visit(func(k []byte, lv *fastjson.Value) {
				want = append(want, Label{Name: string(k), Value: string(lv.GetStringBytes())})
			})
			if fmt.Sprintf("%q", s.Labels) != fmt.Sprintf("%q", want) {
				t.Fatalf("%q: labels %q, fastjson %q", line, s.Labels, want)
			}
			var wantV []float64
			for _, x := range v.GetArray("values") {
				wantV = append(wantV, x.GetFloat64())
			}
			if fmt.Sprint(s.Values) != fmt.Sprint(wantV) {
				t.Fatalf("%q: values %v, fastjson %v", line, s.Values, wantV)
			}
		}
	})
}

// TestDecodeReusesTimestampsOfTheLastLine decodes a sequence of lines into one Series, as Export does, where
// neighbouring lines share their timestamps text (taken from the last line, not parsed again), differ in it, or carry
// the same text with another number of values or a trailing byte (both left to fastjson); every line must decode to
// what fastjson reads.
func TestDecodeReusesTimestampsOfTheLastLine(t *testing.T) {
	lines := []string{
		`{"metric":{"__name__":"a"},"values":[1,2,3],"timestamps":[1750000000000,1750000030000,1750000060000]}`,
		`{"metric":{"__name__":"b"},"values":[4,5,6],"timestamps":[1750000000000,1750000030000,1750000060000]}`,
		`{"metric":{"__name__":"c"},"values":[7,8],"timestamps":[1750000000000,1750000030000,1750000060000]}`,
		`{"metric":{"__name__":"d"},"values":[7,8,9],"timestamps":[1750000000000,1750000030000,1750000060000]} `,
		`{"metric":{"__name__":"e"},"values":[1,2,3],"timestamps":[1750000000000,1750000030000,1750000060001]}`,
		`{"metric":{"__name__":"f"},"values":[1,2,3],"timestamps":[1750000000000,1750000030000,1750000060001]}`,
		`{"metric":{"__name__":"g"},"values":[],"timestamps":[]}`,
		`{"metric":{"__name__":"h"},"values":[1,2,3],"timestamps":[1750000000000,1750000030000,1750000060001]}`,
	}
	var p, q fastjson.Parser
	var s Series
	for _, line := range lines {
		err := decodeSeries(&p, []byte(line), &s)
		v, werr := q.Parse(line)
		if werr != nil {
			t.Fatal(werr)
		}
		var want []int64
		for _, x := range v.GetArray("timestamps") {
			want = append(want, x.GetInt64())
		}
		if len(v.GetArray("values")) != len(want) {
			if err == nil {
				t.Errorf("%s: decoded although the arrays differ in length", line)
			}
			continue
		}
		if err != nil || fmt.Sprint(s.Timestamps) != fmt.Sprint(want) || len(s.Values) != len(want) {
			t.Errorf("%s: timestamps %v, values %v (err %v); want timestamps %v", line, s.Timestamps, s.Values, err, want)
		}
	}
}

// numberTexts returns number texts of every form an export line may hold: integers, decimals of every length around
// exactDigits, exponents, signs, leading zeros and malformed ones.
func numberTexts() []string {
	out := []string{"0", "-0", "1", "-1", "0.25", "-0.25", "1.", ".5", "-", "", "1e3", "1E-3", "-2.5e+10", "00012", "0.000000000000001",
		"123456789012345", "1234567890123456", "12345678901234567890", "1234567.89012345", "1234567.890123456", "0.1", "9007199254740993",
		"1.7976931348623157e308", "4.9e-324", "1.2.3", "1-2", "+1", "NaN", "Inf", "1x", "922337203685477580", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "1750000000000", "12345678", "123456789", "1234567812345678",
		"1234567:", "1234567/", "12345678:", "99999999.99999999", "1750000030000.5", "-17500000300001",
		"1234567.1234567", "-1234567.1234567", "1234567.1", "1.1234567", "1.12345678", "123.", "1.x", "12.5e3"} // parseValues reads 16 bytes at once
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		f := r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15))
		out = append(out, strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(f, 'g', -1, 64),
			strconv.FormatFloat(f, 'f', r.IntN(18), 64), strconv.FormatInt(r.Int64()>>r.IntN(63), 10))
	}
	return out
}

// TestParseNumbersMatchFastfloat checks that the export arrays' number readers give, bit for bit, what fastfloat
// gives for the same text (the decoder's results must not depend on which path read a number), and read exactly
// the number's characters.
func TestParseNumbersMatchFastfloat(t *testing.T) {
	for _, text := range numberTexts() {
		checkNumber(t, text)
	}
}

// TestParseValuesMatchesOneByOne checks the values array reader against reading the same list one number at a time
// with parseFloat (the decoder's first form): lists of valid and invalid numbers, each followed by the rest of an
// export line, a bare bracket or nothing, must give the same values bit for bit, the same length and the same verdict.
func TestParseValuesMatchesOneByOne(t *testing.T) {
	texts := numberTexts()
	r := rand.New(rand.NewPCG(5, 6))
	for range 20_000 {
		var list []string
		for range r.IntN(6) {
			list = append(list, texts[r.IntN(len(texts))])
		}
		for _, end := range []string{`],"timestamps":[1,2]}`, "]", ""} {
			checkValues(t, strings.Join(list, ",")+end)
		}
	}
}

// FuzzParseValues checks the values array reader against parseFloat on any text.
func FuzzParseValues(f *testing.F) {
	for _, s := range []string{"1,2.5,-3]", "0.25,1e3,NaN]", "12345678.5,1]", "", "]"} {
		f.Add(s)
	}
	f.Fuzz(checkValues)
}

// checkValues compares parseValues on text with a loop of parseFloat over the same list.
func checkValues(t *testing.T, text string) {
	b := []byte(text)
	var want []float64
	wantN, wantOK := 0, true
	for more := len(b) > 0 && b[0] != ']'; more; {
		f, n, ok := parseFloat(b[wantN:])
		if !ok {
			wantOK = false
			break
		}
		want, wantN = append(want, f), wantN+n
		if more = wantN < len(b) && b[wantN] == ','; more {
			wantN++
		}
	}
	got, n, ok := parseValues(b, nil)
	if ok != wantOK || ok && (n != wantN || len(got) != len(want)) {
		t.Fatalf("parseValues(%q) = %v, %d, %v; one by one %v, %d, %v", text, got, n, ok, want, wantN, wantOK)
	}
	for i := range want {
		if ok && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("parseValues(%q)[%d] = %v; one by one %v", text, i, got[i], want[i])
		}
	}
}

// TestDigitRun checks the eight-at-a-time digit reader against reading the same bytes one by one, on digits and on
// every byte next to them in the ASCII table (and bytes with the high bit set), in every position.
func TestDigitRun(t *testing.T) {
	near := []byte("/:0123456789\x00 .,]-eE+\xb0\xb9\xfa\xff\x3f\x40")
	r := rand.New(rand.NewPCG(3, 4))
	for range 300_000 {
		var b [8]byte
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		for range r.IntN(4) { // up to three bytes that may not be digits
			b[r.IntN(8)] = near[r.IntN(len(near))]
		}
		wantN, want := 0, uint64(0)
		for _, c := range b {
			if c < '0' || c > '9' {
				break
			}
			wantN, want = wantN+1, want*10+uint64(c-'0')
		}
		n, got := digitRun(binary.LittleEndian.Uint64(b[:]))
		if n != wantN || got != want {
			t.Fatalf("digitRun(%q) = %d, %d; want %d, %d", b[:], n, got, wantN, want)
		}
	}
}

// FuzzParseNumbers checks the number readers against fastfloat on any text.
func FuzzParseNumbers(f *testing.F) {
	for _, s := range numberTexts()[:40] {
		f.Add(s)
	}
	f.Fuzz(checkNumber)
}

func checkNumber(t *testing.T, text string) {
	for _, end := range []string{",", "]", ""} {
		b := []byte(text + end)
		tok := unsafeString(numberPrefix(b))
		want, werr := fastfloat.Parse(tok)
		got, n, ok := parseFloat(b)
		if ok != (werr == nil && tok != "") || ok && (math.Float64bits(got) != math.Float64bits(want) || n != len(tok)) {
			t.Errorf("parseFloat(%q) = %v, %d, %v; fastfloat.Parse(%q) = %v, %v", b, got, n, ok, tok, want, werr)
		}
		wantI, ierr := fastfloat.ParseInt64(tok)
		gotI, n, ok := parseInt(b)
		if ok != (ierr == nil && tok != "") || ok && (gotI != wantI || n != len(tok)) {
			t.Errorf("parseInt(%q) = %v, %d, %v; fastfloat.ParseInt64(%q) = %v, %v", b, gotI, n, ok, tok, wantI, ierr)
		}
	}
}

// TestLabelValuesOutliveTheLine decodes many lines into one Series, as Export does, keeping every label value: each
// must still read as its line wrote it after the lines that follow (the values of a line share chunks with the next
// ones, and a chunk is never written again where it was handed out), including values longer than a chunk.
func TestLabelValuesOutliveTheLine(t *testing.T) {
	var p fastjson.Parser
	s := &Series{}
	var kept, want []string
	for i := 0; i < 5000; i++ {
		pod := fmt.Sprintf("app-%08x", i)
		if i%1000 == 7 {
			pod = strings.Repeat("p", valueChunk+i) // larger than a chunk
		}
		line := fmt.Sprintf(`{"metric":{"__name__":"up","pod":%q,"empty":""},"values":[1],"timestamps":[%d]}`, pod, i)
		if err := decodeSeries(&p, []byte(line), s); err != nil {
			t.Fatal(err)
		}
		for _, l := range s.Labels {
			kept = append(kept, l.Value)
		}
		want = append(want, "up", pod, "")
	}
	if len(kept) != len(want) {
		t.Fatalf("kept %d values, want %d", len(kept), len(want))
	}
	for i := range want {
		if kept[i] != want[i] {
			t.Fatalf("value %d reads %.40q after the lines that followed, want %.40q", i, kept[i], want[i])
		}
	}
}
