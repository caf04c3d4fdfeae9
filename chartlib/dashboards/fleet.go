package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// fleet is "KOF / Fleet overview": every cluster KOF knows (ClusterDeployments by role and regional, from
// kube-state-metrics on the management cluster), whether each sends data, and the data arriving per signal.
func fleet() *dashboard.DashboardBuilder {
	return newBoard("fleet", "KOF / Fleet overview",
		"Every KOF cluster, its role and regional, and the data each one sends per signal.", "up").
		WithRow(row("Clusters")).
		WithPanel(statValue("Clusters sending metrics", "Clusters with at least one scrape target reporting in the last 10 minutes.", "none",
			target{`count(max by (cluster) (present_over_time(up{cluster=~"$cluster"}[10m])))`, ""})).
		WithPanel(statValue("ClusterDeployments", "KOF ClusterDeployments (label k0rdent.mirantis.com/kof-cluster-role) on the management cluster.", "none",
			target{`count(kof_clusterdeployment_info{role=~"regional|child"})`, ""})).
		WithPanel(statValue("ClusterDeployments not Ready", "KOF ClusterDeployments whose Ready condition is not True.", "none",
			target{`count((kof_clusterdeployment_status_condition{type="Ready"} == 0) * on (namespace, clusterdeployment) group_left kof_clusterdeployment_info{role=~"regional|child"}) or vector(0)`, ""})).
		WithPanel(statValue("HelmReleases not Ready", "Flux HelmReleases, on every cluster, whose Ready condition is not True.", "none",
			target{`count(kof_helmrelease_status_condition{type="Ready", cluster=~"$cluster"} == 0) or vector(0)`, ""})).
		WithPanel(tableOf("KOF clusters", "Each KOF ClusterDeployment with its namespace, role and, for children, its regional (kube-state-metrics on the management cluster).", "none",
			target{`max by (namespace, clusterdeployment, role, regional) (kof_clusterdeployment_info{role=~"regional|child", clusterdeployment=~"$cluster"})`, ""})).
		WithPanel(tableOf("Clusters silent for 10 minutes", "Clusters that sent metrics in the last hour but none in the last 10 minutes (alert KOFClusterNoData).", "none",
			target{`max by (cluster) (present_over_time(up{cluster=~"$cluster"}[1h])) unless on (cluster) max by (cluster) (present_over_time(up{cluster=~"$cluster"}[10m]))`, ""})).
		WithRow(row("Data arriving")).
		WithPanel(timeSeries("Metric samples sent per cluster", "Metric points the collectors of each cluster sent to its storage.", "short",
			target{`sum by (cluster) (rate(otelcol_exporter_sent_metric_points_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Log records sent per cluster", "Log records (logs and audit logs) the collectors of each cluster sent.", "short",
			target{`sum by (cluster) (rate(otelcol_exporter_sent_log_records_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Spans sent per cluster", "Trace spans the collectors of each cluster sent.", "short",
			target{`sum by (cluster) (rate(otelcol_exporter_sent_spans_total{cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Scrape targets up per cluster", "Scrape targets answering, per cluster.", "none",
			target{`sum by (cluster) (up{cluster=~"$cluster"})`, "{{cluster}} up"},
			target{`sum by (cluster) (up{cluster=~"$cluster"} == bool 0)`, "{{cluster}} down"})).
		WithRow(row("Nodes")).
		WithPanel(timeSeries("CPU busy per cluster", "Share of node CPU time not idle, per cluster (node-exporter).", "percentunit",
			target{`1 - avg by (cluster) (rate(node_cpu_seconds_total{mode="idle", cluster=~"$cluster"}[$__rate_interval]))`, "{{cluster}}"})).
		WithPanel(timeSeries("Memory used per cluster", "Share of node memory in use, per cluster (node-exporter).", "percentunit",
			target{`1 - sum by (cluster) (node_memory_MemAvailable_bytes{cluster=~"$cluster"}) / sum by (cluster) (node_memory_MemTotal_bytes{cluster=~"$cluster"})`, "{{cluster}}"})).
		WithPanel(timeSeries("Nodes per cluster", "Nodes known to kube-state-metrics, per cluster.", "none",
			target{`count by (cluster) (kube_node_info{cluster=~"$cluster"})`, "{{cluster}}"})).
		WithPanel(timeSeries("Pods not running per cluster", "Pods in phase Pending, Failed or Unknown, per cluster.", "none",
			target{`sum by (cluster) (kube_pod_status_phase{phase=~"Pending|Failed|Unknown", cluster=~"$cluster"})`, "{{cluster}}"}))
}
