{{- /*
  kof-operators values for one child cluster (layer 2): the shared keys and the chart's `operators.values`
  < the annotation k0rdent.mirantis.com/kof-operators-values.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $override)) "\\u007b\\u007b" }}
