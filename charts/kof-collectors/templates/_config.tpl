{{/*
kof-collectors.kofExporters: the KOF exporters, the signal whose write endpoint each one uses and the exporter field
that takes it as a full URL (otlphttp appends /v1/<signal> to `endpoint`, so it gets `logs_endpoint` or
`traces_endpoint`). Input: none. Output: YAML map `<exporter name>: [<key under .Values.kof>, <field>]`.
*/}}
{{- define "kof-collectors.kofExporters" -}}
prometheusremotewrite: [metrics, endpoint]
otlphttp/logs: [logs, logs_endpoint]
otlphttp/auditlogs: [auditLogs, logs_endpoint]
otlphttp/traces: [traces, traces_endpoint]
{{- end -}}

{{/*
kof-collectors.computedConfig: the parts of the collector config the chart computes from values: the endpoint,
basic auth and TLS of every KOF exporter still present in defaultCRConfig.config.exporters, the `cluster` label
of every metric (prometheusremotewrite external_labels; the label KOF's alert and record rules group by), the basic
auth extension and the cluster-name processor. Input: the root context. Output: YAML of a partial collector config.
*/}}
{{- define "kof-collectors.computedConfig" -}}
{{- $v := .Values -}}
{{- $stack := index $v "opentelemetry-kube-stack" -}}
{{- $userExporters := $stack.defaultCRConfig.config.exporters | default dict -}}
{{- $exporters := dict -}}
{{- range $name, $target := include "kof-collectors.kofExporters" . | fromYaml -}}
{{- if and (hasKey $userExporters $name) (not (kindIs "invalid" (index $userExporters $name))) -}}
{{- $e := dict (index $target 1) (index $v.kof (index $target 0) "endpoint") "tls" (dict "insecure_skip_verify" $v.tls.insecureSkipVerify) -}}
{{- if $v.kof.basicAuth -}}
{{- $_ := set $e "auth" (dict "authenticator" "basicauth/kof") -}}
{{- end -}}
{{- if and (eq $name "prometheusremotewrite") $stack.clusterName -}}
{{- $_ := set $e "external_labels" (dict "cluster" $stack.clusterName) -}}
{{- end -}}
{{- $_ := set $exporters $name $e -}}
{{- end -}}
{{- end -}}
{{- $config := dict "exporters" $exporters -}}
{{- if $v.kof.basicAuth -}}
{{- $_ := set $config "extensions" (dict "basicauth/kof" (dict "client_auth" (dict "username" "${env:KOF_VM_USER}" "password" "${env:KOF_VM_PASSWORD}"))) -}}
{{- end -}}
{{- with $stack.clusterName -}}
{{- $_ := set $config "processors" (dict "resource/k8sclustername" (dict "attributes" (list (dict "action" "insert" "key" "k8s.cluster.name" "value" .)))) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
kof-collectors.config: the final config of one collector: computed parts < the collector's own config <
collector.config values < defaultCRConfig.config (deep merge, lists replaced). A component set to null in the
user's config is removed together with its pipeline references; pipelines left without receivers or exporters are
dropped; service.extensions lists exactly the defined extensions, and an extension referenced as an authenticator
must be defined (else the render fails naming it). Unreferenced `basicauth/*` extensions are dropped.
Input: dict {root, own} (own: the collector's built-in config). Output: YAML of the collector config.
*/}}
{{- define "kof-collectors.config" -}}
{{- $v := .root.Values -}}
{{- $user := deepCopy ((index $v "opentelemetry-kube-stack").defaultCRConfig.config | default dict) -}}
{{- $sections := list "receivers" "processors" "exporters" "extensions" "connectors" -}}
{{- $removed := dict -}}
{{- range $s := $sections -}}
{{- range $name, $c := (index $user $s | default dict) -}}
{{- if kindIs "invalid" $c -}}
{{- $_ := set $removed $name true -}}
{{- $_ := unset (index $user $s) $name -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name, $_ := include "kof-collectors.kofExporters" .root | fromYaml -}}
{{- if not (hasKey ($user.exporters | default dict) $name) -}}
{{- $_ := set $removed $name true -}}
{{- end -}}
{{- end -}}
{{- $computed := include "kof-collectors.computedConfig" .root | fromYaml -}}
{{- $cfg := mergeOverwrite (dict) $computed (deepCopy .own) (deepCopy .extra) $user -}}
{{- range $s := $sections -}}
{{- $section := index $cfg $s | default dict -}}
{{- range $name := keys $removed -}}
{{- $_ := unset $section $name -}}
{{- end -}}
{{- $_ := set $cfg $s $section -}}
{{- end -}}
{{- $service := $cfg.service | default dict -}}
{{- $pipelines := dict -}}
{{- range $pname, $p := ($service.pipelines | default dict) -}}
{{- if not (kindIs "invalid" $p) -}}
{{- $out := dict -}}
{{- range $role := list "receivers" "processors" "exporters" -}}
{{- $refs := list -}}
{{- range $ref := (index $p $role | default list) -}}
{{- if not (hasKey $removed $ref) -}}
{{- $section := ternary "receivers" (ternary "processors" "exporters" (eq $role "processors")) (eq $role "receivers") -}}
{{- if not (or (hasKey (index $cfg $section) $ref) (hasKey $cfg.connectors $ref)) -}}
{{- fail (printf "kof-collectors: service.pipelines.%s.%s references %q, which no %s entry defines; define it under opentelemetry-kube-stack.defaultCRConfig.config.%s or remove the reference" $pname $role $ref $section $section) -}}
{{- end -}}
{{- $refs = append $refs $ref -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out $role $refs -}}
{{- end -}}
{{- if and $out.receivers $out.exporters -}}
{{- $_ := set $pipelines $pname $out -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $auth := dict -}}
{{- range $s := list "exporters" "receivers" -}}
{{- range $name, $c := index $cfg $s -}}
{{- if kindIs "map" $c -}}
{{- with (dig "auth" "authenticator" "" $c) -}}
{{- $_ := set $auth . true -}}
{{- end -}}
{{- range $proto, $pc := (dig "protocols" (dict) $c) -}}
{{- if kindIs "map" $pc -}}
{{- with (dig "auth" "authenticator" "" $pc) -}}
{{- $_ := set $auth . true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name := keys $auth | sortAlpha -}}
{{- if not (hasKey $cfg.extensions $name) -}}
{{- fail (printf "kof-collectors: authenticator %q is referenced but not defined; define it under opentelemetry-kube-stack.defaultCRConfig.config.extensions" $name) -}}
{{- end -}}
{{- end -}}
{{- range $name := keys $cfg.extensions -}}
{{- if and (hasPrefix "basicauth" $name) (not (hasKey $auth $name)) -}}
{{- $_ := unset $cfg.extensions $name -}}
{{- end -}}
{{- end -}}
{{- $_ := set $service "pipelines" $pipelines -}}
{{- $_ := set $service "extensions" (keys $cfg.extensions | sortAlpha) -}}
{{- $_ := set $cfg "service" $service -}}
{{- range $s := $sections -}}
{{- if not (index $cfg $s) -}}
{{- $_ := unset $cfg $s -}}
{{- end -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
kof-collectors.env: the env of one collector: the chart's entries (the collector's own, PKI_PATH), then
defaultCRConfig.env; a later entry of the same name replaces an earlier one in place, so each name appears once.
Input: dict {root, own} (own: a list of env entries). Output: YAML list.
*/}}
{{- define "kof-collectors.env" -}}
{{- $v := .root.Values -}}
{{- $all := concat .own (list (dict "name" "PKI_PATH" "value" $v.kof.pkiPath)) ((index $v "opentelemetry-kube-stack").defaultCRConfig.env | default list) -}}
{{- $byName := dict -}}
{{- $order := list -}}
{{- range $e := $all -}}
{{- if not (hasKey $byName $e.name) -}}
{{- $order = append $order $e.name -}}
{{- end -}}
{{- $_ := set $byName $e.name $e -}}
{{- end -}}
{{- $out := list -}}
{{- range $n := $order -}}
{{- $out = append $out (index $byName $n) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}
