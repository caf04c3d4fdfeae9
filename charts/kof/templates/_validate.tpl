{{/*
kof.validate: fails the render when the values contradict each other; renders nothing otherwise.
Checks: at most one storage mode of regionless, M2M and M2R (docs/values-contract.md); every name in
`global.components` has a component block. Input: the root context.
*/}}
{{- define "kof.validate" -}}
{{- $modes := list -}}
{{- if .Values.regionless.enabled -}}
{{- $modes = append $modes "regionless.enabled" -}}
{{- end -}}
{{- $fm := dig "values" "fromManagement" dict (index .Values "kof-child") -}}
{{- if dig "toManagementCluster" "enabled" false $fm -}}
{{- $modes = append $modes "kof-child.values.fromManagement.toManagementCluster.enabled" -}}
{{- end -}}
{{- if dig "toRegionalCluster" "name" "" $fm -}}
{{- $modes = append $modes "kof-child.values.fromManagement.toRegionalCluster.name" -}}
{{- end -}}
{{- if gt (len $modes) 1 -}}
{{- fail (printf "storage modes conflict: %s are set together; keep at most one of regionless.enabled, kof-child.values.fromManagement.toManagementCluster.enabled (M2M) and kof-child.values.fromManagement.toRegionalCluster.name (M2R)" (join " and " $modes)) -}}
{{- end -}}
{{- range .Values.global.components -}}
{{- if not (hasKey $.Values .) -}}
{{- fail (printf "global.components: %q has no component block; add `%s: {enabled: ...}` or remove it from global.components" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
