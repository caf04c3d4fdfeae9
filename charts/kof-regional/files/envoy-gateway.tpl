{{- /*
  Envoy Gateway values for one regional cluster (layer 2): the chart's `envoyGateway.values` <
  the annotation k0rdent.mirantis.com/kof-envoy-gateway-values.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $scalars $override)) "\\u007b\\u007b" }}
