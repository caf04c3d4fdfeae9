{{- /*
  prometheus-node-exporter values for one cluster (layer 2): the chart's `metricSources.nodeExporter.values` under
  the kof-node-exporter-values annotation.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged), "{{" written as \u007b\u007b
  so that no pass executes a value.
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $scalars $override)) "\\u007b\\u007b" }}
