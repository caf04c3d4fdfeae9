{{- /*
  prometheus-operator CRDs values for one child cluster (layer 2): the chart's `prometheusOperatorCrds.values` as
  they are (no annotation).
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $override)) "\\u007b\\u007b" }}
