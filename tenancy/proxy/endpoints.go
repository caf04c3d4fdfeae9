package proxy

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// kind is how the proxy restricts one endpoint.
type kind int

const (
	// kindQuery restricts the `query` parameter (MetricsQL).
	kindQuery kind = iota
	// kindSelectors restricts every `match[]` and adds one when there is none.
	kindSelectors
	// kindRules filters the rules in the response.
	kindRules
	// kindAlerts filters the alerts in the response.
	kindAlerts
	// kindInfo forwards a request that reads no series (build information).
	kindInfo
	// kindLogs restricts the `query` parameter (LogsQL).
	kindLogs
)

// endpoint is one path the proxy serves: its name (the `api` label of the proxy's metrics), how it is
// restricted, and the parameters it forwards; every other parameter is dropped, and `extra_*` ones are refused.
type endpoint struct {
	api    string
	kind   kind
	single []string
	multi  []string
	stream bool
}

// Parameters of the Prometheus API (prometheus.io/docs/prometheus/latest/querying/api/) and of VictoriaMetrics'
// export and federate handlers that the proxy forwards.
var (
	instantParams = []string{"query", "time", "timeout", "step", "nocache", "limit"}
	rangeParams   = []string{"query", "start", "end", "step", "timeout", "nocache", "limit"}
	seriesParams  = []string{"start", "end", "limit"}
)

// metricsEndpoints are the paths served under /prometheus, relative to the metrics upstream.
var metricsEndpoints = map[string]endpoint{
	"/api/v1/query":            {api: "query", kind: kindQuery, single: instantParams},
	"/api/v1/query_range":      {api: "query_range", kind: kindQuery, single: rangeParams},
	"/api/v1/query_exemplars":  {api: "query_exemplars", kind: kindQuery, single: []string{"query", "start", "end"}},
	"/api/v1/series":           {api: "series", kind: kindSelectors, single: seriesParams, multi: []string{"match[]"}},
	"/api/v1/labels":           {api: "labels", kind: kindSelectors, single: seriesParams, multi: []string{"match[]"}},
	"/api/v1/export":           {api: "export", kind: kindSelectors, single: []string{"start", "end", "max_rows_per_line", "reduce_mem_usage"}, multi: []string{"match[]"}, stream: true},
	"/federate":                {api: "federate", kind: kindSelectors, multi: []string{"match[]"}, stream: true},
	"/api/v1/rules":            {api: "rules", kind: kindRules, single: []string{"type"}},
	"/api/v1/alerts":           {api: "alerts", kind: kindAlerts},
	"/api/v1/status/buildinfo": {api: "buildinfo", kind: kindInfo},
}

// labelValuesPath matches `/api/v1/label/<name>/values`; the name is checked against labelName.
var (
	labelValuesPath = regexp.MustCompile(`^/api/v1/label/([^/]+)/values$`)
	labelName       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
)

// logsEndpoints are the LogsQL paths served under /logs and /audit-logs, relative to their upstream, with the
// parameters of the VictoriaLogs querying API (docs.victoriametrics.com/victorialogs/querying/).
var logsEndpoints = map[string]endpoint{
	"/select/logsql/query":               {api: "logs_query", kind: kindLogs, single: []string{"query", "start", "end", "limit", "offset", "time"}, stream: true},
	"/select/logsql/tail":                {api: "logs_tail", kind: kindLogs, single: []string{"query", "start_offset", "offset", "refresh_interval"}, stream: true},
	"/select/logsql/hits":                {api: "logs_hits", kind: kindLogs, single: []string{"query", "start", "end", "step", "offset", "fields_limit"}, multi: []string{"field"}},
	"/select/logsql/field_names":         {api: "logs_field_names", kind: kindLogs, single: []string{"query", "start", "end", "limit"}},
	"/select/logsql/field_values":        {api: "logs_field_values", kind: kindLogs, single: []string{"query", "start", "end", "field", "limit"}},
	"/select/logsql/streams":             {api: "logs_streams", kind: kindLogs, single: []string{"query", "start", "end", "limit"}},
	"/select/logsql/stream_ids":          {api: "logs_stream_ids", kind: kindLogs, single: []string{"query", "start", "end", "limit"}},
	"/select/logsql/stream_field_names":  {api: "logs_stream_field_names", kind: kindLogs, single: []string{"query", "start", "end", "limit"}},
	"/select/logsql/stream_field_values": {api: "logs_stream_field_values", kind: kindLogs, single: []string{"query", "start", "end", "field", "limit"}},
	"/select/logsql/stats_query":         {api: "logs_stats_query", kind: kindLogs, single: []string{"query", "time"}},
	"/select/logsql/stats_query_range":   {api: "logs_stats_query_range", kind: kindLogs, single: []string{"query", "start", "end", "step"}},
	"/select/logsql/facets":              {api: "logs_facets", kind: kindLogs, single: []string{"query", "start", "end", "limit", "max_values_per_field", "max_value_len", "keep_const_fields"}},
}

// route is a request matched to an upstream and an endpoint: the upstream base URL and the path under it.
type route struct {
	upstream string
	path     string
	ep       endpoint
}

// Path prefixes of the proxy, one per upstream (docs/tenancy.md).
const (
	MetricsPrefix   = "/prometheus"
	LogsPrefix      = "/logs"
	AuditLogsPrefix = "/audit-logs"
)

// match returns the route of path, or a 404 denial.
func (c *Config) match(path string) (route, *denial) {
	notServed := deny(http.StatusNotFound, ReasonNotServed, "%s is not served by the tenant proxy", path)
	for _, u := range []struct {
		prefix, base string
		eps          map[string]endpoint
	}{
		{MetricsPrefix, c.Upstreams.Metrics, metricsEndpoints},
		{LogsPrefix, c.Upstreams.Logs, logsEndpoints},
		{AuditLogsPrefix, c.Upstreams.AuditLogs, logsEndpoints},
	} {
		rest, ok := strings.CutPrefix(path, u.prefix+"/")
		if !ok {
			continue
		}
		if u.base == "" {
			return route{}, notServed
		}
		rest = "/" + rest
		if ep, ok := u.eps[rest]; ok {
			return route{upstream: u.base, path: rest, ep: ep}, nil
		}
		if u.prefix == MetricsPrefix {
			if m := labelValuesPath.FindStringSubmatch(rest); m != nil {
				if !labelName.MatchString(m[1]) {
					return route{}, deny(http.StatusBadRequest, ReasonBadRequest, "%q is not a label name", m[1])
				}
				return route{upstream: u.base, path: "/api/v1/label/" + url.PathEscape(m[1]) + "/values",
					ep: endpoint{api: "label_values", kind: kindSelectors, single: seriesParams, multi: []string{"match[]"}}}, nil
			}
		}
		return route{}, notServed
	}
	return route{}, notServed
}
