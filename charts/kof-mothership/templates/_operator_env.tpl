{{/*
kof-mothership.operatorEnv: the environment of the kof-operator container (docs/contract.md, "Operator environment";
names as read by operator/config), every value taken from chart values. The VLCluster/VTCluster names and the promxy
Secret and selector are always set: kof-operator requires them even when this chart does not render those objects.
Input: the root context. Output: YAML list of {name, value}.
*/}}
{{- define "kof-mothership.operatorEnv" -}}
{{- $v := .Values -}}
{{- $urls := $v.operator.storageURLs -}}
{{- $mcs := $v.multiClusterServices -}}
{{- $selector := list -}}
{{- range $k, $val := include "kof-mothership.componentSelectorLabels" (dict "root" . "component" "promxy") | fromYaml -}}
{{- $selector = append $selector (printf "%s=%s" $k $val) -}}
{{- end -}}
{{- $env := list
  (dict "name" "RELEASE_NAMESPACE" "value" .Release.Namespace)
  (dict "name" "RELEASE_NAME" "value" .Release.Name)
  (dict "name" "KOF_VERSION" "value" .Chart.Version)
  (dict "name" "KOF_AUTO_UPGRADE" "value" (toString $v.autoUpgrade))
  (dict "name" "KOF_REGIONLESS_ENABLED" "value" (toString $v.regionless.enabled))
  (dict "name" "KOF_REGIONLESS_CLUSTER_NAME" "value" $v.regionless.clusterName)
  (dict "name" "KOF_REGIONLESS_DOMAIN" "value" $v.regionless.domain)
  (dict "name" "KOF_KCM_NAMESPACE" "value" $v.kcm.namespace)
  (dict "name" "KOF_PROPAGATION_TEMPLATE" "value" (include "kof-mothership.serviceTemplateName" (dict "name" "kof-propagation" "version" .Chart.Version)))
  (dict "name" "KOF_REGIONAL_CLUSTER_MCS_NAME" "value" $mcs.regional)
  (dict "name" "KOF_ISTIO_REGIONAL_CLUSTER_MCS_NAME" "value" $mcs.istioRegional)
  (dict "name" "KOF_CHILD_CLUSTER_MCS_NAME" "value" $mcs.child)
  (dict "name" "KOF_ISTIO_CHILD_CLUSTER_MCS_NAME" "value" $mcs.istioChild)
  (dict "name" "KOF_VL_CLUSTER_NAME" "value" $v.multilevelSelect.logs.name)
  (dict "name" "KOF_VL_AUDIT_CLUSTER_NAME" "value" $v.multilevelSelect.auditLogs.name)
  (dict "name" "KOF_VT_CLUSTER_NAME" "value" $v.multilevelSelect.traces.name)
  (dict "name" "KOF_VM_INSERT_URL" "value" $urls.metricsInsert)
  (dict "name" "KOF_VM_SELECT_URL" "value" $urls.metricsSelect)
  (dict "name" "KOF_VL_INSERT_URL" "value" $urls.logsInsert)
  (dict "name" "KOF_VL_SELECT_URL" "value" $urls.logsSelect)
  (dict "name" "KOF_VL_AUDIT_INSERT_URL" "value" $urls.auditLogsInsert)
  (dict "name" "KOF_VL_AUDIT_SELECT_URL" "value" $urls.auditLogsSelect)
  (dict "name" "KOF_VT_INSERT_URL" "value" $urls.tracesInsert)
  (dict "name" "KOF_VT_SELECT_URL" "value" $urls.tracesSelect)
  (dict "name" "KOF_PROMXY_POD_SELECTOR" "value" (join "," $selector))
  (dict "name" "KOF_PROMXY_SECRET_NAME" "value" $v.promxy.configSecretName)
  (dict "name" "KOF_PROMXY_RULES_CONFIGMAP" "value" $v.promxy.rulesConfigMapName)
  (dict "name" "KOF_PROMXY_ALERTMANAGER_URL" "value" (include "kof-mothership.alertmanagerURL" .))
  (dict "name" "KOF_PROMXY_REMOTE_WRITE_URL" "value" (include "kof-mothership.remoteWriteURL" .))
  (dict "name" "KOF_WATCH_NAMESPACES" "value" (join "," $v.operator.watchNamespaces))
-}}
{{- toYaml (concat $env $v.operator.extraEnv) -}}
{{- end -}}
