{{/*
kof-operators.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-operators.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-operators.fullname: the release name, or `<release>-<chart>` when the release name does not contain the chart
name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-operators.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-operators.selectorLabels: labels that identify the release's objects, stable across chart versions.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-operators.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-operators.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-operators.labels: the standard labels of every object. Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-operators.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kof-operators.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
{{- end -}}

{{/*
kof-operators.enabled: the operators to install through Flux: those of `operators` whose block is enabled, in that
order; none when the effective delivery is `none`. Input: the root context. Output: YAML list of {name, repository, chart, version, values}.
*/}}
{{- define "kof-operators.enabled" -}}
{{- $out := list -}}
{{- if eq (include "kof-operators.delivery" .) "flux" -}}
{{- range .Values.operators -}}
{{- $block := index $.Values . -}}
{{- if $block.enabled -}}
{{- $entry := index $.Values.catalog . -}}
{{- $out = append $out (dict "name" . "repository" $entry.repository "chart" $entry.chart "version" $entry.version "values" ($block.values | default dict)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof-operators.delivery: the effective delivery: `delivery`, with `auto` resolved to `flux` when the cluster serves
helm.toolkit.fluxcd.io/v2 and to `none` otherwise. Input: the root context. Output: `flux` or `none`.
*/}}
{{- define "kof-operators.delivery" -}}
{{- if eq .Values.delivery "auto" -}}
{{- ternary "flux" "none" (.Capabilities.APIVersions.Has "helm.toolkit.fluxcd.io/v2") -}}
{{- else -}}
{{- .Values.delivery -}}
{{- end -}}
{{- end -}}

{{/*
kof-operators.repoType: the Flux HelmRepository type for a URL: `oci` for `oci://` URLs, else `default`.
Input: a URL string. Output: `oci` or `default`.
*/}}
{{- define "kof-operators.repoType" -}}
{{- if hasPrefix "oci://" . -}}oci{{- else -}}default{{- end -}}
{{- end -}}
