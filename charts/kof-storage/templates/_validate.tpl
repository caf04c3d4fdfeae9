{{/*
kof-storage.validate: cross-field checks; each failure names both keys and the fix. Input: the root context.
Output: nothing (or a render failure).
*/}}
{{- define "kof-storage.validate" -}}
{{- if and .Values.ingress.enabled .Values.gateway.enabled (not .Values.istio.enabled) -}}
{{- fail "kof-storage: ingress.enabled and gateway.enabled are both true; set gateway.enabled: false to publish VMAuth through an Ingress, or ingress.enabled: false to keep the Gateway" -}}
{{- end -}}
{{- if and .Values.promxy.enabled (not .Values.victoriametrics.enabled) (not .Values.promxy.targets) -}}
{{- fail "kof-storage: promxy.enabled is true while victoriametrics.enabled is false and promxy.targets is empty; set promxy.targets to the vmselect that stores the metrics" -}}
{{- end -}}
{{- if and .Values.multilevel.enabled (not (index .Values "victoria-logs-cluster" "enabled")) (not (index .Values "victoria-traces-cluster" "enabled")) (not .Values.victoriametrics.vlcluster_audit.enabled) -}}
{{- fail "kof-storage: multilevel.enabled is true but victoria-logs-cluster.enabled, victoria-traces-cluster.enabled and victoriametrics.vlcluster_audit.enabled are all false; enable a storage or set multilevel.enabled: false" -}}
{{- end -}}
{{- end -}}
