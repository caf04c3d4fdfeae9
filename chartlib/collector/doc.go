// Package collector is the OpenTelemetry Collector side of KOF's charts: which components the collector configs
// the charts render use (Usage), the OpenTelemetry Collector Builder manifest of the KOF collector distribution
// made from them (Manifest, written to ci/otelcol/manifest.yaml by `kof collector manifest`), and `otelcol
// validate` of a rendered config against that distribution (Validator).
//
// Sources: the builder's manifest format (go.opentelemetry.io/collector/cmd/builder, README "Configuration"),
// the collector's component identifiers `type[/name]` (https://opentelemetry.io/docs/collector/configuration/),
// and docs/collector.md for how KOF builds and uses the distribution.
package collector
