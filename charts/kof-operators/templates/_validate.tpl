{{/*
kof-operators.validate: fails the render when an operator of `operators` has no block or no `catalog` entry.
Input: the root context. Output: nothing.
*/}}
{{- define "kof-operators.validate" -}}
{{- range .Values.operators -}}
{{- if not (hasKey $.Values .) -}}
{{- fail (printf "operators: %q has no block; add `%s: {enabled: ...}` or remove it from operators" . .) -}}
{{- end -}}
{{- if and (index $.Values .).enabled (not (hasKey $.Values.catalog .)) -}}
{{- fail (printf "%s.enabled is true but catalog.%s is missing; add its repository, chart and version to catalog" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
