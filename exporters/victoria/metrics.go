package victoria

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fastjson"

	"kof.dev/kof/exporters/window"
)

// Series is one line of a VictoriaMetrics export: the labels of one series (with `__name__`) and a block of its
// samples. Its slices are reused between calls of the export callback; copy what must outlive the call.
type Series struct {
	// Labels are the series labels, `__name__` included, in the order the server sent them.
	Labels []Label
	// Timestamps are the sample times in milliseconds since the Unix epoch.
	Timestamps []int64
	// Values are the sample values; Values[i] belongs to Timestamps[i].
	Values []float64
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
// `{__name__!=""}`) with samples in h (GET /api/v1/label/<label>/values). Errors name the URL and status.
func (m Metrics) LabelValues(ctx context.Context, label, selector string, h window.Hour) ([]string, error) {
	q := url.Values{}
	q.Set("start", msArg(h.Start.UnixMilli()))
	q.Set("end", msArg(h.End.Add(-time.Millisecond).UnixMilli()))
	q.Set("match[]", selector)
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
	return Lines(body, func(line []byte) error {
		n++
		if err := decodeSeries(&p, line, s); err != nil {
			return fmt.Errorf("export line %d: %w", n, err)
		}
		// VictoriaMetrics filters by block time ranges; drop the rare sample outside the window so a boundary
		// sample can never land in two windows.
		keep := 0
		for i, t := range s.Timestamps {
			if t >= h.Start.UnixMilli() && t < h.End.UnixMilli() {
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
	s.Labels = s.Labels[:0]
	metric.Visit(func(k []byte, lv *fastjson.Value) {
		s.Labels = append(s.Labels, Label{Name: string(k), Value: string(lv.GetStringBytes())})
	})
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
