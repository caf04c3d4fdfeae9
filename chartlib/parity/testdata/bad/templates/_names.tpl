{{/* kof.names.childVMUserBase with an off-by-one cut (30 instead of 29) and no hash fallback. */}}
{{- define "kof.names.childVMUserBase" -}}
{{- $hash := printf "kof-cluster-config-%s/%s" .cluster .namespace | sha256sum | trunc 10 -}}
{{- $readable := regexReplaceAll "[^a-z0-9-]+" (lower .cluster) "-" | trimAll "-" | trunc 30 | trimAll "-" -}}
{{- printf "%s-%s" $readable $hash -}}
{{- end -}}

{{/* kof.names.childVMUserBaseExpr: planted defect, the layer-2 expression cuts the readable part at 30. */}}
{{- define "kof.names.childVMUserBaseExpr" -}}
{{- printf `(list (regexReplaceAll "[^a-z0-9-]+" (lower %s) "-" | trimAll "-" | trunc 30 | trimAll "-") (printf "kof-cluster-config-%%s/%%s" %s %s | sha256sum | trunc 10) | compact | join "-")` .name .name .namespace -}}
{{- end -}}
