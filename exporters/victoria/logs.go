package victoria

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"kof.dev/kof/exporters/window"
)

// Logs is a VictoriaLogs (or VictoriaTraces) select API root, such as `http://vlselect-logs:9471`.
type Logs struct {
	Endpoint
}

// Record is one log record (or span) as LogsQL returns it: every field as a string. Its slice is reused between
// calls of the query callback.
type Record struct {
	// Fields are the record's fields in the server's order (`_time`, `_msg`, `_stream`, …).
	Fields []Label
}

// Get returns the value of field name, or "" when the record has none.
func (r *Record) Get(name string) string {
	for _, f := range r.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// Exact returns the LogsQL filter selecting records whose field equals value exactly (`"field":="value"`), with
// both quoted; an empty value also matches records without the field. A phrase filter (`field:value`) would also
// match `child-adopted` for `child`, so the exporters use only this form.
func Exact(field, value string) string {
	return strconv.Quote(field) + ":=" + strconv.Quote(value)
}

// TimeFilter returns the LogsQL filter of window h, half-open at nanosecond precision: `_time:[start, end)`.
func TimeFilter(h window.Hour) string {
	return "_time:[" + h.Start.Format(time.RFC3339Nano) + ", " + h.End.Format(time.RFC3339Nano) + ")"
}

// Query streams the records matching the LogsQL query (POST /select/logsql/query, JSON lines) and calls fn once
// per record. It returns the first error of the request, of decoding (naming the line) or of fn.
func (l Logs) Query(ctx context.Context, query string, fn func(*Record) error) error {
	body, err := l.post(ctx, "/select/logsql/query", url.Values{"query": {query}})
	if err != nil {
		return err
	}
	defer body.Close()
	var p fastjson.Parser
	rec := &Record{}
	n := 0
	return Lines(body, func(line []byte) error {
		n++
		v, err := p.ParseBytes(line)
		if err != nil {
			return fmt.Errorf("query line %d: parse: %w", n, err)
		}
		o, err := v.Object()
		if err != nil {
			return fmt.Errorf("query line %d: %w", n, err)
		}
		rec.Fields = rec.Fields[:0]
		o.Visit(func(k []byte, fv *fastjson.Value) {
			val := fv.GetStringBytes()
			if val == nil && fv.Type() != fastjson.TypeString {
				val = fv.MarshalTo(nil)
			}
			rec.Fields = append(rec.Fields, Label{Name: string(k), Value: string(val)})
		})
		return fn(rec)
	})
}

// Raw streams the response of the LogsQL query into w without decoding it and returns the bytes copied; the
// benchmarks compare the exporters with it.
func (l Logs) Raw(ctx context.Context, query string, w io.Writer) (int64, error) {
	body, err := l.post(ctx, "/select/logsql/query", url.Values{"query": {query}})
	if err != nil {
		return 0, err
	}
	defer body.Close()
	n, err := io.Copy(w, body)
	if err != nil {
		return n, fmt.Errorf("read %s: %w", l.Base, err)
	}
	return n, nil
}

// FieldValues returns the values of field among the records matching query (GET /select/logsql/field_values),
// sorted. A record without the field counts as the value "". Errors name the URL and status.
func (l Logs) FieldValues(ctx context.Context, query, field string) ([]string, error) {
	body, err := l.post(ctx, "/select/logsql/field_values", url.Values{"query": {query}, "field": {field}})
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var resp struct {
		Values []struct {
			Value string `json:"value"`
			Hits  int64  `json:"hits"`
		} `json:"values"`
	}
	if err := json.NewDecoder(body).Decode(&resp); err != nil {
		return nil, fmt.Errorf("decode field values of %q from %s: %w", field, l.Base, err)
	}
	out := make([]string, 0, len(resp.Values))
	for _, v := range resp.Values {
		out = append(out, v.Value)
	}
	sort.Strings(out)
	return out, nil
}

// post sends a form-encoded POST (LogsQL queries can be long) and returns the body of a 200 response.
func (l Logs) post(ctx context.Context, path string, form url.Values) (io.ReadCloser, error) {
	return l.send(ctx, path, strings.NewReader(form.Encode()))
}
