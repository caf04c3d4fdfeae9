{{- /*
  kof-collectors values for one regional cluster, instantiated by Sveltos (layer 2). The line above, written by
  the kof-regional chart, sets $kof: {shared, values, annotation, self, namespace} from its Helm values.
  The collectors write to the cluster's own VMAuth with the regional admin credentials.
  Merge order: shared keys < computed from the cluster < kof-regional `collectors` < the cluster's annotation;
  defaultCRConfig.env is the concatenation of the credential env vars, the Helm env and the annotation env, each
  name once (lists replace in merges, so it is built on purpose).
  Annotations: the cluster's (from spec.config.clusterAnnotations) < the ClusterDeployment's own.
  istio.enabled is the MCS variant's, whatever the merged values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- if hasKey $kof "Error" }}{{ fail (printf "kof-regional: corrupt embedded values: %v" (get $kof "Error")) }}{{ end }}
{{- $ann := mergeOverwrite (dict) (dig "metadata" "annotations" (dict) .Cluster) (dig "metadata" "annotations" (dict) (index .MgmtResources "ClusterDeployment")) }}
{{- $name := dig "metadata" "name" "" .Cluster }}
{{- $ns := dig "metadata" "namespace" "" .Cluster }}
{{- if $kof.self.enabled }}
{{- $name = $kof.self.name }}
{{- $ns = $kof.self.namespace }}
{{- end }}
{{- $h := printf "kof-%s/%s" $name $ns | sha256sum | trunc 10 }}
{{- $r := regexReplaceAll "[^a-z0-9-]+" (lower $name) "-" | trimAll "-" | trunc 23 | trimAll "-" }}
{{- $base := printf "admin-%s" (ternary (printf "%s-%s" $r $h) $h (ne $r "")) }}
{{- $secretName := printf "vmuser-kof-vmuser-%s" $base }}
{{- if dig "data" "password" "" (index .MgmtResources "AdminVMUser") }}
{{- $secretName = printf "kof-vmuser-creds-%s" $base }}
{{- end }}
{{- $vmauth := printf "http://vmauth-cluster.%s:8427" $kof.namespace }}
{{- $computed := dict
  "opentelemetry-kube-stack" (dict "clusterName" $name)
  "kof" (dict
    "metrics" (dict "endpoint" (printf "%s/vm/insert/0/prometheus/api/v1/write" $vmauth))
    "logs" (dict "endpoint" (printf "%s/vli/insert/opentelemetry/v1/logs" $vmauth))
    "auditLogs" (dict "endpoint" (printf "%s/vlai/insert/opentelemetry/v1/logs" $vmauth))
    "traces" (dict "endpoint" (printf "%s/vti/insert/opentelemetry/v1/traces" $vmauth)))
}}
{{- $override := dict }}
{{- with dig $kof.annotation "" $ann }}
{{- $override = fromYaml . }}
{{- if hasKey $override "Error" }}{{ fail (printf "cluster %s/%s: annotation %s is not a YAML or JSON mapping: %v" $ns $name $kof.annotation (get $override "Error")) }}{{ end }}
{{- end }}
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
