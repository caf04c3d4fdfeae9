// Package exporters installs the exporter charts with the Helm SDK on a real control plane (kube-apiserver and
// etcd from bin/, internal/harness), reads the CronJob back from the API server and runs the exporter binary with
// exactly the environment its job template gives (Secret references resolved from the API server) against real
// VictoriaMetrics, VictoriaLogs and MinIO servers (internal/testproc). It also runs the audit trail end to end:
// kube-apiserver audit logs tailed by the real OpenTelemetry Collector (bin/otelcol) with the audit pipeline that
// kof-collectors renders, into VictoriaLogs, exported and checked with `kof audit verify`.
package exporters
