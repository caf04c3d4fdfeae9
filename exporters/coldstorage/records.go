package coldstorage

import (
	"strconv"
	"strings"
	"time"

	"kof.dev/kof/exporters/columnar"
	"kof.dev/kof/exporters/victoria"
)

// LogsQL's built-in fields and the fields VictoriaLogs fills from OTLP logs.
const (
	fieldTime     = "_time"
	fieldMsg      = "_msg"
	fieldStream   = "_stream"
	fieldStreamID = "_stream_id"
	fieldSeverity = "severity"
	fieldTraceID  = "trace_id"
	fieldSpanID   = "span_id"
	attrService   = "service.name"
)

// LogOf maps a VictoriaLogs record to a LogRow: `_time` → timestamp, `_msg` → body, `severity`, `trace_id`,
// `span_id`; the stream fields (named in `_stream`) → resource attributes; every other field → log attributes.
// It returns an error naming the field when `_time` is not an RFC 3339 time.
func LogOf(r *victoria.Record) (columnar.LogRow, error) {
	row := columnar.LogRow{ResourceAttributes: map[string]string{}, LogAttributes: map[string]string{}}
	stream := StreamFields(r.Get(fieldStream))
	for _, f := range r.Fields {
		switch f.Name {
		case fieldTime:
			t, err := time.Parse(time.RFC3339Nano, f.Value)
			if err != nil {
				return row, errField(f.Name, f.Value, err)
			}
			row.Timestamp = t.UTC()
		case fieldMsg:
			row.Body = f.Value
		case fieldSeverity:
			row.SeverityText = f.Value
		case fieldTraceID:
			row.TraceID = f.Value
		case fieldSpanID:
			row.SpanID = f.Value
		case fieldStream, fieldStreamID:
		default:
			if stream[f.Name] {
				row.ResourceAttributes[f.Name] = f.Value
			} else {
				row.LogAttributes[f.Name] = f.Value
			}
		}
	}
	row.ServiceName = row.ResourceAttributes[attrService]
	return row, nil
}

// Span field names of VictoriaTraces (https://docs.victoriametrics.com/victoriatraces/keyconcepts/).
const (
	spanParent       = "parent_span_id"
	spanTraceState   = "trace_state"
	spanName         = "name"
	spanKind         = "kind"
	spanStart        = "start_time_unix_nano"
	spanEnd          = "end_time_unix_nano"
	spanDuration     = "duration"
	spanStatusCode   = "status_code"
	spanStatusMsg    = "status_message"
	spanScopeName    = "scope_name"
	spanScopeVersion = "scope_version"
	prefixResource   = "resource_attr:"
	prefixSpan       = "span_attr:"
	prefixScope      = "scope_attr:"
)

// SpanOf maps a VictoriaTraces record to a SpanRow: the start and end from `start_time_unix_nano` and
// `end_time_unix_nano` (`_time` when missing), `resource_attr:*`, `span_attr:*` and `scope_attr:*` fields to their
// maps without the prefix, every other field (events, links, …) to ExtraFields. Errors name the field.
func SpanOf(r *victoria.Record) (columnar.SpanRow, error) {
	row := columnar.SpanRow{
		ResourceAttributes: map[string]string{}, SpanAttributes: map[string]string{},
		ScopeAttributes: map[string]string{}, ExtraFields: map[string]string{},
	}
	var at time.Time
	for _, f := range r.Fields {
		switch {
		case f.Name == fieldTime:
			t, err := time.Parse(time.RFC3339Nano, f.Value)
			if err != nil {
				return row, errField(f.Name, f.Value, err)
			}
			at = t.UTC()
		case f.Name == spanStart || f.Name == spanEnd:
			ns, err := strconv.ParseInt(f.Value, 10, 64)
			if err != nil {
				return row, errField(f.Name, f.Value, err)
			}
			if f.Name == spanStart {
				row.Timestamp = time.Unix(0, ns).UTC()
			} else {
				row.EndTimestamp = time.Unix(0, ns).UTC()
			}
		case strings.HasPrefix(f.Name, prefixResource):
			row.ResourceAttributes[strings.TrimPrefix(f.Name, prefixResource)] = f.Value
		case strings.HasPrefix(f.Name, prefixSpan):
			row.SpanAttributes[strings.TrimPrefix(f.Name, prefixSpan)] = f.Value
		case strings.HasPrefix(f.Name, prefixScope):
			row.ScopeAttributes[strings.TrimPrefix(f.Name, prefixScope)] = f.Value
		default:
			if dst := spanColumn(&row, f.Name); dst != nil {
				*dst = f.Value
			} else if f.Name != fieldStream && f.Name != fieldStreamID && f.Name != spanDuration {
				row.ExtraFields[f.Name] = f.Value
			}
		}
	}
	if row.Timestamp.IsZero() {
		row.Timestamp = at
	}
	if row.EndTimestamp.IsZero() {
		row.EndTimestamp = row.Timestamp
	}
	row.DurationNanos = row.EndTimestamp.Sub(row.Timestamp).Nanoseconds()
	row.ServiceName = row.ResourceAttributes[attrService]
	return row, nil
}

// spanColumn returns the string column of row that field fills, or nil.
func spanColumn(row *columnar.SpanRow, field string) *string {
	switch field {
	case fieldTraceID:
		return &row.TraceID
	case fieldSpanID:
		return &row.SpanID
	case spanParent:
		return &row.ParentSpanID
	case spanTraceState:
		return &row.TraceState
	case spanName:
		return &row.SpanName
	case spanKind:
		return &row.SpanKind
	case spanStatusCode:
		return &row.StatusCode
	case spanStatusMsg:
		return &row.StatusMessage
	case spanScopeName:
		return &row.ScopeName
	case spanScopeVersion:
		return &row.ScopeVersion
	}
	return nil
}

// StreamFields returns the field names of a LogsQL `_stream` value such as `{k8s.cluster.name="a",job="b"}`.
// Quoted values may hold escaped quotes, commas and braces; a malformed value gives the names read so far.
func StreamFields(stream string) map[string]bool {
	out := map[string]bool{}
	s := strings.TrimSpace(stream)
	if !strings.HasPrefix(s, "{") {
		return out
	}
	s = s[1:]
	for {
		s = strings.TrimLeft(s, " ,")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return out
		}
		out[strings.TrimSpace(s[:eq])] = true
		s = s[eq+1:]
		if !strings.HasPrefix(s, `"`) {
			return out
		}
		v, err := strconv.QuotedPrefix(s)
		if err != nil {
			return out
		}
		s = s[len(v):]
	}
}
