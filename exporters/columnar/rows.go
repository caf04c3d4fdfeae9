package columnar

import "time"

// LogRow is one log record, in the OpenTelemetry log data model's terms: the schema of `logs.parquet`.
type LogRow struct {
	// Timestamp of the record (TIMESTAMP(NANOS), UTC).
	Timestamp time.Time `parquet:"timestamp,timestamp(nanosecond)"`
	// SeverityText is the record's severity (`severity` field), "" when none.
	SeverityText string `parquet:"severity_text,dict"`
	// Body is the log message (`_msg`).
	Body string `parquet:"body"`
	// TraceID and SpanID link the record to a span, "" when none.
	TraceID string `parquet:"trace_id"`
	SpanID  string `parquet:"span_id"`
	// ServiceName is the `service.name` resource attribute, "" when none.
	ServiceName string `parquet:"service_name,dict"`
	// ResourceAttributes are the record's stream fields (the OTLP resource attributes VictoriaLogs keeps as
	// stream fields).
	ResourceAttributes map[string]string `parquet:"resource_attributes" parquet-key:",dict" parquet-value:",dict"`
	// LogAttributes are every other field.
	LogAttributes map[string]string `parquet:"log_attributes" parquet-key:",dict"`
}

// At returns the record time.
func (r LogRow) At() time.Time { return r.Timestamp }

// SpanRow is one span, in the OpenTelemetry trace data model's terms: the schema of `traces.parquet`.
type SpanRow struct {
	// Timestamp is the span's start (TIMESTAMP(NANOS), UTC).
	Timestamp time.Time `parquet:"timestamp,timestamp(nanosecond)"`
	// EndTimestamp is the span's end.
	EndTimestamp time.Time `parquet:"end_timestamp,timestamp(nanosecond)"`
	// DurationNanos is End - Start in nanoseconds.
	DurationNanos int64 `parquet:"duration_ns"`
	// TraceID, SpanID, ParentSpanID identify the span (hex).
	TraceID      string `parquet:"trace_id"`
	SpanID       string `parquet:"span_id"`
	ParentSpanID string `parquet:"parent_span_id"`
	// TraceState is the W3C trace state, "" when none.
	TraceState string `parquet:"trace_state"`
	// SpanName and SpanKind (as VictoriaTraces stores it).
	SpanName string `parquet:"span_name,dict"`
	SpanKind string `parquet:"span_kind,dict"`
	// ServiceName is the `service.name` resource attribute.
	ServiceName string `parquet:"service_name,dict"`
	// StatusCode and StatusMessage of the span.
	StatusCode    string `parquet:"status_code,dict"`
	StatusMessage string `parquet:"status_message"`
	// ScopeName and ScopeVersion of the instrumentation scope.
	ScopeName    string `parquet:"scope_name,dict"`
	ScopeVersion string `parquet:"scope_version,dict"`
	// ResourceAttributes (`resource_attr:*` fields), SpanAttributes (`span_attr:*`), ScopeAttributes
	// (`scope_attr:*`) without their prefixes.
	ResourceAttributes map[string]string `parquet:"resource_attributes" parquet-key:",dict" parquet-value:",dict"`
	SpanAttributes     map[string]string `parquet:"span_attributes" parquet-key:",dict"`
	ScopeAttributes    map[string]string `parquet:"scope_attributes" parquet-key:",dict"`
	// ExtraFields are the span's other fields (events, links, …) under their stored names.
	ExtraFields map[string]string `parquet:"extra_fields" parquet-key:",dict"`
}

// At returns the span start.
func (r SpanRow) At() time.Time { return r.Timestamp }
