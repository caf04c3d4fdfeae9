{{/*
kof-propagation.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-propagation.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-propagation.fullname: the release name, or `<release>-<chart>` when the release name does not contain the
chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-propagation.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-propagation.selectorLabels: labels that identify the release's objects, stable across chart versions.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-propagation.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-propagation.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-propagation.labels: the standard labels of every object. Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-propagation.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kof-propagation.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
{{- end -}}
