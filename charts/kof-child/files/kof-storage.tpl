{{- /*
  kof-storage values for the management cluster in M2M, instantiated by Sveltos (layer 2). The line above, written
  by the kof-child chart, sets $kof: {shared, values, annotation, computed}: `computed` is the M2M storage shape
  (VictoriaMetrics off: the management cluster's own VMCluster stores metrics; a local PromxyServerGroup; logs,
  audit logs and traces storage read by the management cluster's multilevel select).
  Merge order: shared keys < computed < kof-child `storage` < the cluster's annotation.
  $ann (annotations) and $override (the values annotation) come from files/_annotations.tpl.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.shared) (deepCopy $kof.computed) (deepCopy $kof.values) $override)) "\\u007b\\u007b" }}
