package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// storage is "KOF / Storage health": per storage cluster (regional, or the management cluster when it stores data),
// ingestion, rejected writes, errors and disk of VictoriaMetrics, VictoriaLogs, VictoriaTraces and VMAuth.
func storage() *dashboard.DashboardBuilder {
	return newBoard("storage", "KOF / Storage health",
		"Ingestion, rejected writes and disk of the storage on each regional cluster.", "vm_rows_inserted_total").
		WithRow(row("Metrics storage")).
		WithPanel(timeSeries("Rows inserted", "Rows VictoriaMetrics accepted for insertion, per cluster.", "short",
			target{`sum by (cluster) (rate(vm_rows_inserted_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Rows added to storage", "Rows written to vmstorage, per cluster.", "short",
			target{`sum by (cluster) (rate(vm_rows_added_to_storage_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Rows rejected", "Rows VictoriaMetrics ignored, per cluster and reason (too long labels, bad timestamps, limits).", "short",
			target{`sum by (cluster, reason) (rate(vm_rows_ignored_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{reason}}"})).
		WithPanel(timeSeries("HTTP request errors", "Failed HTTP requests of the storage components, per cluster and path.", "short",
			target{`sum by (cluster, path) (rate(vm_http_request_errors_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{path}}"})).
		WithPanel(timeSeries("Free disk", "Share of disk left on each storage instance: free / (free + data).", "percentunit",
			target{`min by (cluster, instance) (max by (cluster, instance) (vm_free_disk_space_bytes{cluster=~"$cluster"}) / (max by (cluster, instance) (vm_free_disk_space_bytes{cluster=~"$cluster"}) + sum by (cluster, instance) (vm_data_size_bytes{cluster=~"$cluster"})))`, "{{cluster}} {{instance}}"})).
		WithPanel(timeSeries("Active series", "Series with samples in the last hour, per cluster.", "short",
			target{`sum by (cluster) (vm_cache_entries{type="storage/hour_metric_ids", cluster=~"$cluster"})`, "{{cluster}}"})).
		WithRow(row("Logs and traces storage")).
		WithPanel(timeSeries("Log rows ingested", "Rows VictoriaLogs (logs and audit logs) ingested, per cluster.", "short",
			target{`sum by (cluster) (rate(vl_rows_ingested_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Span rows ingested", "Rows VictoriaTraces ingested, per cluster.", "short",
			target{`sum by (cluster) (rate(vt_rows_ingested_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Logs free disk", "Bytes free on the VictoriaLogs data volumes.", "bytes",
			target{`min by (cluster, instance) (vl_free_disk_space_bytes{cluster=~"$cluster"})`, "{{cluster}} {{instance}}"})).
		WithRow(row("Write endpoint (VMAuth)")).
		WithPanel(timeSeries("Requests per cluster", "Requests VMAuth proxied for known users, per cluster.", "short",
			target{`sum by (cluster) (rate(vmauth_user_requests_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Backend errors", "Requests VMAuth could not proxy to the storage behind it, per cluster and user.", "short",
			target{`sum by (cluster, username) (rate(vmauth_user_request_backend_errors_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{username}}"})).
		WithPanel(timeSeries("Unauthorized requests", "Requests VMAuth refused for unknown or missing credentials, per cluster.", "short",
			target{`sum by (cluster) (rate(vmauth_http_request_errors_total{reason="invalid_auth_token", cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"}))
}
