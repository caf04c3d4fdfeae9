// Package dashboards executes every query of KOF's dashboards (chartlib/dashboards) and every expression of KOF's
// rules (charts/kof-mothership/files/default-rules.yaml) through the Prometheus query API of a real single-node
// VictoriaMetrics (bin/victoria-metrics), after it has scraped, with KOF's `cluster` label, the real programs this
// machine can run: node_exporter (bin/node-exporter), VictoriaMetrics itself, VictoriaLogs, vmauth and the KOF
// collector distribution (bin/otelcol, its own telemetry, while it scrapes VictoriaLogs, writes to VictoriaMetrics,
// ships a log file to VictoriaLogs and traces to its debug exporter). Programs that need a Kubernetes cluster or are
// not served by the Go module proxy (kube-state-metrics, OpenCost, kof-operator, promxy, VictoriaTraces) are filled
// with synthetic series of their catalogued names (synthetic.go). Every real component marked `live` in
// chartlib/promql/catalog.yaml must serve each of its catalogued names.
package dashboards
