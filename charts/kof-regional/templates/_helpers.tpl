{{/*
kof-regional.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-regional.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-regional.fullname: the release-qualified name, the release name alone when it already contains the chart name.
Input: the root context. Output: a DNS label of at most 63 characters.
*/}}
{{- define "kof-regional.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-regional.selectorLabels: labels that select this release's objects; never the chart version.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-regional.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-regional.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-regional.labels: the common labels of every object (selector labels, version, chart, managed-by, part-of).
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-regional.labels" -}}
{{ include "kof-regional.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}
