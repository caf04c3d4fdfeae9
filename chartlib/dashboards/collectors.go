package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// collectors is "KOF / Collector pipelines": what the OpenTelemetry collectors of each cluster accept, send, fail to
// send and hold in their queues, per exporter.
func collectors() *dashboard.DashboardBuilder {
	return newBoard("collectors", "KOF / Collector pipelines",
		"Accepted, sent and failed data and export queues of the OpenTelemetry collectors, per cluster and exporter.", "otelcol_exporter_sent_metric_points_total").
		WithRow(row("Accepted")).
		WithPanel(timeSeries("Metric points accepted", "Metric points the receivers accepted, per cluster and receiver.", "short",
			target{`sum by (cluster, receiver) (rate(otelcol_receiver_accepted_metric_points_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{receiver}}"})).
		WithPanel(timeSeries("Log records and spans accepted", "Log records and spans the receivers accepted, per cluster.", "short",
			target{`sum by (cluster) (rate(otelcol_receiver_accepted_log_records_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} log records"},
			target{`sum by (cluster) (rate(otelcol_receiver_accepted_spans_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} spans"})).
		WithPanel(timeSeries("Refused by receivers", "Data the receivers refused (usually memory limits), per cluster and receiver.", "short",
			target{`sum by (cluster, receiver) (rate(otelcol_receiver_refused_metric_points_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{receiver}} metric points"},
			target{`sum by (cluster, receiver) (rate(otelcol_receiver_refused_log_records_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{receiver}} log records"})).
		WithRow(row("Sent")).
		WithPanel(timeSeries("Metric points sent", "Metric points sent, per cluster and exporter.", "short",
			target{`sum by (cluster, exporter) (rate(otelcol_exporter_sent_metric_points_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{exporter}}"})).
		WithPanel(timeSeries("Log records sent", "Log records sent, per cluster and exporter (logs and audit logs).", "short",
			target{`sum by (cluster, exporter) (rate(otelcol_exporter_sent_log_records_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{exporter}}"})).
		WithPanel(timeSeries("Spans sent", "Spans sent, per cluster and exporter.", "short",
			target{`sum by (cluster, exporter) (rate(otelcol_exporter_sent_spans_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{exporter}}"})).
		WithRow(row("Failed and queued")).
		WithPanel(timeSeries("Send failures", "Data the exporters failed to send, per cluster and exporter; anything above zero is being retried or lost.", "short",
			target{`sum by (cluster, exporter) (rate(otelcol_exporter_send_failed_metric_points_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{exporter}} metric points"},
			target{`sum by (cluster, exporter) (rate(otelcol_exporter_send_failed_log_records_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{exporter}} log records"},
			target{`sum by (cluster, exporter) (rate(otelcol_exporter_send_failed_spans_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}} {{exporter}} spans"})).
		WithPanel(timeSeries("Export queue fill", "Sending queue size over capacity, per cluster and exporter; at 1 new data is dropped.", "percentunit",
			target{`max by (cluster, exporter) (otelcol_exporter_queue_size{cluster=~"$cluster"} / otelcol_exporter_queue_capacity{cluster=~"$cluster"})`, "{{cluster}} {{exporter}}"}))
}
