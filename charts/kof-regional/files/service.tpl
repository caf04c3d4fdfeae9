{{- /*
  Values of a third-party service (cert-manager, Envoy Gateway, ingress-nginx, kof-operators, the VictoriaMetrics
  operator) for one cluster, instantiated by Sveltos (layer 2). The line above, written by the chart, sets
  $kof: {values, annotation}. Merge order: the chart's Helm values for the service < the cluster's annotation.
  Annotations: the cluster's (from spec.config.clusterAnnotations) < the ClusterDeployment's own.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- if hasKey $kof "Error" }}{{ fail (printf "kof: corrupt embedded values: %v" (get $kof "Error")) }}{{ end }}
{{- $ann := mergeOverwrite (dict) (dig "metadata" "annotations" (dict) .Cluster) (dig "metadata" "annotations" (dict) (index .MgmtResources "ClusterDeployment")) }}
{{- $override := dict }}
{{- with dig $kof.annotation "" $ann }}
{{- $override = fromYaml . }}
{{- if hasKey $override "Error" }}{{ fail (printf "cluster %s/%s: annotation %s is not a YAML or JSON mapping: %v" (dig "metadata" "namespace" "" $.Cluster) (dig "metadata" "name" "" $.Cluster) $kof.annotation (get $override "Error")) }}{{ end }}
{{- end }}
{{- regexReplaceAll "\\{\\{" (toJson (mergeOverwrite (dict) (deepCopy $kof.values) $override)) "\\u007b\\u007b" }}
