// Package datapath proves the data path of KOF on one machine with the real programs: the collector config that
// `kof render` produces for a cluster runs in the KOF collector distribution (bin/otelcol) and its metrics, logs and
// audit logs reach a real vmauth, configured from the VMUsers KOF's operator writes (operator/outputs, translated by
// internal/vmauth as the VictoriaMetrics operator does), and behind it real VictoriaMetrics and VictoriaLogs.
//
// Only what needs a kubelet, a node or a cluster network is replaced (see docs/collector.md, "Data path test"):
// the kubeletstats and control-plane scrape receivers give way to a scrape of the collector's own metrics, the host
// metrics read this machine, the file logs read files under a scratch node folder, listeners bind to loopback, and
// a loopback proxy stands in for cluster DNS and the ingress (it terminates TLS for the public vmauth host with a test
// CA and serves the single-node VictoriaMetrics under the cluster paths `/insert/<tenant>/...`). Exporters,
// authentication, processors and pipelines run exactly as rendered.
package datapath
