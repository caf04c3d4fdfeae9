{{- /*
  kof-storage values for one regional cluster, or for the management cluster in regionless mode, instantiated by
  Sveltos (layer 2). $kof: {shared, values, annotation, scalars, self, istio, ingressMode} from the kof-regional
  chart; $name, $ann, $scalars and $override come from files/_head.tpl.
  The VMUser bundles are the KOF operator's (the regional admin one and the children's, propagated to the cluster;
  regionless: kept in the clusters' namespaces, so VMAuth reads every namespace): the chart renders none.
  Regionless: no VMAlert (the management cluster's rules are kof-mothership's, which runs the VMAlert there).
  Merge order: shared keys < computed from the cluster < kof-regional `storage` < the scalar annotations
  (kof-regional-domain, kof-cert-email, kof-storage-class, kof-gateway-name, kof-gateway-namespace) < the
  kof-storage-values annotation. istio.enabled is the MCS variant's, whatever the merged values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $computed := dict
  "clusterName" $name
  "domain" $kof.self.domain
  "certEmail" $kof.self.certEmail
  "vmuser" (dict "enabled" false)
  "victoriametrics" (dict "vmauth" (dict "allNamespaces" $kof.self.enabled))
}}
{{- if $kof.self.enabled }}
{{- $_ := set $computed.victoriametrics "vmalert" (dict "enabled" false) }}
{{- end }}
{{- if eq $kof.ingressMode "ingress" }}
{{- $_ := set $computed "ingress" (dict "enabled" true) }}
{{- $_ := set $computed "gateway" (dict "enabled" false) }}
{{- end }}
{{- $values := mergeOverwrite (dict) (deepCopy $kof.shared) $computed (deepCopy $kof.values) $scalars $override }}
{{- $_ := set $values "istio" (dict "enabled" $kof.istio) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
