package dashboards

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Synthetic series fill the components that cannot run on this machine: kube-state-metrics (and KOF's custom
// resource metrics of it) and OpenCost need a Kubernetes cluster, kof-operator and promxy a management cluster,
// and VictoriaTraces is not served by the Go module proxy. Their names are the catalog's; their labels are those
// the programs write. The clusters: regional-a stores data, child-a writes to it, child-silent stopped sending 15
// minutes ago, mothership is the management cluster.

// sample is one synthetic series: labels (with __name__) and its value at a time.
type sample struct {
	labels map[string]string
	value  func(at time.Time) float64
}

func constant(v float64) func(time.Time) float64 { return func(time.Time) float64 { return v } }

// counter rises by perSecond from zero at the start of the window.
func counter(start time.Time, perSecond float64) func(time.Time) float64 {
	return func(at time.Time) float64 { return at.Sub(start).Seconds() * perSecond }
}

func series(name string, value func(time.Time) float64, kv ...string) sample {
	l := map[string]string{"__name__": name}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return sample{labels: l, value: value}
}

// synthetic returns the synthetic series for a window ending at now.
func synthetic(now time.Time) []sample {
	start := now.Add(-time.Hour)
	var out []sample
	for _, c := range []string{"regional-a", "child-a"} {
		ksm := []string{"cluster", c, "job", "kube-state-metrics"}
		oc := []string{"cluster", c, "job", "opencost", "instance", "n1", "node", "n1"}
		pod := []string{"namespace", "shop", "pod", "web-1", "container", "web"}
		out = append(out,
			series("kube_node_info", constant(1), append(ksm, "node", "n1")...),
			series("kube_pod_info", constant(1), append(ksm, "namespace", "shop", "pod", "web-1", "node", "n1")...),
			series("kube_pod_owner", constant(1), append(ksm, "namespace", "shop", "pod", "web-1", "owner_kind", "ReplicaSet", "owner_name", "web-5d8f")...),
			series("kube_pod_status_phase", constant(1), append(ksm, "namespace", "shop", "pod", "web-1", "phase", "Running")...),
			series("kube_pod_status_phase", constant(1), append(ksm, "namespace", "shop", "pod", "web-2", "phase", "Pending")...),
			series("kube_persistentvolume_capacity_bytes", constant(10<<30), append(ksm, "persistentvolume", "pv-1")...),
			series("node_total_hourly_cost", constant(0.096), oc...),
			series("node_cpu_hourly_cost", constant(0.031), oc...),
			series("node_ram_hourly_cost", constant(0.004), oc...),
			series("node_gpu_hourly_cost", constant(0), oc...),
			series("pv_hourly_cost", constant(0.00014), "cluster", c, "job", "opencost", "persistentvolume", "pv-1", "volumename", "pv-1"),
			series("container_cpu_allocation", constant(0.5), append(append([]string(nil), oc...), pod...)...),
			series("container_memory_allocation_bytes", constant(512<<20), append(append([]string(nil), oc...), pod...)...),
			series("container_gpu_allocation", constant(0), append(append([]string(nil), oc...), pod...)...),
			series("pod_pvc_allocation", constant(1<<30), "cluster", c, "job", "opencost", "namespace", "shop", "pod", "web-1", "persistentvolume", "pv-1"),
		)
	}
	ksm := []string{"cluster", "regional-a", "job", "kube-state-metrics", "namespace", "kof"}
	out = append(out,
		// The cold-storage exporter last succeeded 30 minutes ago; the audit-logs exporter 3 hours ago, and its last Job failed.
		series("kube_cronjob_created", constant(float64(now.Add(-48*time.Hour).Unix())), append(ksm, "cronjob", "kof-cold-storage-exporter")...),
		series("kube_cronjob_status_last_successful_time", constant(float64(now.Add(-30*time.Minute).Unix())), append(ksm, "cronjob", "kof-cold-storage-exporter")...),
		series("kube_cronjob_created", constant(float64(now.Add(-48*time.Hour).Unix())), append(ksm, "cronjob", "kof-audit-logs-exporter")...),
		series("kube_cronjob_status_last_successful_time", constant(float64(now.Add(-3*time.Hour).Unix())), append(ksm, "cronjob", "kof-audit-logs-exporter")...),
		series("kube_job_status_failed", constant(1), append(ksm, "job_name", "kof-audit-logs-exporter-29400000")...),
		series("vt_rows_ingested_total", counter(start, 20), "cluster", "regional-a", "job", "vtinsert", "type", "opentelemetry"),
	)
	mgmt := []string{"cluster", "mothership", "job", "kube-state-metrics", "namespace", "kcm-system"}
	for _, cd := range [][3]string{{"regional-a", "regional", ""}, {"child-a", "child", "regional-a"}, {"child-silent", "child", "regional-a"}} {
		ready := 1.0
		if cd[0] == "child-silent" {
			ready = 0
		}
		out = append(out,
			series("kof_clusterdeployment_info", constant(1), append(mgmt, "clusterdeployment", cd[0], "role", cd[1], "regional", cd[2], "template", "aws-standalone-cp-1-0-0")...),
			series("kof_clusterdeployment_status_condition", constant(ready), append(mgmt, "clusterdeployment", cd[0], "type", "Ready")...),
			series("kof_capi_cluster_info", constant(1), append(mgmt, "name", cd[0], "phase", "Provisioned")...),
			series("kof_capi_cluster_status_condition", constant(ready), append(mgmt, "name", cd[0], "type", "Ready")...),
		)
	}
	for _, hr := range []string{"kof-mothership", "kof-dashboards"} {
		l := []string{"cluster", "mothership", "job", "kube-state-metrics", "namespace", "kof", "name", hr}
		out = append(out,
			series("kof_helmrelease_info", constant(1), append(l, "chart", hr, "version", "2.0.0")...),
			series("kof_helmrelease_status_condition", constant(1), append(l, "type", "Ready")...))
	}
	op := []string{"cluster", "mothership", "job", "kof-operator"}
	for _, ctrl := range []string{"clusterdeployment", "promxyservergroup"} {
		out = append(out,
			series("controller_runtime_reconcile_total", counter(start, 0.2), append(op, "controller", ctrl, "result", "success")...),
			series("controller_runtime_reconcile_total", counter(start, 0.01), append(op, "controller", ctrl, "result", "error")...),
			series("controller_runtime_reconcile_errors_total", counter(start, 0.01), append(op, "controller", ctrl)...),
			series("workqueue_depth", constant(1), append(op, "name", ctrl)...),
		)
		for _, b := range [][2]string{{"0.05", "0.1"}, {"0.5", "0.19"}, {"+Inf", "0.21"}} {
			var rate float64
			fmt.Sscanf(b[1], "%g", &rate)
			out = append(out, series("controller_runtime_reconcile_time_seconds_bucket", counter(start, rate), append(op, "controller", ctrl, "le", b[0])...))
		}
	}
	px := []string{"cluster", "mothership", "job", "promxy", "host", "vmauth.regional-a.example.com:443"}
	out = append(out,
		series("server_group_request_duration_seconds_count", counter(start, 2), append(px, "call", "query_range", "status", "success")...),
		series("server_group_request_duration_seconds_count", counter(start, 0.1), append(px, "call", "query_range", "status", "error")...),
	)
	return out
}

// silentUp is `up` of child-silent: it reported from an hour ago until 15 minutes ago.
func silentUp(now time.Time) (sample, time.Time, time.Time) {
	return series("up", constant(1), "cluster", "child-silent", "job", "node-exporter", "instance", "child-silent-node"), now.Add(-time.Hour), now.Add(-15 * time.Minute)
}

// exposition writes samples in the Prometheus text format with millisecond timestamps, one point every 30 s from
// from to to, for VictoriaMetrics' /api/v1/import/prometheus.
func exposition(samples []sample, from, to time.Time) string {
	var b strings.Builder
	for _, s := range samples {
		keys := make([]string, 0, len(s.labels))
		for k := range s.labels {
			if k != "__name__" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		pairs := make([]string, 0, len(keys))
		for _, k := range keys {
			pairs = append(pairs, fmt.Sprintf("%s=%q", k, s.labels[k]))
		}
		for at := from; !at.After(to); at = at.Add(30 * time.Second) {
			fmt.Fprintf(&b, "%s{%s} %g %d\n", s.labels["__name__"], strings.Join(pairs, ","), s.value(at), at.UnixMilli())
		}
	}
	return b.String()
}
