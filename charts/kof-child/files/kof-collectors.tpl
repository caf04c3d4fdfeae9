{{- /*
  kof-collectors values for one child cluster, or for the management cluster in M2M/M2R, instantiated by Sveltos
  (layer 2). The line above, written by the kof-child chart, sets $kof: {shared, values, annotation, mode, self,
  istio, namespace, pkiPath, endpoints} from its Helm values; mode is "child", "m2m" or "m2r".
  Write endpoints: an endpoint annotation of the cluster, else (Istio) the regional's in-mesh VMAuth, else the
  child's ChildConfig (M2R: the regional's ConfigMap), else (M2M) the management cluster's own storage.
  Credentials: the cluster's VMUser Secret (ChildVMUser), copied to the cluster by kof-collectors.
  Merge order: shared keys < computed from the cluster < kof-child `collectors` < the cluster's annotation;
  defaultCRConfig.env is the concatenation of the credential env vars, PKI_PATH, the Helm env and the annotation env,
  each name once (lists replace in merges, so it is built on purpose).
  $ann (annotations) and $override (the values annotation) come from files/_annotations.tpl.
  istio.enabled is the MCS variant's, whatever the merged values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $name := dig "metadata" "name" "" .Cluster }}
{{- $ns := dig "metadata" "namespace" "" .Cluster }}
{{- $secretName := "" }}
{{- if eq $kof.mode "child" }}
{{- $h := printf "kof-cluster-config-%s/%s" $name $ns | sha256sum | trunc 10 }}
{{- $r := regexReplaceAll "[^a-z0-9-]+" (lower $name) "-" | trimAll "-" | trunc 29 | trimAll "-" }}
{{- $secretName = printf "kof-vmuser-creds-%s" (ternary (printf "%s-%s" $r $h) $h (ne $r "")) }}
{{- else }}
{{- $name = $kof.self.name }}
{{- $ns = $kof.self.namespace }}
{{- $secretName = $kof.self.secretName }}
{{- end }}
{{- $config := dig "data" (dict) (index .MgmtResources (ternary "RegionalConfig" "ChildConfig" (eq $kof.mode "m2r"))) }}
{{- $regional := dig "regional_cluster_name" (ternary $kof.self.regional $kof.shared.regionless.clusterName (eq $kof.mode "m2r")) $config }}
{{- $kofValues := dict "basicAuth" (ne $kof.mode "m2m") }}
{{- range $signal, $path := $kof.endpoints }}
{{- $key := $signal | snakecase }}
{{- $url := dig (printf "write_%s_endpoint" $key) "" $config }}
{{- if $kof.istio }}
{{- $url = printf "http://%s-vmauth:8427%s" $regional $path }}
{{- end }}
{{- if eq $kof.mode "m2m" }}
{{- $url = $path }}
{{- end }}
{{- $url = dig (printf "k0rdent.mirantis.com/kof-write-%s-endpoint" ($key | replace "_" "-")) $url $ann }}
{{- if not $url }}
{{- fail (printf "cluster %s/%s: no %s write endpoint: ChildConfig has no write_%s_endpoint and annotation k0rdent.mirantis.com/kof-write-%s-endpoint is not set" $ns $name $signal $key ($key | replace "_" "-")) }}
{{- end }}
{{- $_ := set $kofValues $signal (dict "endpoint" $url) }}
{{- end }}
{{- $secret := index .MgmtResources "ChildVMUser" }}
{{- if $secretName }}
{{- $_ := set $kofValues "credentials" (dict "secretName" $secretName "username" (dig "data" "username" "" $secret | b64dec) "password" (dig "data" "password" "" $secret | b64dec)) }}
{{- end }}
{{- $computed := dict "opentelemetry-kube-stack" (dict "clusterName" $name) "kof" $kofValues }}
{{- $env := list }}
{{- if $secretName }}
{{- $env = list
  (dict "name" "KOF_VM_USER" "valueFrom" (dict "secretKeyRef" (dict "name" $secretName "key" "username")))
  (dict "name" "KOF_VM_PASSWORD" "valueFrom" (dict "secretKeyRef" (dict "name" $secretName "key" "password")))
}}
{{- end }}
{{- $env = append $env (dict "name" "PKI_PATH" "value" $kof.pkiPath) }}
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
{{- $_ := set $values "istio" (dict "enabled" $kof.istio) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
