{{/*
kof.names.childVMUserBase: the base of a child cluster's VMUser bundle, equal to Go operator/names.ChildVMUserBase:
`<readable name>-<first 10 hex of sha256("kof-cluster-config-<name>/<namespace>")>`, the readable part cut so the
base stays within 40 characters. Input: dict {cluster, namespace}. Output: a DNS label.
*/}}
{{- define "kof.names.childVMUserBase" -}}
{{- $h := printf "kof-cluster-config-%s/%s" .cluster .namespace | sha256sum | trunc 10 -}}
{{- $r := regexReplaceAll "[^a-z0-9-]+" (lower .cluster) "-" | trimAll "-" | trunc 29 | trimAll "-" -}}
{{- ternary (printf "%s-%s" $r $h) $h (ne $r "") -}}
{{- end -}}
