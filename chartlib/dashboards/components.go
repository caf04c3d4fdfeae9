package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// components is "KOF / Components": KOF's own programs: kof-operator reconciles, promxy's server groups, and the
// cold-storage and audit-logs exporters' windows (their CronJobs, from kube-state-metrics).
func components() *dashboard.DashboardBuilder {
	return newBoard("components", "KOF / Components",
		"kof-operator reconcile errors and durations, promxy per server group, and the export windows of KOF's exporters.", "up").
		WithRow(row("kof-operator")).
		WithPanel(timeSeries("Reconcile errors", "Reconciles that returned an error, per controller.", "short",
			target{`sum by (controller) (rate(controller_runtime_reconcile_errors_total{job="kof-operator"}[$__rate_interval]))`, "{{controller}}"})).
		WithPanel(timeSeries("Reconcile duration p90", "90th percentile of reconcile time, per controller.", "s",
			target{`histogram_quantile(0.9, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{job="kof-operator"}[$__rate_interval])))`, "{{controller}}"})).
		WithPanel(timeSeries("Reconciles by result", "Reconciles per controller and result (success, error, requeue).", "short",
			target{`sum by (controller, result) (rate(controller_runtime_reconcile_total{job="kof-operator"}[$__rate_interval]))`, "{{controller}} {{result}}"})).
		WithPanel(timeSeries("Work queue depth", "Items waiting in each controller's queue.", "short",
			target{`max by (name) (workqueue_depth{job="kof-operator"})`, "{{name}}"})).
		WithRow(row("promxy")).
		WithPanel(timeSeries("Server group errors", "Failed promxy calls to each server group host (a regional's storage).", "short",
			target{`sum by (host) (rate(server_group_request_duration_seconds_count{job="promxy", status!="success"}[$__rate_interval]))`, "{{host}}"})).
		WithPanel(timeSeries("Server group calls", "promxy calls to each server group host, per call type.", "short",
			target{`sum by (host, call) (rate(server_group_request_duration_seconds_count{job="promxy"}[$__rate_interval]))`, "{{host}} {{call}}"})).
		WithRow(row("Exporters")).
		WithPanel(tableOf("Hours since the last export window", "Hours since each cold-storage or audit-logs exporter CronJob last succeeded (its creation, when it never did), per cluster.", "h",
			target{`(time() - max by (cluster, namespace, cronjob) (kube_cronjob_status_last_successful_time{cronjob=~".*(cold-storage|audit-logs)-exporter.*", cluster=~"$cluster"} or kube_cronjob_created{cronjob=~".*(cold-storage|audit-logs)-exporter.*", cluster=~"$cluster"})) / 3600`, ""})).
		WithPanel(timeSeries("Failed export jobs", "Exporter Jobs with failed pods, per cluster.", "short",
			target{`sum by (cluster, job_name) (kube_job_status_failed{job_name=~".*(cold-storage|audit-logs)-exporter.*", cluster=~"$cluster"})`, "{{cluster}} {{job_name}}"}))
}
