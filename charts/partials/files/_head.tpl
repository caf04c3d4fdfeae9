{{- /*
  Shared head of every KOF layer-2 template (charts/partials): $name, $ns (the cluster as KOF names it), $regional
  (where its data goes), $ann (its annotations; the ClusterDeployment's metadata wins), $scalars (what its scalar
  annotations set, from $kof.scalars) and $override (its values annotation, $kof.annotation, parsed). Each template
  merges shared keys < computed < chart values < $scalars < $override (docs/values-contract.md). A values
  annotation that is not a mapping fails this cluster alone, naming it.
*/}}
{{- $name := dig "metadata" "name" "" .Cluster }}
{{- $ns := dig "metadata" "namespace" "" .Cluster }}
{{- if dig "self" "enabled" false $kof }}{{ $name = $kof.self.name }}{{ $ns = $kof.self.namespace }}{{ end }}
{{- $config := dict }}
{{- with dig "configRef" "" $kof }}{{ $config = dig "data" (dict) (index $.MgmtResources .) }}{{ end }}
{{- $regional := dig "regional_cluster_name" (dig "regional" "" $kof | default $name) $config }}
{{- $ann := mergeOverwrite (dict) (dig "metadata" "annotations" (dict) .Cluster) (dig "metadata" "annotations" (dict) (index .MgmtResources "ClusterDeployment")) }}
{{- $scalars := dict }}
{{- range $key, $path := dig "scalars" (dict) $kof }}
{{- with dig $key "" $ann }}
{{- $leaf := dict (last (splitList "." $path)) . }}
{{- range reverse (initial (splitList "." $path)) }}{{ $leaf = dict . $leaf }}{{ end }}
{{- $scalars = mergeOverwrite $scalars $leaf }}
{{- end }}
{{- end }}
{{- $override := dict }}
{{- with dig (dig "annotation" "" $kof) "" $ann }}
{{- $override = fromYaml . }}
{{- if hasKey $override "Error" }}{{ fail (printf "cluster %s/%s: annotation %s is not a YAML or JSON mapping: %v" (dig "metadata" "namespace" "" $.Cluster) (dig "metadata" "name" "" $.Cluster) $kof.annotation (get $override "Error")) }}{{ end }}
{{- end }}
