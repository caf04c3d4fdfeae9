{{/*
kof-mothership.validate: fails the render when values contradict each other, each message naming both keys:
grafana.enabled or victoriametrics.vmalert.enabled without promxy.enabled (their datasource); a
serviceTemplates.thirdParty entry missing from catalog; an ACME certManager.clusterIssuer without certManager.clusterIssuer.email
or regionless.certEmail. Input: the root context. Output: nothing.
*/}}
{{- define "kof-mothership.validate" -}}
{{- if and .Values.grafana.enabled (not .Values.promxy.enabled) -}}
{{- fail "grafana.enabled is true but promxy.enabled is false: Grafana's metrics datasource is promxy; enable promxy or disable grafana" -}}
{{- end -}}
{{- if and .Values.victoriametrics.vmalert.enabled (not .Values.promxy.enabled) -}}
{{- fail "victoriametrics.vmalert.enabled is true but promxy.enabled is false: VMAlert queries promxy; enable promxy or disable victoriametrics.vmalert" -}}
{{- end -}}
{{- $issuer := .Values.certManager.clusterIssuer -}}
{{- if and $issuer.enabled (not .Values.tls.selfSigned) (not (include "kof-mothership.issuerEmail" .)) -}}
{{- fail "certManager.clusterIssuer.enabled is true with ACME (tls.selfSigned false) but certManager.clusterIssuer.email and regionless.certEmail are both empty; set one of them or set tls.selfSigned" -}}
{{- end -}}
{{- if .Values.serviceTemplates.enabled -}}
{{- range .Values.serviceTemplates.thirdParty -}}
{{- if not (hasKey $.Values.catalog .) -}}
{{- fail (printf "serviceTemplates.thirdParty lists %q but catalog.%s is missing; add its repository, chart and version to catalog" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
