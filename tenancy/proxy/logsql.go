package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/VictoriaMetrics/VictoriaLogs/lib/logstorage"

	"kof.dev/kof/operator/outputs"
)

// forbiddenPipes are LogsQL pipes that read records outside the query's filters: `stream_context` returns the
// records around each match in its stream without applying the query's filters to them, so a tenant filter cannot
// bound it. Source: the LogsQL pipes reference (docs.victoriametrics.com/victorialogs/logsql/#stream_context-pipe).
var forbiddenPipes = []string{"stream_context"}

// LogsFilter returns the LogsQL filter that keeps the scope's tenants: `"tenant":="<t>"` for one tenant (the filter
// the VMUser routes add, operator/outputs), `"tenant":in("<t1>","<t2>")` for several; both match the whole value,
// so `acme` never matches `acme-prod`.
func (s Scope) LogsFilter() string {
	field := strconv.Quote(outputs.TenantLabel)
	if len(s.Tenants) == 1 {
		return field + ":=" + strconv.Quote(s.Tenants[0])
	}
	quoted := make([]string, len(s.Tenants))
	for i, t := range s.Tenants {
		quoted[i] = strconv.Quote(t)
	}
	return field + ":in(" + strings.Join(quoted, ",") + ")"
}

// RestrictLogsQL parses the LogsQL query q ("" means `*`) with VictoriaLogs' own parser and returns it with the
// scope's tenant filter (LogsFilter) added to the query and to every subquery (`in(...)` filters, `join` and
// `union` pipes), as VictoriaLogs adds `extra_filters`. An admin scope gets the parsed query unchanged. The error
// is a 400 denial for a query that does not parse, is longer than maxBytes, or uses a forbiddenPipes pipe.
func RestrictLogsQL(q string, s Scope, maxBytes int) (string, error) {
	if len(q) > maxBytes {
		return "", deny(http.StatusBadRequest, ReasonTooLarge, "the query is %d bytes, more than the limit of %d", len(q), maxBytes)
	}
	if strings.TrimSpace(q) == "" {
		q = "*"
	}
	pq, err := logstorage.ParseQuery(q)
	if err != nil {
		return "", deny(http.StatusBadRequest, ReasonBadQuery, "cannot parse the LogsQL query: %v", err)
	}
	if s.Admin {
		return q, nil
	}
	text := pq.String()
	for _, p := range forbiddenPipes {
		if strings.Contains(text, p) {
			return "", deny(http.StatusBadRequest, ReasonForbiddenPipe, "the %s pipe reads records outside the tenant filter", p)
		}
	}
	f, err := logstorage.ParseFilter(s.LogsFilter())
	if err != nil {
		return "", deny(http.StatusBadRequest, ReasonBadQuery, "tenant filter: %v", err)
	}
	pq.AddExtraFilters(f)
	return pq.String(), nil
}
