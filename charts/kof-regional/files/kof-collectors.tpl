{{- /*
  kof-collectors values for one regional cluster, instantiated by Sveltos (layer 2). The line above, written by
  the kof-regional chart, sets $kof: {shared, values, annotation, self, namespace} from its Helm values.
  The collectors write to the cluster's own VMAuth with the regional admin credentials `kof-vmuser-creds-<admin base>`:
  on a regional cluster the KOF operator propagates that Secret; in regionless mode it is read from the management
  cluster (AdminVMUser) and copied to the release namespace by kof-collectors.
  Merge order: shared keys < computed from the cluster < kof-regional `collectors` < the cluster's annotation;
  defaultCRConfig.env is the concatenation of the credential env vars, the Helm env and the annotation env, each
  name once (lists replace in merges, so it is built on purpose).
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
{{- $h := printf "kof-%s/%s" $name $ns | sha256sum | trunc 10 }}
{{- $r := regexReplaceAll "[^a-z0-9-]+" (lower $name) "-" | trimAll "-" | trunc 23 | trimAll "-" }}
{{- $base := printf "admin-%s" (ternary (printf "%s-%s" $r $h) $h (ne $r "")) }}
{{- $secretName := printf "kof-vmuser-creds-%s" $base }}
{{- $vmauth := printf "http://vmauth-cluster.%s:8427" $kof.namespace }}
{{- $kofValues := dict
  "metrics" (dict "endpoint" (printf "%s/vm/insert/0/prometheus/api/v1/write" $vmauth))
  "logs" (dict "endpoint" (printf "%s/vli/insert/opentelemetry/v1/logs" $vmauth))
  "auditLogs" (dict "endpoint" (printf "%s/vlai/insert/opentelemetry/v1/logs" $vmauth))
  "traces" (dict "endpoint" (printf "%s/vti/insert/opentelemetry/v1/traces" $vmauth))
}}
{{- if $kof.self.enabled }}
{{- $secret := index .MgmtResources "AdminVMUser" }}
{{- $_ := set $kofValues "credentials" (dict "secretName" $secretName "username" (dig "data" "username" "" $secret | b64dec) "password" (dig "data" "password" "" $secret | b64dec)) }}
{{- end }}
{{- $computed := dict "opentelemetry-kube-stack" (dict "clusterName" $name) "kof" $kofValues }}
{{- $env := list
  (dict "name" "KOF_VM_USER" "valueFrom" (dict "secretKeyRef" (dict "name" $secretName "key" "username")))
  (dict "name" "KOF_VM_PASSWORD" "valueFrom" (dict "secretKeyRef" (dict "name" $secretName "key" "password")))
}}
{{- $env = concat $env (dig "opentelemetry-kube-stack" "defaultCRConfig" "env" (list) $kof.values) (dig "opentelemetry-kube-stack" "defaultCRConfig" "env" (list) $override) }}
{{- $byName := dict }}
{{- $order := list }}
{{- range $env }}
{{- if not (hasKey $byName .name) }}
{{- $order = append $order .name }}
{{- end }}
{{- $_ := set $byName .name . }}
{{- end }}
{{- $merged := list }}
{{- range $order }}
{{- $merged = append $merged (get $byName .) }}
{{- end }}
{{- $values := mergeOverwrite (dict) (deepCopy $kof.shared) $computed (deepCopy $kof.values) $override }}
{{- $_ := set (index $values "opentelemetry-kube-stack") "defaultCRConfig" (mergeOverwrite (dict) (dig "opentelemetry-kube-stack" "defaultCRConfig" (dict) $values) (dict "env" $merged)) }}
{{- $_ := set $values "istio" (dict "enabled" $kof.shared.istio.enabled) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
