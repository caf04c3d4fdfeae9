{{/* Copied from charts/partials/templates/_kof_mode.tpl by `make generate`; edit the source, not this copy. */}}
{{/*
The storage and mesh mode every chart that builds MultiClusterServices or the management cluster's releases reads.
*/}}

{{/*
kof.istio: whether Istio mode is on: istio.enabled, or the label `istio-injection=enabled` on the release namespace
(read with lookup; offline renders see no namespace). Input: the root context. Output: "true" or "".
*/}}
{{- define "kof.istio" -}}
{{- $ns := lookup "v1" "Namespace" "" .Release.Namespace -}}
{{- if or .Values.istio.enabled (eq (dig "metadata" "labels" "istio-injection" "" ($ns | default dict)) "enabled") -}}
true
{{- end -}}
{{- end -}}
