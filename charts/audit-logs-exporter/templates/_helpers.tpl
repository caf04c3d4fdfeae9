{{/*
audit-logs-exporter.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "audit-logs-exporter.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
audit-logs-exporter.fullname: the release name, or `<release>-<chart>` when the release name does not contain
the chart name, cut to 52 characters (a CronJob name leaves 11 for the Job suffix). Input: the root context.
Output: a DNS label.
*/}}
{{- define "audit-logs-exporter.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
audit-logs-exporter.selectorLabels: labels that identify the release's objects, stable across chart versions.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "audit-logs-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "audit-logs-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
audit-logs-exporter.labels: the standard labels of every object. Input: the root context. Output: YAML map lines.
*/}}
{{- define "audit-logs-exporter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "audit-logs-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
app.kubernetes.io/component: audit-logs-exporter
{{- end -}}

{{/*
audit-logs-exporter.serviceAccountName: the ServiceAccount the pod runs as. Input: the root context. Output: a
name.
*/}}
{{- define "audit-logs-exporter.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "audit-logs-exporter.fullname" .) -}}
{{- end -}}

{{/*
audit-logs-exporter.credentialsSecret: the Secret holding S3_ACCESS_KEY and S3_SECRET_KEY: s3.existingSecret, the
chart's test Secret `<fullname>-s3-credentials` when s3.testCredentials are set, else "" (default AWS credential
chain). Input: the root context. Output: a name or "".
*/}}
{{- define "audit-logs-exporter.credentialsSecret" -}}
{{- if .Values.s3.existingSecret -}}
{{- .Values.s3.existingSecret -}}
{{- else if .Values.s3.testCredentials.accessKey -}}
{{- printf "%s-s3-credentials" (include "audit-logs-exporter.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
audit-logs-exporter.image: `<registry>/<repository>:<tag>[@<digest>]`, global.registry replacing image.registry and the
chart's appVersion standing in for an empty tag. Input: the root context. Output: an image reference.
*/}}
{{- define "audit-logs-exporter.image" -}}
{{- $i := .Values.image -}}
{{- $registry := .Values.global.registry | default $i.registry -}}
{{- $ref := printf "%s:%s" $i.repository ($i.tag | default .Chart.AppVersion) -}}
{{- if $registry -}}{{- $ref = printf "%s/%s" (trimSuffix "/" $registry) $ref -}}{{- end -}}
{{- with get $i "digest" -}}{{- $ref = printf "%s@%s" $ref . -}}{{- end -}}
{{- $ref -}}
{{- end -}}
