{{/*
kof-regional.validate: cross-field checks; each failure names both keys and the fix. Input: the root context.
Output: nothing (or a render failure).
*/}}
{{- define "kof-regional.validate" -}}
{{- if not (has .Values.ingressMode (list "gateway" "ingress")) -}}
{{- fail (printf "kof-regional: ingressMode is %q; use gateway (Envoy Gateway) or ingress (ingress-nginx)" .Values.ingressMode) -}}
{{- end -}}
{{- if and .Values.regionless.enabled (not .Values.regionless.clusterName) -}}
{{- fail "kof-regional: regionless.enabled is true but regionless.clusterName is empty; set regionless.clusterName to the management cluster's name" -}}
{{- end -}}
{{- if and (eq .Values.ingressMode "ingress") (hasKey .Values.storage "gateway") (dig "gateway" "enabled" false .Values.storage) -}}
{{- fail "kof-regional: ingressMode is ingress but storage.gateway.enabled is true; remove storage.gateway.enabled or set ingressMode: gateway" -}}
{{- end -}}
{{- end -}}
