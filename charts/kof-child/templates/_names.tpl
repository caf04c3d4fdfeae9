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

{{/*
kof.names.composedTemplate: a Sveltos name template (text, evaluated per cluster) equal to Go operator/names
composed(prefix, name): `<prefix><name>` when that is a valid DNS label of at most 63 characters, else
`<prefix><readable name>-<first 10 hex of sha256(prefix + name)>`, e.g. names.ChildConfigMap, names.VMRulesConfigMap.
Input: dict {prefix, nameExpr} (nameExpr: the template expression of the cluster name, e.g. `.ClusterName`).
Output: the template text.
*/}}
{{- define "kof.names.composedTemplate" -}}
{{- printf `{{ $n := %s }}{{ $f := printf "%s%%s" $n }}{{ if and (le (len $f) 63) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $f) }}{{ $f }}{{ else }}{{ $r := regexReplaceAll "[^a-z0-9-]+" (lower $n) "-" | trimAll "-" | trunc %d | trimAll "-" }}%s{{ if $r }}{{ $r }}-{{ end }}{{ $f | sha256sum | trunc 10 }}{{ end }}` .nameExpr .prefix (sub 52 (len .prefix)) .prefix -}}
{{- end -}}

{{/*
kof.names.composed: Go operator/names composed(prefix, name) at layer 1 (see kof.names.composedTemplate).
Input: dict {prefix, name}. Output: a DNS label.
*/}}
{{- define "kof.names.composed" -}}
{{- $f := printf "%s%s" .prefix .name -}}
{{- if and (le (len $f) 63) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $f) -}}
{{- $f -}}
{{- else -}}
{{- $r := regexReplaceAll "[^a-z0-9-]+" (lower .name) "-" | trimAll "-" | trunc (int (sub 52 (len .prefix))) | trimAll "-" -}}
{{- printf "%s%s%s" .prefix (ternary (printf "%s-" $r) "" (ne $r "")) ($f | sha256sum | trunc 10) -}}
{{- end -}}
{{- end -}}

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
