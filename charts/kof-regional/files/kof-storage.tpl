{{- /*
  kof-storage values for one regional cluster, instantiated by Sveltos (layer 2). The line above, written by the
  kof-regional chart, sets $kof: {shared, values, annotation, self, istio, ingressMode} from its Helm values.
  The VMUser bundles are the KOF operator's (the regional admin one and the children's, propagated to the cluster;
  regionless: kept in the clusters' namespaces, so VMAuth reads every namespace): the chart renders none.
  Merge order: shared keys < computed from the cluster < kof-regional `storage` < the cluster's annotation.
  $ann (annotations) and $override (the values annotation) come from files/_annotations.tpl.
  istio.enabled is the MCS variant's, whatever the merged values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $name := dig "metadata" "name" "" .Cluster }}
{{- $ns := dig "metadata" "namespace" "" .Cluster }}
{{- if $kof.self.enabled }}
{{- $name = $kof.self.name }}
{{- $ns = $kof.self.namespace }}
{{- end }}
{{- $computed := dict
  "clusterName" $name
  "domain" (dig "k0rdent.mirantis.com/kof-regional-domain" $kof.self.domain $ann)
  "certEmail" (dig "k0rdent.mirantis.com/kof-cert-email" $kof.self.certEmail $ann)
  "vmuser" (dict "enabled" false)
  "victoriametrics" (dict "vmauth" (dict "allNamespaces" $kof.self.enabled))
  "gateway" (dict "name" (dig "k0rdent.mirantis.com/kof-gateway-name" "storage-gateway" $ann) "namespace" (dig "k0rdent.mirantis.com/kof-gateway-namespace" "kof" $ann))
}}
{{- with dig "k0rdent.mirantis.com/kof-storage-class" "" $ann }}
{{- $_ := set $computed "storageClass" . }}
{{- end }}
{{- if eq $kof.ingressMode "ingress" }}
{{- $_ := set $computed "ingress" (dict "enabled" true) }}
{{- $_ := set $computed.gateway "enabled" false }}
{{- end }}
{{- $values := mergeOverwrite (dict) (deepCopy $kof.shared) $computed (deepCopy $kof.values) $override }}
{{- $_ := set $values "istio" (dict "enabled" $kof.istio) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
