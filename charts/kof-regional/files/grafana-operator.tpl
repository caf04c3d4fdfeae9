{{- /*
  grafana-operator values for one regional cluster with `grafana.enabled` (layer 2): the chart's `grafana.values`.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $scalars $override)) "\\u007b\\u007b" }}
