{{- /*
  Shared head of every layer-2 template of this chart; the chart writes it after the $kof line and before the
  service's own template. It checks $kof, reads the cluster's annotations into $ann (the cluster's own, copied from
  spec.config.clusterAnnotations, < the ClusterDeployment's metadata annotations: docs/contract.md) and parses the
  service's values annotation ($kof.annotation, "" for none) into $override. Missing annotations never fail; a value
  that is not a YAML or JSON mapping fails this cluster alone, naming the annotation.
*/}}
{{- if hasKey $kof "Error" }}{{ fail (printf "kof: corrupt embedded values: %v" (get $kof "Error")) }}{{ end }}
{{- $ann := mergeOverwrite (dict) (dig "metadata" "annotations" (dict) .Cluster) (dig "metadata" "annotations" (dict) (index .MgmtResources "ClusterDeployment")) }}
{{- $override := dict }}
{{- with dig $kof.annotation "" $ann }}
{{- $override = fromYaml . }}
{{- if hasKey $override "Error" }}{{ fail (printf "cluster %s/%s: annotation %s is not a YAML or JSON mapping: %v" (dig "metadata" "namespace" "" $.Cluster) (dig "metadata" "name" "" $.Cluster) $kof.annotation (get $override "Error")) }}{{ end }}
{{- end }}
