{{/*
kof-storage.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-storage.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-storage.fullname: the release-qualified name, the release name alone when it already contains the chart name.
Input: the root context. Output: a DNS label of at most 63 characters.
*/}}
{{- define "kof-storage.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-storage.selectorLabels: labels that select this release's objects; never the chart version.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-storage.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-storage.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-storage.labels: the common labels of every object (selector labels, version, chart, managed-by, part-of).
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-storage.labels" -}}
{{ include "kof-storage.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
kof-storage.image: an operator Image `{repository, tag}` from a values image `{registry, repository, tag}`;
global.registry, when set, replaces the image's own registry, so a registry is prefixed exactly once.
Input: dict {root, image}. Output: YAML map lines `repository: ...` and `tag: ...`.
*/}}
{{- define "kof-storage.image" -}}
{{- $registry := .root.Values.global.registry | default .image.registry -}}
repository: {{ ternary (printf "%s/%s" (trimSuffix "/" $registry) .image.repository) .image.repository (ne $registry "") }}
tag: {{ .image.tag | quote }}
{{- end -}}

{{/*
kof-storage.domain: the base domain of this cluster's public endpoints: .Values.domain, else regionless.domain in
regionless mode, else "". Input: the root context. Output: a string.
*/}}
{{- define "kof-storage.domain" -}}
{{- if .Values.domain -}}
{{- .Values.domain -}}
{{- else if .Values.regionless.enabled -}}
{{- .Values.regionless.domain -}}
{{- end -}}
{{- end -}}

{{/*
kof-storage.certEmail: the ACME e-mail: .Values.certEmail, else regionless.certEmail. Input: the root context.
Output: a string.
*/}}
{{- define "kof-storage.certEmail" -}}
{{- .Values.certEmail | default .Values.regionless.certEmail -}}
{{- end -}}

{{/*
kof-storage.clusterName: the name of the cluster this storage runs on: .Values.clusterName, else regionless.clusterName
in regionless mode, else the release name. Input: the root context. Output: a string.
*/}}
{{- define "kof-storage.clusterName" -}}
{{- if .Values.clusterName -}}
{{- .Values.clusterName -}}
{{- else if .Values.regionless.enabled -}}
{{- .Values.regionless.clusterName -}}
{{- else -}}
{{- .Release.Name -}}
{{- end -}}
{{- end -}}

{{/*
kof-storage.publish: which way VMAuth is published: "istio", "gateway", "ingress" or "" (in-cluster only).
Istio mode wins; an Ingress wins over a Gateway; nothing is published without a domain. Input: the root context.
*/}}
{{- define "kof-storage.publish" -}}
{{- if .Values.istio.enabled -}}
istio
{{- else if not (include "kof-storage.domain" .) -}}
{{- else if .Values.ingress.enabled -}}
ingress
{{- else if .Values.gateway.enabled -}}
gateway
{{- end -}}
{{- end -}}

{{/*
kof-storage.issuer: whether the ClusterIssuer is rendered: cert-manager.enabled, a public endpoint, no Istio.
Input: the root context. Output: "true" or "".
*/}}
{{- define "kof-storage.issuer" -}}
{{- $publish := include "kof-storage.publish" . -}}
{{- if and (index .Values "cert-manager" "enabled") (or (eq $publish "gateway") (eq $publish "ingress")) -}}
true
{{- end -}}
{{- end -}}

{{/*
kof-storage.pvc: an EmbeddedPersistentVolumeClaim spec with a size and an optional storage class.
Input: dict {size, class}. Output: YAML map lines of `volumeClaimTemplate`.
*/}}
{{- define "kof-storage.pvc" -}}
volumeClaimTemplate:
  spec:
    {{- with .class }}
    storageClassName: {{ . | quote }}
    {{- end }}
    accessModes:
      - ReadWriteOnce
    resources:
      requests:
        storage: {{ .size | quote }}
{{- end -}}

{{/*
kof-storage.hostPort: the `host:port` of an http URL (scheme and path removed). Input: a URL string.
Output: a string.
*/}}
{{- define "kof-storage.hostPort" -}}
{{- $u := urlParse . -}}
{{- $u.host -}}
{{- end -}}

{{/*
kof-storage.grafanaName: the Grafana of this cluster (grafana.enabled) and the label value its data sources and
dashboards select it by. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-storage.grafanaName" -}}
{{- printf "%s-grafana" (include "kof-storage.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
