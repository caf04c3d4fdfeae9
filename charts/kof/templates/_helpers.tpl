{{/*
kof.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof.fullname: the release name, or `<release>-<chart>` when the release name does not contain the chart name,
cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof.selectorLabels: labels that identify the release's objects, stable across chart versions.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof.labels: the standard labels of every object. Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kof.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
{{- end -}}

{{/*
kof.componentVersion: the chart version of KOF's components: `global.helmRepo.chartVersion`, else the umbrella's
own version. Input: the root context. Output: a version string.
*/}}
{{- define "kof.componentVersion" -}}
{{- .Values.global.helmRepo.chartVersion | default .Chart.Version -}}
{{- end -}}

{{/*
kof.componentNamespace: the namespace a component is installed into: its block's `namespace`, else the release
namespace. Input: dict {root, name}. Output: a namespace name.
*/}}
{{- define "kof.componentNamespace" -}}
{{- $block := index .root.Values .name -}}
{{- $block.namespace | default .root.Release.Namespace -}}
{{- end -}}

{{/*
kof.dependencies: the components each component waits for (install order kof-operators →
victoria-metrics-operator → kof-mothership → kof-regional, kof-child). Input: none. Output: YAML map
component → list of components; kof.enabledDependsOn drops the disabled ones.
*/}}
{{- define "kof.dependencies" -}}
kof-operators: []
victoria-metrics-operator: [kof-operators]
kof-mothership: [kof-operators, victoria-metrics-operator]
kof-regional: [kof-mothership]
kof-child: [kof-mothership]
kof-collectors: [kof-operators, kof-mothership]
kof-dashboards: [kof-mothership]
{{- end -}}

{{/*
kof.enabledDependsOn: the Flux `dependsOn` list of a component, keeping only enabled components.
Input: dict {root, name}. Output: YAML list of {name, namespace}, or `[]`.
*/}}
{{- define "kof.enabledDependsOn" -}}
{{- $deps := index (include "kof.dependencies" . | fromYaml) .name | default list -}}
{{- $out := list -}}
{{- range $deps -}}
{{- if (index $.root.Values .).enabled -}}
{{- $out = append $out (dict "name" . "namespace" $.root.Release.Namespace) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof.injected: the shared keys the umbrella injects into every component (docs/values-contract.md): global.registry,
regionless.*, tls.*, istio.enabled, autoUpgrade and catalog. Input: the root context. Output: YAML map.
*/}}
{{- define "kof.injected" -}}
{{- $v := .Values -}}
{{- toYaml (dict
  "global" (dict "registry" $v.global.registry)
  "regionless" (deepCopy $v.regionless)
  "tls" (deepCopy $v.tls)
  "istio" (deepCopy $v.istio)
  "autoUpgrade" $v.autoUpgrade
  "catalog" (deepCopy $v.catalog)) -}}
{{- end -}}

{{/*
kof.componentValues: the values of a KOF component's HelmRelease: the injected shared keys, deep-merged with the
component's `values` (an explicit component value wins). kof-regional also gets `storage` from
`kof-storage.values` (with the shared keys injected), and kof-mothership `kcm.namespace` / `kcm.kofRepository` from
`global.helmRepo` (the source of its ServiceTemplates), both below the component's own values. Structured values are merged, never
YAML strings. Input: dict {root, name}. Output: YAML map.
*/}}
{{- define "kof.componentValues" -}}
{{- $injected := include "kof.injected" .root | fromYaml -}}
{{- $own := deepCopy ((index .root.Values .name).values | default dict) -}}
{{- $merged := mustMergeOverwrite (dict) $injected -}}
{{- if eq .name "kof-regional" -}}
{{- $storage := mustMergeOverwrite (include "kof.injected" .root | fromYaml) (include "kof.regionlessStorage" .root | fromYaml) (deepCopy (index .root.Values "kof-storage").values) -}}
{{- $merged = mustMergeOverwrite $merged (dict "storage" $storage) -}}
{{- end -}}
{{- if eq .name "kof-operators" -}}
{{- range include "kof.managementOperators" .root | fromYamlArray -}}
{{- $merged = mustMergeOverwrite $merged (dict . (dict "enabled" true)) -}}
{{- end -}}
{{- end -}}
{{- if eq .name "kof-mothership" -}}
{{- $repo := .root.Values.global.helmRepo -}}
{{- $merged = mustMergeOverwrite $merged (dict "kcm" (dict "namespace" $repo.namespace "kofRepository" $repo.name)) -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $merged $own) -}}
{{- end -}}

{{/*
kof.managementOperators: the operators kof-operators installs on the management cluster for what KOF renders
there, before kof-mothership (docs/storage-modes.md): `envoy-gateway` (with the Gateway API CRDs) when the regionless
storage is published through a Gateway (regionless, kof-regional on, not Istio, `ingressMode: gateway`) or
kof-mothership renders its Gateway (`gateway.enabled`); `ingress-nginx` when the regionless storage is published
through an Ingress (`ingressMode: ingress`) or kof-mothership's ACME ClusterIssuer answers through an Ingress (no
Gateway); `grafana-operator` when kof-mothership renders Grafana. Input: the root context.
Output: YAML list of kof-operators blocks.
*/}}
{{- define "kof.managementOperators" -}}
{{- $out := list -}}
{{- $regional := index .Values "kof-regional" -}}
{{- $ms := index .Values "kof-mothership" -}}
{{- $msValues := $ms.values | default dict -}}
{{- if and .Values.regionless.enabled $regional.enabled (ne (include "kof.istio" .) "true") -}}
{{- $out = append $out (ternary "ingress-nginx" "envoy-gateway" (eq (dig "ingressMode" "gateway" ($regional.values | default dict)) "ingress")) -}}
{{- end -}}
{{- if $ms.enabled -}}
{{- $gateway := dig "gateway" "enabled" false $msValues -}}
{{- if $gateway -}}
{{- $out = append $out "envoy-gateway" -}}
{{- end -}}
{{- $acme := and (dig "certManager" "clusterIssuer" "enabled" false $msValues) (not (dig "tls" "selfSigned" .Values.tls.selfSigned $msValues)) -}}
{{- if and $acme (not $gateway) -}}
{{- $out = append $out "ingress-nginx" -}}
{{- end -}}
{{- if dig "grafana" "enabled" false $msValues -}}
{{- $out = append $out "grafana-operator" -}}
{{- end -}}
{{- end -}}
{{- toYaml ($out | uniq) -}}
{{- end -}}

{{/*
kof.regionlessStorage: what the umbrella adds below `kof-storage.values` for the regionless storage on the
management cluster: when kof-mothership renders the GatewayClass of its own Gateway and the storage's Gateway
names the same class, the storage does not render it again (one owner per object).
Input: the root context. Output: YAML map.
*/}}
{{- define "kof.regionlessStorage" -}}
{{- $mothership := (index .Values "kof-mothership").values | default dict -}}
{{- $storage := (index .Values "kof-storage").values | default dict -}}
{{- $msGateway := dig "gateway" "enabled" false $mothership -}}
{{- $msClass := dig "gateway" "className" "envoy-gateway" $mothership -}}
{{- $sameClass := eq $msClass (dig "gateway" "className" "envoy-gateway" $storage) -}}
{{- if and .Values.regionless.enabled (index .Values "kof-mothership").enabled $msGateway (dig "gateway" "createClass" true $mothership) $sameClass -}}
{{- toYaml (dict "gateway" (dict "createClass" false)) -}}
{{- else -}}
{}
{{- end -}}
{{- end -}}

{{/*
kof.vmoValues: the values of the victoria-metrics-operator HelmRelease: its block's `values`, with
`global.registry` passed as the chart's `global.image.registry` when set. Input: the root context. Output: YAML map.
*/}}
{{- define "kof.vmoValues" -}}
{{- $own := deepCopy ((index .Values "victoria-metrics-operator").values | default dict) -}}
{{- $base := dict -}}
{{- with .Values.global.registry -}}
{{- $base = dict "global" (dict "image" (dict "registry" .)) -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $base $own) -}}
{{- end -}}

{{/*
kof.releases: every HelmRelease the umbrella renders, in install order, with its chart and source.
Input: the root context. Output: YAML list of {name, chart, version, repository, namespace}; `repository` is the
Flux HelmRepository name.
*/}}
{{- define "kof.releases" -}}
{{- $out := list -}}
{{- if not (has "kof-operators" .Values.global.components) -}}
{{- $out = append $out (include "kof.vmoRelease" . | fromYaml) -}}
{{- end -}}
{{- range .Values.global.components -}}
{{- if (index $.Values .).enabled -}}
{{- $out = append $out (dict "name" . "chart" . "version" (include "kof.componentVersion" $) "repository" $.Values.global.helmRepo.name) -}}
{{- end -}}
{{- if eq . "kof-operators" -}}
{{- $out = append $out (include "kof.vmoRelease" $ | fromYaml) -}}
{{- end -}}
{{- end -}}
{{- toYaml (without $out dict) -}}
{{- end -}}

{{/*
kof.vmoRelease: the victoria-metrics-operator release entry of kof.releases, from `catalog`; an empty map when the
component is disabled. Input: the root context. Output: YAML map.
*/}}
{{- define "kof.vmoRelease" -}}
{{- if (index .Values "victoria-metrics-operator").enabled -}}
{{- $vmo := index .Values.catalog "victoria-metrics-operator" -}}
{{- toYaml (dict "name" "victoria-metrics-operator" "chart" $vmo.chart "version" $vmo.version "repository" "kof-victoria-metrics-operator") -}}
{{- else -}}
{}
{{- end -}}
{{- end -}}

{{/*
kof.repoType: the Flux HelmRepository type for a URL: `oci` for `oci://` URLs, else `default`.
Input: a URL string. Output: `oci` or `default`.
*/}}
{{- define "kof.repoType" -}}
{{- if hasPrefix "oci://" . -}}oci{{- else -}}default{{- end -}}
{{- end -}}
