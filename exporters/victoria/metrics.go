package victoria

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"net/url"
	"strconv"
	"time"
	"unsafe"

	"github.com/valyala/fastjson"
	"github.com/valyala/fastjson/fastfloat"

	"kof.dev/kof/exporters/window"
)

// Series is one line of a VictoriaMetrics export: the labels of one series (with `__name__`) and a block of its
// samples. Its slices are reused between calls of the export callback; copy what must outlive the call. The strings
// of Labels stay valid after the call: they may be kept without a copy.
type Series struct {
	// Labels are the series labels, `__name__` included, in the order the server sent them.
	Labels []Label
	// Timestamps are the sample times in milliseconds since the Unix epoch.
	Timestamps []int64
	// Values are the sample values; Values[i] belongs to Timestamps[i].
	Values []float64

	names map[string]string // label names seen, so that each is allocated once (at most maxNames)
	// lastNames are the label names of the last line read by plainMetric, by position: the series of a metric
	// family come in a row with the same names in the same order, so a name is compared with the one at its
	// position before it is looked up.
	lastNames []string

	// The timestamps text of the last line decodeExact read in place, and its values: the series of one scrape
	// target share their sample times, and VictoriaMetrics exports a target's series next to each other, so the
	// next line often carries the same text, which is then compared, not parsed again.
	lastTimesText []byte
	lastTimes     []int64

	// values holds the bytes of the label values of the lines read so far, in chunks of valueChunk bytes: a value's
	// string refers to its chunk, and a chunk is never written again where it was handed out, so the strings stay
	// valid after the call (one allocation per chunk instead of one per label of each line).
	values []byte
}

// valueChunk is the size of the chunks label values are copied into (a few hundred series' labels each).
const valueChunk = 32 << 10

// value returns b as a string in the current chunk of label values, starting a new chunk when b does not fit.
func (s *Series) value(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(s.values)-len(s.values) < len(b) {
		s.values = make([]byte, 0, max(valueChunk, len(b)))
	}
	start := len(s.values)
	s.values = append(s.values, b...)
	return unsafe.String(&s.values[start], len(b))
}

// setLabels sets the Labels of s to the members of the metric object, in its order.
func (s *Series) setLabels(metric *fastjson.Object) {
	s.Labels = s.Labels[:0]
	metric.Visit(func(k []byte, lv *fastjson.Value) {
		s.Labels = append(s.Labels, Label{Name: s.name(k), Value: s.value(lv.GetStringBytes())})
	})
}

// plainMetric reads the metric object b starts with when it has the plain form VictoriaMetrics writes: `{`, then
// `"name":"value"` members separated by commas, then `}`, without white space or a backslash. It sets the Labels of s
// (in the object's order) and returns the object's length, or -1 for any other form, which fastjson then reads (a
// string's end is its next quote only where no backslash can escape it). It reads what fastjson reads for the same
// object: FuzzDecodeExact compares the two.
func (s *Series) plainMetric(b []byte) int {
	if len(b) < 2 || b[0] != '{' {
		return -1
	}
	s.Labels = s.Labels[:0]
	if b[1] == '}' {
		return 2
	}
	i := 1
	for k := 0; ; k++ {
		name, n := plainString(b[i:])
		if n < 0 || i+n >= len(b) || b[i+n] != ':' {
			return -1
		}
		i += n + 1
		value, n := plainString(b[i:])
		if n < 0 || i+n >= len(b) {
			return -1
		}
		s.Labels = append(s.Labels, Label{Name: s.nameAt(k, name), Value: s.value(value)})
		switch i += n; b[i] {
		case ',':
			i++
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// plainString returns the inside of the JSON string b starts with and the string's length with its quotes, or -1
// when b does not start with a string or the string holds a backslash.
func plainString(b []byte) ([]byte, int) {
	if len(b) == 0 || b[0] != '"' {
		return nil, -1
	}
	j := bytes.IndexByte(b[1:], '"')
	if j < 0 || bytes.IndexByte(b[1:1+j], '\\') >= 0 {
		return nil, -1
	}
	return b[1 : 1+j], j + 2
}

// nameAt returns the label name k at position i of a line (positions are visited in order) as a string: the last
// line's name at i when equal, else the one name returns, remembered at i.
func (s *Series) nameAt(i int, k []byte) string {
	if i < len(s.lastNames) && s.lastNames[i] == string(k) {
		return s.lastNames[i]
	}
	n := s.name(k)
	if i < len(s.lastNames) {
		s.lastNames[i] = n
	} else {
		s.lastNames = append(s.lastNames, n)
	}
	return n
}

// maxNames bounds the label names a Series keeps for reuse.
const maxNames = 1024

// name returns k as a string, the same string for the same label name.
func (s *Series) name(k []byte) string {
	if n, ok := s.names[string(k)]; ok {
		return n
	}
	n := string(k)
	if s.names == nil {
		s.names = map[string]string{}
	}
	if len(s.names) < maxNames {
		s.names[n] = n
	}
	return n
}

// Label is one label name and value.
type Label struct {
	// Name and Value of the label.
	Name, Value string
}

// Metrics is a VictoriaMetrics select API (single-node root or `…/select/<account>/prometheus` of a cluster).
type Metrics struct {
	Endpoint
}

// msArg formats milliseconds as the fractional seconds VictoriaMetrics accepts in start/end.
func msArg(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

// LabelValues returns the values of label among the series matching selector (a series selector such as
// `{tenant="acme"}`; "" = every series) with samples in h (GET /api/v1/label/<label>/values). Without a selector
// VictoriaMetrics reads the values from its per-day index of label values alone instead of first listing every
// series of the day. Errors name the URL and status.
func (m Metrics) LabelValues(ctx context.Context, label, selector string, h window.Hour) ([]string, error) {
	q := url.Values{}
	q.Set("start", msArg(h.Start.UnixMilli()))
	q.Set("end", msArg(h.End.Add(-time.Millisecond).UnixMilli()))
	if selector != "" {
		q.Set("match[]", selector)
	}
	body, err := m.get(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", q)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return decodeStringList(body, "data")
}

// Export streams every sample of the series matching selector with a timestamp in [h.Start, h.End) (GET
// /api/v1/export) and calls fn once per response line. It returns the first error of the request, of decoding
// (naming the line) or of fn.
func (m Metrics) Export(ctx context.Context, selector string, h window.Hour, fn func(*Series) error) error {
	q := url.Values{}
	q.Set("start", msArg(h.Start.UnixMilli()))
	q.Set("end", msArg(h.End.Add(-time.Millisecond).UnixMilli()))
	q.Set("match[]", selector)
	body, err := m.get(ctx, "/api/v1/export", q)
	if err != nil {
		return err
	}
	defer body.Close()
	var p fastjson.Parser
	s := &Series{}
	n := 0
	start, end := h.Start.UnixMilli(), h.End.UnixMilli()
	return Lines(body, func(line []byte) error {
		n++
		if err := decodeSeries(&p, line, s); err != nil {
			return fmt.Errorf("export line %d: %w", n, err)
		}
		// VictoriaMetrics filters by block time ranges; drop the rare sample outside the window so a boundary
		// sample can never land in two windows.
		keep := 0
		for i, t := range s.Timestamps {
			if t >= start && t < end {
				s.Timestamps[keep], s.Values[keep] = t, s.Values[i]
				keep++
			}
		}
		s.Timestamps, s.Values = s.Timestamps[:keep], s.Values[:keep]
		if keep == 0 {
			return nil
		}
		return fn(s)
	})
}

// decodeSeries parses one export line `{"metric":{...},"values":[...],"timestamps":[...]}` into s, reusing its
// slices.
func decodeSeries(p *fastjson.Parser, line []byte, s *Series) error {
	if decodeExact(p, line, s) {
		return nil
	}
	v, err := p.ParseBytes(line)
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	mv, err := member(v, "metric")
	if err != nil {
		return err
	}
	metric, err := mv.Object()
	if err != nil {
		return fmt.Errorf("field metric: %w", err)
	}
	s.setLabels(metric)
	vv, err := member(v, "values")
	if err != nil {
		return err
	}
	vals, err := vv.Array()
	if err != nil {
		return fmt.Errorf("field values: %w", err)
	}
	tv, err := member(v, "timestamps")
	if err != nil {
		return err
	}
	tss, err := tv.Array()
	if err != nil {
		return fmt.Errorf("field timestamps: %w", err)
	}
	if len(vals) != len(tss) {
		return fmt.Errorf("%d values but %d timestamps", len(vals), len(tss))
	}
	s.Values, s.Timestamps = s.Values[:0], s.Timestamps[:0]
	for i := range vals {
		f, err := sampleValue(vals[i])
		if err != nil {
			return fmt.Errorf("values[%d]: %w", i, err)
		}
		t, err := tss[i].Int64()
		if err != nil {
			return fmt.Errorf("timestamps[%d]: %w", i, err)
		}
		s.Values, s.Timestamps = append(s.Values, f), append(s.Timestamps, t)
	}
	return nil
}

// The parts of an export line as VictoriaMetrics writes it, around the metric object and the two arrays.
const (
	exactMetric     = `{"metric":`
	exactValues     = `,"values":[`
	exactTimestamps = `],"timestamps":[`
	exactEnd        = `]}`
)

// decodeExact decodes line into s when it has exactly the form VictoriaMetrics writes: `{"metric":{...},"values":[`
// numbers `],"timestamps":[` integers `]}`, no white space, as many values as timestamps. The metric object is read
// in place when plain (plainMetric), else by fastjson; the two arrays, most of the line, are read in place with the
// parsers fastjson uses for numbers (fastfloat), so the result is the same. It reports false for any other line
// (special values such as "NaN" or null, other field order, white space, errors), which the caller decodes with
// fastjson in full.
func decodeExact(p *fastjson.Parser, line []byte, s *Series) bool {
	rest, ok := bytes.CutPrefix(line, []byte(exactMetric))
	if !ok {
		return false
	}
	end := s.plainMetric(rest)
	if end < 0 { // escapes or other forms: fastjson reads the object
		if end = objectEnd(rest); end < 0 {
			return false
		}
		mv, err := p.ParseBytes(rest[:end])
		if err != nil {
			return false
		}
		metric, err := mv.Object()
		if err != nil {
			return false
		}
		s.setLabels(metric)
	}
	if rest, ok = bytes.CutPrefix(rest[end:], []byte(exactValues)); !ok {
		return false
	}
	s.Timestamps = s.Timestamps[:0]
	var n int
	if s.Values, n, ok = parseValues(rest, s.Values[:0]); !ok {
		return false
	}
	rest = rest[n:]
	if rest, ok = bytes.CutPrefix(rest, []byte(exactTimestamps)); !ok {
		return false
	}
	timesText := rest
	text, ok := bytes.CutSuffix(rest, []byte(exactEnd))
	reused := ok && len(s.lastTimes) == len(s.Values) && bytes.Equal(text, s.lastTimesText)
	if reused {
		s.Timestamps = append(s.Timestamps, s.lastTimes...)
		rest = rest[len(text):]
	}
	for more := !reused && len(rest) > 0 && rest[0] != ']'; more; {
		t, n, ok := parseInt(rest)
		if !ok {
			return false
		}
		s.Timestamps = append(s.Timestamps, t)
		rest = rest[n:]
		if more = len(rest) > 0 && rest[0] == ','; more {
			rest = rest[1:]
		}
	}
	if string(rest) != exactEnd || len(s.Values) != len(s.Timestamps) {
		return false
	}
	if !reused {
		s.lastTimesText = append(s.lastTimesText[:0], timesText[:len(timesText)-len(rest)]...)
		s.lastTimes = append(s.lastTimes[:0], s.Timestamps...)
	}
	return true
}

// exactDigits bounds the digits of a number parseFloat converts itself: below 10^15 the mantissa and the power of
// ten are exact doubles, so the one division gives what fastfloat.Parse computes for the same text.
const exactDigits = 15

// pow10 holds the powers of ten up to 10^exactDigits.
var pow10 = [exactDigits + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// scanDigits appends the decimal digits of b from index i to d (d*10 + digit each) and returns the result and the
// index of the first byte that is not a digit. Callers bound the digit count, so d does not overflow for what they
// keep. Up to eight digits are converted at once (digitRun) while eight bytes are left; a millisecond timestamp (13
// digits) takes two steps, a value such as 83330.75 one for each side of the point.
func scanDigits(b []byte, i int, d uint64) (uint64, int) {
	for i+8 <= len(b) {
		n, v := digitRun(binary.LittleEndian.Uint64(b[i:]))
		d, i = d*pow10u[n]+v, i+n
		if n < 8 {
			return d, i
		}
	}
	for ; i < len(b) && b[i]-'0' < 10; i++ {
		d = d*10 + uint64(b[i]-'0')
	}
	return d, i
}

// pow10u holds the powers of ten up to 10^8.
var pow10u = [9]uint64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000}

// digitRun returns how many of the eight characters u holds (the first in the lowest byte, as binary.LittleEndian
// reads them) are decimal digits before the first one that is not, and the value of those digits. It works on the
// eight bytes at once: a byte is a digit when its high nibble is 3 and adding 6 to it keeps it so; the digits are
// moved to the top bytes (zeros before them), then neighbouring digits, pairs and quads are added with one
// multiplication each, the first digit weighted most.
func digitRun(u uint64) (int, uint64) {
	n := bits.TrailingZeros64(notDigits(u)) >> 3 // 8 when all are digits
	if n == 0 {
		return 0, 0
	}
	return n, digitsValue(u, n)
}

// notDigits returns a word whose byte k is not zero exactly when byte k of u is not a decimal digit: a byte is a
// digit when its high nibble is 3 and adding 6 to it keeps it so.
func notDigits(u uint64) uint64 {
	const (
		zeros = 0x3030303030303030 // '0' in every byte
		highs = 0xF0F0F0F0F0F0F0F0
	)
	return (u&highs ^ zeros) | ((u+0x0606060606060606)&highs ^ zeros)
}

// digitsValue returns the value of the n (1 to 8) decimal digits in the lowest bytes of u, the first in the lowest
// byte. The digits are moved to the top bytes (zeros before them), then neighbouring digits, pairs and quads are
// added with one multiplication each, the first digit weighted most.
func digitsValue(u uint64, n int) uint64 {
	// Borrows and carries of the bytes from the first non-digit on move up, away from the digits, and are shifted out.
	v := (u - 0x3030303030303030) << ((8 - n) * 8)
	v = v*10 + v>>8
	v = (v&0x000000FF000000FF)*(100+1_000_000<<32) + (v>>16&0x000000FF000000FF)*(1+10_000<<32)
	return v >> 32
}

// parseFloat reads the JSON number b starts with (up to a comma, a bracket or the end) and returns its value, its
// length and true, or false when b does not start with a number. A number of the usual form (`-`, at most
// exactDigits digits, at most one point) is converted in the same pass as the scan, in the same arithmetic as
// fastfloat.Parse; any other (exponents, more digits) is left to fastfloat.Parse, so the value is always
// fastfloat's.
func parseFloat(b []byte) (float64, int, bool) {
	i, neg := 0, len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	start := i
	d, i := scanDigits(b, i, 0)
	digits, frac, point := i-start, 0, i < len(b) && b[i] == '.'
	if point {
		var j int
		d, j = scanDigits(b, i+1, d)
		frac, i = j-i-1, j
	}
	if digits == 0 || (point && frac == 0) || digits+frac > exactDigits || (i < len(b) && b[i] != ',' && b[i] != ']') {
		tok := numberPrefix(b)
		f, err := fastfloat.Parse(unsafeString(tok))
		return f, len(tok), len(tok) > 0 && err == nil
	}
	f := float64(d) / pow10[frac]
	if neg {
		f = -f
	}
	return f, i, true
}

// parseValues appends to dst the numbers of the comma-separated list b starts with (the inside of a JSON array) and
// returns dst, the length of the list (b[n] is the byte after it, `]` in an export line) and true; false when an
// element is not a number. Each number's value is parseFloat's for the same text: the usual short form (`-`, up to
// seven digits, then optionally a point and up to seven digits) is converted here, with the same division as
// parseFloat, the digit masks of two words giving both the point and the end of the number (so the scan of the next
// number waits on two loads); any other form, and a number with fewer than 16 bytes of b from its first digit on (in
// an export line only the timestamps follow the values), goes to parseFloat. It exists because the values are most
// of an export line: inline, the next number's scan does not wait on a call per side of the point.
func parseValues(b []byte, dst []float64) ([]float64, int, bool) {
	i := 0
	if len(b) == 0 || b[0] == ']' { // an empty list
		return dst, 0, true
	}
	for {
		start := i
		neg := i < len(b) && b[i] == '-'
		if neg {
			i++
		}
		var f float64
		fast := false
		if i+16 <= len(b) {
			// Sixteen bytes at once: where the integer digits end (n1) and where the number ends (e) both come from
			// the two words' digit masks, so the next number's scan waits on two loads, not four.
			lo, hi := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
			mlo, mhi := notDigits(lo), notDigits(hi)
			if n1 := bits.TrailingZeros64(mlo) >> 3; n1 > 0 && n1 < 8 {
				e := n1
				if c := b[i+n1]; c == '.' {
					rest := mlo &^ (1<<((n1+1)*8) - 1) // the non-digits after the point
					if rest != 0 {
						e = bits.TrailingZeros64(rest) >> 3
					} else {
						e = 8 + bits.TrailingZeros64(mhi)>>3 // 16 when the window holds no end
					}
				}
				if n2 := e - n1 - 1; e < 16 && (b[i+e] == ',' || b[i+e] == ']') && (e == n1 || n2 > 0 && n2 < 8) {
					d := digitsValue(lo, n1)
					if e == n1 {
						f = float64(d)
					} else {
						sh := uint((n1 + 1) * 8) // the fraction's digits as one word, the first in the lowest byte
						frac := digitsValue(lo>>sh|hi<<(64-sh), n2)
						f = float64(d*pow10u[n2]+frac) / pow10[n2]
					}
					i, fast = i+e, true
				}
			}
		}
		if fast {
			if neg {
				f = -f
			}
		} else {
			v, n, ok := parseFloat(b[start:])
			if !ok {
				return dst, 0, false
			}
			f, i = v, start+n
		}
		dst = append(dst, f)
		if i >= len(b) || b[i] != ',' {
			return dst, i, true
		}
		i++
	}
}

// parseInt reads the JSON integer b starts with (up to a comma, a bracket or the end) and returns it, its length and
// true, or false when b does not start with an integer fastfloat.ParseInt64 reads. Integers of at most 18 digits are
// converted in the same pass as the scan; longer ones are left to fastfloat.ParseInt64.
func parseInt(b []byte) (int64, int, bool) {
	i, neg := 0, len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	start := i
	u, i := scanDigits(b, i, 0)
	d := int64(u)
	if n := i - start; n == 0 || n > 18 || (i < len(b) && b[i] != ',' && b[i] != ']') {
		tok := numberPrefix(b)
		t, err := fastfloat.ParseInt64(unsafeString(tok))
		return t, len(tok), len(tok) > 0 && err == nil
	}
	if neg {
		d = -d
	}
	return d, i, true
}

// objectEnd returns the length of the JSON object that b starts with (up to and including its closing brace),
// skipping strings and their escapes, or -1 when b does not start with a complete object.
func objectEnd(b []byte) int {
	if len(b) == 0 || b[0] != '{' {
		return -1
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// numberPrefix returns the characters of a JSON number that b starts with (digits, sign, point, exponent).
func numberPrefix(b []byte) []byte {
	n := 0
	for n < len(b) {
		c := b[n]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		n++
	}
	return b[:n]
}

// unsafeString returns b as a string without a copy; the string must not outlive b nor be kept.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// member returns field name of object v, or an error naming it when it is missing (fastjson returns nil).
func member(v *fastjson.Value, name string) (*fastjson.Value, error) {
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("line is %s, want an object", v.Type())
	}
	m := v.Get(name)
	if m == nil {
		return nil, fmt.Errorf("field %s: missing", name)
	}
	return m, nil
}

// sampleValue reads a sample value: a JSON number, or the strings VictoriaMetrics writes for special values
// (`NaN`, `Inf`, `-Inf`) and null for a missing value (NaN).
func sampleValue(v *fastjson.Value) (float64, error) {
	switch v.Type() {
	case fastjson.TypeNumber:
		return v.Float64()
	case fastjson.TypeNull:
		return math.NaN(), nil
	case fastjson.TypeString:
		return strconv.ParseFloat(string(v.GetStringBytes()), 64)
	}
	return 0, fmt.Errorf("unexpected %s", v.Type())
}

// Raw streams the export response of selector in h into w without decoding it and returns the bytes copied; the
// benchmarks compare the exporter with it.
func (m Metrics) Raw(ctx context.Context, selector string, h window.Hour, w io.Writer) (int64, error) {
	q := url.Values{}
	q.Set("start", msArg(h.Start.UnixMilli()))
	q.Set("end", msArg(h.End.Add(-time.Millisecond).UnixMilli()))
	q.Set("match[]", selector)
	body, err := m.get(ctx, "/api/v1/export", q)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	n, err := io.Copy(w, body)
	if err != nil {
		return n, fmt.Errorf("read export of %s: %w", m.Base, err)
	}
	return n, nil
}
