{{- /*
  cert-manager values for one regional cluster (layer 2): the chart's `certManager.values` over
  `config.enableGatewayAPI`, true only where Envoy Gateway brings the Gateway API CRDs (no annotation).
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $scalars $override)) "\\u007b\\u007b" }}
