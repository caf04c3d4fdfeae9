// Package exporters installs the exporter charts with the Helm SDK on a real control plane (kube-apiserver and
// etcd from bin/, internal/harness), reads the CronJob back from the API server and runs the exporter binary with
// exactly the environment its job template gives (Secret references resolved from the API server) against real
// VictoriaMetrics, VictoriaLogs and MinIO servers (operator/testserver).
package exporters
