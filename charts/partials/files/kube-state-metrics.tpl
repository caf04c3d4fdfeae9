{{- /*
  kube-state-metrics values for one cluster (layer 2): KOF's custom-resource metrics and the RBAC rules they need
  (computed by kof.metricSources) under the chart's `metricSources.kubeStateMetrics.values`, under the
  kof-kube-state-metrics-values annotation.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged), "{{" written as \u007b\u007b
  so that no pass executes a value.
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $scalars $override)) "\\u007b\\u007b" }}
