{{/*
kof.names.adminVMUserBase: the regional admin VMUser base of a cluster, equal to Go operator/names.AdminVMUserBase:
`admin-<readable name>-<first 10 hex of sha256("kof-<name>/<namespace>")>`, at most 40 characters.
Input: dict {cluster, namespace}. Output: a DNS label.
*/}}
{{- define "kof.names.adminVMUserBase" -}}
{{- $h := printf "kof-%s/%s" .cluster .namespace | sha256sum | trunc 10 -}}
{{- $r := regexReplaceAll "[^a-z0-9-]+" (lower .cluster) "-" | trimAll "-" | trunc 23 | trimAll "-" -}}
{{- printf "admin-%s" (ternary (printf "%s-%s" $r $h) $h (ne $r "")) -}}
{{- end -}}
