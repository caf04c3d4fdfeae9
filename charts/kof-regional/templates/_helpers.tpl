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


{{/*
kof-regional.istio: whether Istio mode is on: istio.enabled, or the label `istio-injection=enabled` on the release
namespace (read with lookup; offline renders see no namespace). Input: the root context. Output: "true" or "".
*/}}
{{- define "kof-regional.istio" -}}
{{- $ns := lookup "v1" "Namespace" "" .Release.Namespace -}}
{{- if or .Values.istio.enabled (eq (dig "metadata" "labels" "istio-injection" "" ($ns | default dict)) "enabled") -}}
true
{{- end -}}
{{- end -}}

{{/*
kof-regional.shared: the keys every KOF component chart accepts (docs/values-contract.md), handed to the services'
values as their lowest layer. Input: dict {root, istio}. Output: YAML map.
*/}}
{{- define "kof-regional.shared" -}}
{{- $v := .root.Values -}}
{{- toYaml (dict "global" $v.global "regionless" $v.regionless "tls" $v.tls "autoUpgrade" $v.autoUpgrade "istio" (dict "enabled" (eq .istio "true"))) -}}
{{- end -}}

{{/*
kof-regional.templateName: the KCM ServiceTemplate name of a chart version: `<name>-<version with . → ->`
(docs/values-contract.md). Input: dict {name, version}. Output: a DNS label.
*/}}
{{- define "kof-regional.templateName" -}}
{{- printf "%s-%s" .name (replace "." "-" .version) | lower | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-regional.layer2: a service's values text for Sveltos: a first line that sets $kof from the injected data
(JSON, base64-encoded so that no quoting, escaping or indentation can change it in Sveltos' double pass), then the
shared head files/_annotations.tpl ($ann, $override), then the service's layer-2 template file.
Input: dict {root, file, data}. Output: the values text (multi-line, no trailing spaces).
*/}}
{{- define "kof-regional.layer2" -}}
{{- printf "{{ $kof := fromJson (b64dec %q) }}" (.data | toJson | b64enc) }}
{{ .root.Files.Get "files/_annotations.tpl" | trimSuffix "\n" }}
{{ .root.Files.Get .file | trimSuffix "\n" }}
{{- end -}}
