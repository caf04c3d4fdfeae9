{{/*
kof-mothership.promxyBootstrapConfig: promxy's first configuration, before kof-operator rewrites the config Secret
from PromxyServerGroups (docs/contract.md, "Promxy configuration"): built as a structure and marshalled, never assembled
as text. Alerting and remote_write appear only when VMAlertmanager / the mothership VMCluster are rendered.
Input: the root context. Output: YAML document.
*/}}
{{- define "kof-mothership.promxyBootstrapConfig" -}}
{{- $cfg := dict
  "global" (dict "evaluation_interval" "5s" "external_labels" (dict "source" "promxy"))
  "rule_files" (list "/etc/promxy/rules/*.yaml")
  "promxy" (dict "server_groups" list)
-}}
{{- if .Values.victoriametrics.vmalertmanager.enabled -}}
{{- $target := printf "vmalertmanager-cluster.%s.svc:9093" .Release.Namespace -}}
{{- $_ := set $cfg "alerting" (dict "alertmanagers" (list (dict "scheme" "http" "static_configs" (list (dict "targets" (list $target)))))) -}}
{{- end -}}
{{- with include "kof-mothership.remoteWriteURL" . -}}
{{- $_ := set $cfg "remote_write" (list (dict "url" .)) -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
