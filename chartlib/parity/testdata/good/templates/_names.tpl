{{/* kof.names.childVMUserBase: dict {cluster, namespace} -> `<readable cluster, ≤29>-<sha256(identity)[:10]>`. */}}
{{- define "kof.names.childVMUserBase" -}}
{{- $hash := printf "kof-cluster-config-%s/%s" .cluster .namespace | sha256sum | trunc 10 -}}
{{- $readable := regexReplaceAll "[^a-z0-9-]+" (lower .cluster) "-" | trimAll "-" | trunc 29 | trimAll "-" -}}
{{- if $readable }}{{ $readable }}-{{ end }}{{ $hash -}}
{{- end -}}

{{/* kof.names.adler32: string -> decimal Adler-32 of it. */}}
{{- define "kof.names.adler32" -}}
{{- adler32sum . -}}
{{- end -}}
