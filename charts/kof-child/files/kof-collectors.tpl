{{- /*
  kof-collectors values for one child cluster, or for the management cluster in M2M/M2R, instantiated by Sveltos
  (layer 2). $kof: {shared, values, annotation, scalars, mode, self, istio, namespace, pkiPath, endpoints,
  configRef, regional} from the kof-child chart; mode is "child", "m2m" or "m2r". From the head: $name, $ns, $config
  (the ChildConfig, or in M2R the regional's ConfigMap), $regional, $ann, $scalars, $override, $childBase
  (names.ChildVMUserBase of the cluster) and $regionalVMAuth (names.IstioVMAuthService of the regional cluster).
  Write endpoints: the ConfigMap's, or (Istio) the regional's in-mesh VMAuth, or (M2M) the management cluster's own
  storage; the cluster's write endpoint annotations win over them and over the chart's values. A write endpoint
  annotation that is not an absolute http(s) URL fails this cluster's service, naming the annotation with an example.
  Credentials: the cluster's VMUser Secret, by secretKeyRef only (copied to the cluster by kof-vmuser-credentials).
  Merge order: shared keys < computed from the cluster < kof-child `collectors` < the scalar annotations < the
  kof-collectors-values annotation; defaultCRConfig.env is the concatenation of the credential env vars, PKI_PATH,
  the Helm env and the annotation env, each name once (lists replace in merges, so it is built on purpose).
  istio.enabled is the MCS variant's, whatever the merged values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $secretName := $kof.self.secretName }}
{{- if eq $kof.mode "child" }}
{{- $secretName = printf "kof-vmuser-creds-%s" $childBase }}
{{- end }}
{{- $kofValues := dict "basicAuth" (ne $kof.mode "m2m") }}
{{- range $signal, $path := $kof.endpoints }}
{{- $key := $signal | snakecase }}
{{- $annotation := printf "k0rdent.mirantis.com/kof-write-%s-endpoint" ($key | replace "_" "-") }}
{{- $url := dig (printf "write_%s_endpoint" $key) "" $config }}
{{- if $kof.istio }}
{{- $url = printf "http://%s:8427%s" $regionalVMAuth $path }}
{{- end }}
{{- if eq $kof.mode "m2m" }}
{{- $url = $path }}
{{- end }}
{{- if not (or $url (dig $annotation "" $ann)) }}
{{- fail (printf "cluster %s/%s: no %s write endpoint: %s has no write_%s_endpoint and annotation %s is not set" $ns $name $signal (ternary "the regional ConfigMap" "ChildConfig" (eq $kof.mode "m2r")) $key $annotation) }}
{{- end }}
{{- with dig $annotation "" $ann }}
{{- $u := urlParse . }}
{{- if not (and (has $u.scheme (list "http" "https")) $u.host) }}
{{- fail (printf "cluster %s/%s: annotation %s: %q is not an absolute http(s) URL; for example %s: \"https://vmauth.regional-1.example.com%s\"" $ns $name $annotation . $annotation $path) }}
{{- end }}
{{- end }}
{{- $_ := set $kofValues $signal (dict "endpoint" $url) }}
{{- end }}
{{- if $secretName }}
{{- $_ := set $kofValues "credentials" (dict "secretName" $secretName) }}
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
{{- $values := mergeOverwrite (dict) (deepCopy $kof.shared) $computed (deepCopy $kof.values) $scalars $override }}
{{- $_ := set (index $values "opentelemetry-kube-stack") "defaultCRConfig" (mergeOverwrite (dict) (dig "opentelemetry-kube-stack" "defaultCRConfig" (dict) $values) (dict "env" $merged)) }}
{{- $_ := set $values "istio" (dict "enabled" $kof.istio) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
