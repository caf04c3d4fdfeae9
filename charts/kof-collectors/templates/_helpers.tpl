{{/*
kof-collectors.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-collectors.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-collectors.fullname: the release-qualified name, the release name alone when it already contains the chart name.
Input: the root context. Output: a DNS label of at most 63 characters.
*/}}
{{- define "kof-collectors.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-collectors.selectorLabels: labels that select this release's objects; never the chart version.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-collectors.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-collectors.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-collectors.labels: the common labels of every object (selector labels, version, chart, managed-by, part-of).
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-collectors.labels" -}}
{{ include "kof-collectors.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
kof-collectors.image: a full image reference `<registry>/<repository>:<tag>` from a values image
`{registry, repository, tag}`; global.registry, when set, replaces the image's own registry, so a registry is
prefixed exactly once. Input: dict {root, image}. Output: a string.
*/}}
{{- define "kof-collectors.image" -}}
{{- $registry := .root.Values.global.registry | default .image.registry -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) .image.repository .image.tag -}}
{{- else -}}
{{- printf "%s:%s" .image.repository .image.tag -}}
{{- end -}}
{{- end -}}


