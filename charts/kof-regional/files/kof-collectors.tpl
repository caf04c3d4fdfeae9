{{- /*
  kof-collectors values for one regional cluster, or for the management cluster in regionless mode, instantiated by
  Sveltos (layer 2). $kof: {shared, values, annotation, self, namespace} from the kof-regional chart; $name, $ann,
  $scalars, $override and $adminBase (names.AdminVMUserBase of the cluster) come from the head.
  The collectors write to the cluster's own VMAuth with the regional admin credentials `kof-vmuser-creds-<admin base>`,
  by secretKeyRef only: on a regional cluster the KOF operator propagates that Secret; in regionless mode the
  kof-vmuser-credentials service copies it from the management cluster's KCM namespace.
  Merge order: shared keys < computed from the cluster < kof-regional `collectors` < the kof-collectors-values
  annotation; defaultCRConfig.env is the concatenation of the credential env vars, the Helm env and the annotation
  env, each name once (lists replace in merges, so it is built on purpose).
  istio.enabled is the MCS variant's, whatever the merged values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $secretName := printf "kof-vmuser-creds-%s" $adminBase }}
{{- $vmauth := printf "http://vmauth-cluster.%s:8427" $kof.namespace }}
{{- $kofValues := dict
  "metrics" (dict "endpoint" (printf "%s/vm/insert/0/prometheus/api/v1/write" $vmauth))
  "logs" (dict "endpoint" (printf "%s/vli/insert/opentelemetry/v1/logs" $vmauth))
  "auditLogs" (dict "endpoint" (printf "%s/vlai/insert/opentelemetry/v1/logs" $vmauth))
  "traces" (dict "endpoint" (printf "%s/vti/insert/opentelemetry/v1/traces" $vmauth))
  "credentials" (dict "secretName" $secretName)
}}
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
{{- $values := mergeOverwrite (dict) (deepCopy $kof.shared) $computed (deepCopy $kof.values) $scalars $override }}
{{- $_ := set (index $values "opentelemetry-kube-stack") "defaultCRConfig" (mergeOverwrite (dict) (dig "opentelemetry-kube-stack" "defaultCRConfig" (dict) $values) (dict "env" $merged)) }}
{{- $_ := set $values "istio" (dict "enabled" $kof.shared.istio.enabled) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
