{{/*
kof-collectors.validate: cross-field checks; each failure names both keys and the fix. Input: the root context.
Output: nothing (or a render failure). KOF_VM_PASSWORD is accepted only by reference (docs/security.md).
*/}}
{{- define "kof-collectors.validate" -}}
{{- if and .Values.kcm.monitoring (not .Values.collectors.cluster.enabled) -}}
{{- fail "kof-collectors: kcm.monitoring is true but collectors.cluster.enabled is false; the KCM targets are scraped by the cluster collector, so enable it or set kcm.monitoring: false" -}}
{{- end -}}
{{- if and .Values.instrumentation.enabled (not .Values.collectors.node.enabled) -}}
{{- fail "kof-collectors: instrumentation.enabled is true but collectors.node.enabled is false; applications send traces to the node collector, so enable it or set instrumentation.enabled: false" -}}
{{- end -}}
{{- range $e := (index .Values "opentelemetry-kube-stack").defaultCRConfig.env -}}
{{- if not (and (kindIs "map" $e) $e.name) -}}
{{- fail (printf "kof-collectors: opentelemetry-kube-stack.defaultCRConfig.env has an entry without a name (%v); every entry needs `name` and `value` or `valueFrom`" $e) -}}
{{- end -}}
{{- if and (eq $e.name "KOF_VM_PASSWORD") (hasKey $e "value") -}}
{{- fail "kof-collectors: opentelemetry-kube-stack.defaultCRConfig.env sets KOF_VM_PASSWORD as a literal value; secrets go by reference only: use valueFrom.secretKeyRef naming kof.credentials.secretName" -}}
{{- end -}}
{{- end -}}
{{- end -}}
