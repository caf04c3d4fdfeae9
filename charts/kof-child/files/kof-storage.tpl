{{- /*
  kof-storage values for the management cluster in M2M, instantiated by Sveltos (layer 2). $kof: {shared, values,
  annotation, scalars, self, computed} from the kof-child chart: `computed` is the M2M storage shape (VictoriaMetrics
  off: the management cluster's own VMCluster stores metrics; a local PromxyServerGroup; logs, audit logs and traces
  storage read by the management cluster's multilevel select). $scalars and $override come from files/_head.tpl.
  Merge order: shared keys < computed < kof-child `storage` < the scalar annotations < the kof-storage-values
  annotation.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.shared) (deepCopy $kof.computed) (deepCopy $kof.values) $scalars $override)) "\\u007b\\u007b" }}
