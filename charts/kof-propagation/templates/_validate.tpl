{{/*
kof-propagation.validate: fails the render when an entry of `propagation.data` is not a Kubernetes object, naming
the entry's index and the missing field. Input: the root context. Output: nothing.
*/}}
{{- define "kof-propagation.validate" -}}
{{- range $i, $obj := .Values.propagation.data -}}
{{- if not (kindIs "map" $obj) -}}
{{- fail (printf "propagation.data[%d]: not an object; give a Kubernetes object with apiVersion, kind and metadata.name" $i) -}}
{{- end -}}
{{- range $field := list "apiVersion" "kind" -}}
{{- if not (index $obj $field) -}}
{{- fail (printf "propagation.data[%d].%s: missing; every object needs apiVersion, kind and metadata.name" $i $field) -}}
{{- end -}}
{{- end -}}
{{- if not (dig "metadata" "name" "" $obj) -}}
{{- fail (printf "propagation.data[%d].metadata.name: missing; every object needs apiVersion, kind and metadata.name" $i) -}}
{{- end -}}
{{- end -}}
{{- end -}}
