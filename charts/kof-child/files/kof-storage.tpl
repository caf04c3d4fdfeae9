{{- /*
  kof-storage values for the management cluster in M2M, instantiated by Sveltos (layer 2). The line above, written
  by the kof-child chart, sets $kof: {shared, values, annotation, computed}: `computed` is the M2M storage shape
  (VictoriaMetrics off: the management cluster's own VMCluster stores metrics; a local PromxyServerGroup; logs,
  audit logs and traces storage read by the management cluster's multilevel select).
  Merge order: shared keys < computed < kof-child `storage` < the cluster's annotation.
  Annotations: the cluster's (from spec.config.clusterAnnotations) < the ClusterDeployment's own.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- if hasKey $kof "Error" }}{{ fail (printf "kof-child: corrupt embedded values: %v" (get $kof "Error")) }}{{ end }}
{{- $ann := mergeOverwrite (dict) (dig "metadata" "annotations" (dict) .Cluster) (dig "metadata" "annotations" (dict) (index .MgmtResources "ClusterDeployment")) }}
{{- $override := dict }}
{{- with dig $kof.annotation "" $ann }}
{{- $override = fromYaml . }}
{{- if hasKey $override "Error" }}{{ fail (printf "cluster %s: annotation %s is not a YAML or JSON mapping: %v" (dig "metadata" "name" "" $.Cluster) $kof.annotation (get $override "Error")) }}{{ end }}
{{- end }}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.shared) (deepCopy $kof.computed) (deepCopy $kof.values) $override)) "\\u007b\\u007b" }}
