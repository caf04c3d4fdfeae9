{{/*
kof-dashboards.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-dashboards.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-dashboards.fullname: the release name, or `<release>-<chart>` when the release name does not contain the chart
name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-dashboards.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-dashboards.selectorLabels: labels that select this release's objects; never the chart version.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-dashboards.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-dashboards.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-dashboards.labels: the common labels of every object. Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-dashboards.labels" -}}
{{ include "kof-dashboards.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
kof-dashboards.upstreamName: name of the kube-prometheus-stack HelmRepository, HelmRelease and release
(`kof-kube-prometheus-stack`); its objects are named from fullnameOverride `kof-kps`, short enough that every
dashboard ConfigMap name stays within 63 characters. Input: none. Output: a DNS label.
*/}}
{{- define "kof-dashboards.upstreamName" -}}
kof-kube-prometheus-stack
{{- end -}}

{{/*
kof-dashboards.upstreamValues: the kube-prometheus-stack values: default rules (labelled for KOF's VMAlert,
aggregated by `cluster`, `upstream.defaultRules` merged over) and default dashboards as GrafanaDashboard objects for
`grafana.instanceSelector`; its CRDs, Prometheus, Alertmanager, Grafana, operator, exporters and ServiceMonitors
off; then `upstream.values`. Input: the root context. Output: YAML map.
*/}}
{{- define "kof-dashboards.upstreamValues" -}}
{{- $u := .Values.upstream -}}
{{- $rules := mustMergeOverwrite (dict
  "create" true
  "labels" (dict "k0rdent.mirantis.com/kof-rule-engine" "vmalert")
  "additionalAggregationLabels" (list "cluster")) (deepCopy $u.defaultRules) -}}
{{- $off := dict "enabled" false -}}
{{- $v := dict
  "fullnameOverride" "kof-kps"
  "crds" $off
  "defaultRules" $rules
  "alertmanager" $off
  "grafana" (dict
    "enabled" false
    "forceDeployDashboards" true
    "defaultDashboardsEnabled" true
    "operator" (dict "dashboardsConfigMapRefEnabled" true "matchLabels" .Values.grafana.instanceSelector "folder" $u.folder "resyncPeriod" .Values.grafana.resyncPeriod)
    "sidecar" (dict "dashboards" (dict "multicluster" (dict "global" (dict "enabled" true)))))
  "kubernetesServiceMonitors" $off
  "kubeStateMetrics" $off
  "nodeExporter" (dict "enabled" false "forceDeployDashboards" true)
  "prometheusOperator" $off
  "prometheus" $off
  "windowsMonitoring" $off
  "kubeEtcd" $off
  "kubeScheduler" $off
  "kubeControllerManager" $off
  "kubeProxy" $off -}}
{{- toYaml (mustMergeOverwrite $v (deepCopy $u.values)) -}}
{{- end -}}

{{/*
kof-dashboards.repoType: the Flux HelmRepository type of a URL: `oci` for `oci://`, else `default`.
Input: a URL. Output: `oci` or `default`.
*/}}
{{- define "kof-dashboards.repoType" -}}
{{- if hasPrefix "oci://" . -}}oci{{- else -}}default{{- end -}}
{{- end -}}
