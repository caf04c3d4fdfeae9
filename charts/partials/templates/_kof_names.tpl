{{/*
The name rules of operator/names (docs/contract.md "Hashed names"), written once for every KOF chart: each rule is
a template expression builder (`kof.names.*Expr`) whose text Sveltos evaluates at layer 2 (templateResourceRefs
names, the layer-2 head of every MultiClusterService service) and Helm evaluates at layer 1 (`kof.names.eval`), so
both layers run the same text. chartlib/parity checks both against Go for a table of inputs.
*/}}

{{/*
kof.names.hashedExpr: the expression of Go names.hashed: `<prefix><readable name>-<h>` (`<prefix><h>` when nothing
of the name is readable), h the first 10 hex characters of sha256 of the identity, the readable part (lower case,
runs outside [a-z0-9-] → `-`, trimmed of `-`) cut so that the whole stays within limit characters.
Input: dict {prefix: string, name: expression, identity: expression, limit: int}. Output: a template expression.
*/}}
{{- define "kof.names.hashedExpr" -}}
{{- $cut := sub (sub (sub (int .limit) (len .prefix)) 10) 1 -}}
{{- printf `(printf "%%s%%s" %s (list (regexReplaceAll "[^a-z0-9-]+" (lower %s) "-" | trimAll "-" | trunc %d | trimAll "-") (%s | sha256sum | trunc 10) | compact | join "-"))` (toJson .prefix) .name (int $cut) .identity -}}
{{- end -}}

{{/*
kof.names.composedExpr: the expression of Go names.composed: `<prefix><name>` when that is a DNS label of at most
63 characters, else the hashed rule over it (names.RegionalConfigMap, ChildConfigMap, VMRulesConfigMap).
Input: dict {prefix: string, name: expression}. Output: a template expression.
*/}}
{{- define "kof.names.composedExpr" -}}
{{- $full := printf `(printf "%%s%%s" %s %s)` (toJson .prefix) .name -}}
{{- $hashed := include "kof.names.hashedExpr" (dict "prefix" .prefix "name" .name "identity" $full "limit" 63) -}}
{{- printf `(ternary %s %s (and (le (len %s) 63) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" %s)))` $full $hashed $full $full -}}
{{- end -}}

{{/*
kof.names.suffixedExpr: the expression of Go names.suffixed: `<name><suffix>` when that is a DNS label of at most
63 characters, else the hashed rule over the name (limit 63 minus the suffix) followed by the suffix
(names.IstioVMAuthService). Input: dict {name: expression, suffix: string}. Output: a template expression.
*/}}
{{- define "kof.names.suffixedExpr" -}}
{{- $full := printf `(printf "%%s%%s" %s %s)` .name (toJson .suffix) -}}
{{- $hashed := include "kof.names.hashedExpr" (dict "prefix" "" "name" .name "identity" $full "limit" (sub 63 (len .suffix))) -}}
{{- printf `(ternary %s (printf "%%s%%s" %s %s) (and (le (len %s) 63) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" %s)))` $full $hashed (toJson .suffix) $full $full -}}
{{- end -}}

{{/*
kof.names.childVMUserBaseExpr, kof.names.adminVMUserBaseExpr: the expressions of Go names.ChildVMUserBase
(`<readable>-<h>`, identity `kof-cluster-config-<name>/<namespace>`) and names.AdminVMUserBase (`admin-<readable>-<h>`,
identity `kof-<name>/<namespace>`), both at most 40 characters.
Input: dict {name: expression, namespace: expression}. Output: a template expression.
*/}}
{{- define "kof.names.childVMUserBaseExpr" -}}
{{- include "kof.names.hashedExpr" (dict "prefix" "" "name" .name "identity" (printf `(printf "kof-cluster-config-%%s/%%s" %s %s)` .name .namespace) "limit" 40) -}}
{{- end -}}

{{- define "kof.names.adminVMUserBaseExpr" -}}
{{- include "kof.names.hashedExpr" (dict "prefix" "admin-" "name" .name "identity" (printf `(printf "kof-%%s/%%s" %s %s)` .name .namespace) "limit" 40) -}}
{{- end -}}

{{/*
kof.names.eval: a name expression evaluated at layer 1 (Helm's tpl over data). Input: dict {expr, data}.
Output: the name.
*/}}
{{- define "kof.names.eval" -}}
{{- tpl (printf "{{ %s }}" .expr) .data -}}
{{- end -}}

{{/*
kof.names.childVMUserBase, kof.names.adminVMUserBase: Go names.ChildVMUserBase and names.AdminVMUserBase at layer 1.
Input: dict {cluster, namespace}. Output: a DNS label.
*/}}
{{- define "kof.names.childVMUserBase" -}}
{{- include "kof.names.eval" (dict "expr" (include "kof.names.childVMUserBaseExpr" (dict "name" ".cluster" "namespace" ".namespace")) "data" (dict "cluster" .cluster "namespace" .namespace)) -}}
{{- end -}}

{{- define "kof.names.adminVMUserBase" -}}
{{- include "kof.names.eval" (dict "expr" (include "kof.names.adminVMUserBaseExpr" (dict "name" ".cluster" "namespace" ".namespace")) "data" (dict "cluster" .cluster "namespace" .namespace)) -}}
{{- end -}}

{{/*
kof.names.composed: Go names.composed(prefix, name) at layer 1. Input: dict {prefix, name}. Output: a DNS label.
*/}}
{{- define "kof.names.composed" -}}
{{- include "kof.names.eval" (dict "expr" (include "kof.names.composedExpr" (dict "prefix" .prefix "name" ".name")) "data" (dict "name" .name)) -}}
{{- end -}}

{{/*
kof.names.composedTemplate: the Sveltos name template of names.composed(prefix, <cluster name>), e.g. the
templateResourceRef of `kof-cluster-config-<cluster>`. Input: dict {prefix, nameExpr} (nameExpr: the expression of
the cluster name, e.g. `.ClusterName`). Output: template text.
*/}}
{{- define "kof.names.composedTemplate" -}}
{{- printf "{{ %s }}" (include "kof.names.composedExpr" (dict "prefix" .prefix "name" .nameExpr)) -}}
{{- end -}}

{{/*
kof.names.istioVMAuthService: Go names.IstioVMAuthService at layer 1: the in-mesh Service `<cluster>-vmauth` of a
regional cluster's VMAuth, shortened by the suffixed rule. Input: dict {cluster}. Output: a DNS label.
*/}}
{{- define "kof.names.istioVMAuthService" -}}
{{- include "kof.names.eval" (dict "expr" (include "kof.names.suffixedExpr" (dict "name" ".cluster" "suffix" "-vmauth")) "data" (dict "cluster" .cluster)) -}}
{{- end -}}
