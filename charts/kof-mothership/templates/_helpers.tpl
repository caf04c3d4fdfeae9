{{/*
kof-mothership.name: the chart name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.fullname: the release name, or `<release>-<chart>` when the release name does not contain the chart
name, cut to 63 characters. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
kof-mothership.selectorLabels: labels that identify the release's objects, stable across chart versions.
Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-mothership.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kof-mothership.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
kof-mothership.labels: the standard labels of every object. Input: the root context. Output: YAML map lines.
*/}}
{{- define "kof-mothership.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kof-mothership.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kof
{{- end -}}

{{/*
kof-mothership.componentSelectorLabels: selector labels of one workload of the release.
Input: dict {root, component}. Output: YAML map lines.
*/}}
{{- define "kof-mothership.componentSelectorLabels" -}}
{{ include "kof-mothership.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
kof-mothership.componentLabels: labels of the objects of one workload of the release.
Input: dict {root, component}. Output: YAML map lines.
*/}}
{{- define "kof-mothership.componentLabels" -}}
{{ include "kof-mothership.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
kof-mothership.image: the full reference of an image, with `global.registry` (when set) replacing the image's own
registry, applied here and nowhere else. Input: dict {image: {registry, repository, tag, digest}, root}; an empty tag
means the chart's appVersion, an empty or missing digest pulls by tag alone (docs/release.md, "Images in chart
values"). Output: `[registry/]repository:tag[@digest]`.
*/}}
{{- define "kof-mothership.image" -}}
{{- $registry := .root.Values.global.registry | default .image.registry -}}
{{- $ref := printf "%s:%s" .image.repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- if $registry -}}
{{- $ref = printf "%s/%s" $registry $ref -}}
{{- end -}}
{{- with get .image "digest" -}}
{{- $ref = printf "%s@%s" $ref . -}}
{{- end -}}
{{- $ref -}}
{{- end -}}

{{/*
kof-mothership.containerSecurityContext: the restricted security context of every container (non-root, read-only
root file system, no privilege escalation, RuntimeDefault seccomp, all capabilities dropped).
Input: none. Output: YAML map.
*/}}
{{- define "kof-mothership.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
seccompProfile:
  type: RuntimeDefault
capabilities:
  drop:
    - ALL
{{- end -}}

{{/*
kof-mothership.podSecurityContext: the restricted security context of every pod.
Input: none. Output: YAML map.
*/}}
{{- define "kof-mothership.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
fsGroup: 65534
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
kof-mothership.operatorName: name of the kof-operator Deployment, Service and RBAC objects.
Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.operatorName" -}}
{{- printf "%s-operator" (include "kof-mothership.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.serviceAccountName: the kof-operator ServiceAccount: `operator.serviceAccount.name`, else the
operator name. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.serviceAccountName" -}}
{{- .Values.operator.serviceAccount.name | default (include "kof-mothership.operatorName" .) -}}
{{- end -}}

{{/*
kof-mothership.promxyName: name of the promxy Deployment and Service. Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.promxyName" -}}
{{- printf "%s-promxy" (include "kof-mothership.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.serviceTemplateName: the KCM ServiceTemplate name of a chart version, `<name>-<version with . → ->`
(docs/values-contract.md). Input: dict {name, version}. Output: a DNS label.
*/}}
{{- define "kof-mothership.serviceTemplateName" -}}
{{- printf "%s-%s" .name (replace "." "-" .version) | lower | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.repoType: the Flux HelmRepository type for a URL: `oci` for `oci://` URLs, else `default`.
Input: a URL string. Output: `oci` or `default`.
*/}}
{{- define "kof-mothership.repoType" -}}
{{- if hasPrefix "oci://" . -}}oci{{- else -}}default{{- end -}}
{{- end -}}

{{/*
kof-mothership.vmclusterEnabled: "true" when the mothership VMCluster is rendered: `victoriametrics.vmcluster.enabled`
and not regionless. Input: the root context. Output: "true" or "".
*/}}
{{- define "kof-mothership.vmclusterEnabled" -}}
{{- if and .Values.victoriametrics.vmcluster.enabled (not .Values.regionless.enabled) -}}true{{- end -}}
{{- end -}}

{{/*
kof-mothership.alertmanagerURL: the in-cluster URL of VMAlertmanager `cluster`, "" when it is off.
Input: the root context. Output: a URL or "".
*/}}
{{- define "kof-mothership.alertmanagerURL" -}}
{{- if .Values.victoriametrics.vmalertmanager.enabled -}}
{{- printf "http://vmalertmanager-cluster.%s.svc:9093" .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/*
kof-mothership.remoteWriteURL: where promxy and VMAlert write recording results: the mothership VMCluster's
vminsert, "" when the VMCluster is not rendered. Input: the root context. Output: a URL or "".
*/}}
{{- define "kof-mothership.remoteWriteURL" -}}
{{- if include "kof-mothership.vmclusterEnabled" . -}}
{{- printf "http://vminsert-cluster.%s.svc:8480/insert/0/prometheus/api/v1/write" .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/*
kof-mothership.promxyURL: the in-cluster URL of promxy. Input: the root context. Output: a URL.
*/}}
{{- define "kof-mothership.promxyURL" -}}
{{- printf "http://%s.%s.svc:%d" (include "kof-mothership.promxyName" .) .Release.Namespace (int .Values.promxy.port) -}}
{{- end -}}

{{/*
kof-mothership.templateRepoName: the Flux HelmRepository (in kcm.namespace) behind the ServiceTemplate of a
catalog entry. Input: the catalog entry name. Output: a DNS label.
*/}}
{{- define "kof-mothership.templateRepoName" -}}
{{- printf "kof-templates-%s" . | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.serviceTemplates: every ServiceTemplate this release renders: KOF's charts from
`kcm.kofRepository` at the chart's own version, then the `serviceTemplates.thirdParty` entries of `catalog`.
Input: the root context. Output: YAML list of {name, chart, version, repository}.
*/}}
{{- define "kof-mothership.serviceTemplates" -}}
{{- $out := list -}}
{{- if .Values.serviceTemplates.enabled -}}
{{- range .Values.serviceTemplates.kofCharts -}}
{{- $name := include "kof-mothership.serviceTemplateName" (dict "name" . "version" $.Chart.Version) -}}
{{- $out = append $out (dict "name" $name "chart" . "version" $.Chart.Version "repository" $.Values.kcm.kofRepository) -}}
{{- end -}}
{{- range .Values.serviceTemplates.thirdParty -}}
{{- $entry := index $.Values.catalog . -}}
{{- $name := include "kof-mothership.serviceTemplateName" (dict "name" . "version" $entry.version) -}}
{{- $out = append $out (dict "name" $name "chart" $entry.chart "version" $entry.version "repository" (include "kof-mothership.templateRepoName" .)) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof-mothership.previousTemplates: names of the ServiceTemplates found in the cluster (by `lookup`) that serve the
same chart under another name at a lower version (semver order, when both versions are semver), sorted by name: so
after a rollback the newer release's templates are never offered as upgrades of the older ones. A KOF chart matches
from any HelmRepository (earlier KOF releases may have used another one); a third-party chart only from the same
HelmRepository, so that KCM's own templates of, say, cert-manager never join KOF's chains.
Input: dict {root, template: an entry of kof-mothership.serviceTemplates}. Output: YAML list of names.
*/}}
{{- define "kof-mothership.previousTemplates" -}}
{{- $found := lookup "k0rdent.mirantis.com/v1beta1" "ServiceTemplate" .root.Values.kcm.namespace "" -}}
{{- $kof := eq .template.repository .root.Values.kcm.kofRepository -}}
{{- $names := list -}}
{{- range (dig "items" (list) $found) -}}
{{- $spec := dig "spec" "helm" "chartSpec" dict . -}}
{{- $sameSource := or $kof (eq (dig "sourceRef" "name" "" $spec) $.template.repository) -}}
{{- $lower := true -}}
{{- $semverRe := "^v?[0-9]+[.][0-9]+[.][0-9]+([-+].*)?$" -}}
{{- $have := toString ($spec.version | default "") -}}
{{- $current := toString $.template.version -}}
{{- if and (regexMatch $semverRe $have) (regexMatch $semverRe $current) -}}
{{- $lower = lt ((semver $have).Compare (semver $current)) 0 -}}
{{- end -}}
{{- if and (ne .metadata.name $.template.name) (eq ($spec.chart | default "") $.template.chart) $sameSource $lower -}}
{{- $names = append $names .metadata.name -}}
{{- end -}}
{{- end -}}
{{- toYaml ($names | uniq | sortAlpha) -}}
{{- end -}}

{{/*
kof-mothership.grafanaName: name of the Grafana object and the value of the label its datasources select it by.
Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.grafanaName" -}}
{{- printf "%s-grafana" (include "kof-mothership.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.issuerEmail: the ACME e-mail of the ClusterIssuer: `certManager.clusterIssuer.email`, else
`regionless.certEmail`. Input: the root context. Output: an e-mail or "".
*/}}
{{- define "kof-mothership.issuerEmail" -}}
{{- .Values.certManager.clusterIssuer.email | default .Values.regionless.certEmail -}}
{{- end -}}

{{/*
kof-mothership.uiName: name of the in-cluster kof-ui Deployment, Service and RBAC objects.
Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.uiName" -}}
{{- printf "%s-ui" (include "kof-mothership.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.uiServiceAccountName: the kof-ui ServiceAccount, `ui.serviceAccount.name` or the uiName.
Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.uiServiceAccountName" -}}
{{- .Values.ui.serviceAccount.name | default (include "kof-mothership.uiName" .) -}}
{{- end -}}

{{/*
kof-mothership.tenantProxyName: name of the tenant query proxy's Deployment, Service and ConfigMap.
Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-mothership.tenantProxyName" -}}
{{- printf "%s-tenant-proxy" (include "kof-mothership.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-mothership.tenantProxyURL: the in-cluster URL of the tenant query proxy. Input: the root context. Output: a URL.
*/}}
{{- define "kof-mothership.tenantProxyURL" -}}
{{- printf "http://%s.%s.svc:%d" (include "kof-mothership.tenantProxyName" .) .Release.Namespace (int .Values.tenantProxy.port) -}}
{{- end -}}

{{/*
kof-mothership.logsSelectURL: the in-cluster URL of a multilevel VictoriaLogs select. Input: dict {root, name: the
VLCluster name}. Output: a URL.
*/}}
{{- define "kof-mothership.logsSelectURL" -}}
{{- printf "http://vlselect-%s.%s.svc:9471" .name .root.Release.Namespace -}}
{{- end -}}

{{/*
kof-mothership.tenantProxyConfig: the tenant query proxy's configuration file (tenancy/proxy.Config, docs/tenancy.md):
the issuer and audience (`tenantProxy.oidc`, else `grafana.oidc`), the claim, admin groups and group-to-tenant map,
the upstreams (promxy, the logs and audit-logs selects when rendered) and the limits. No secret: tokens are checked
with the issuer's public keys. Input: the root context. Output: YAML.
*/}}
{{- define "kof-mothership.tenantProxyConfig" -}}
{{- $p := .Values.tenantProxy -}}
{{- $up := dict "metrics" (include "kof-mothership.promxyURL" .) -}}
{{- if .Values.multilevelSelect.logs.enabled -}}
{{- $_ := set $up "logs" (include "kof-mothership.logsSelectURL" (dict "root" . "name" .Values.multilevelSelect.logs.name)) -}}
{{- end -}}
{{- if .Values.multilevelSelect.auditLogs.enabled -}}
{{- $_ := set $up "auditLogs" (include "kof-mothership.logsSelectURL" (dict "root" . "name" .Values.multilevelSelect.auditLogs.name)) -}}
{{- end -}}
{{- $cfg := dict "issuer" ($p.oidc.issuer | default .Values.grafana.oidc.issuer) "audience" ($p.oidc.audience | default .Values.grafana.oidc.clientID)
  "tenantClaim" $p.tenantClaim "adminGroups" $p.adminGroups "groups" $p.groups "upstreams" $up "limits" $p.limits -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
kof-mothership.grafanaConfig: Grafana's `spec.config` (grafana.ini sections): `grafana.config`, with the generic
OAuth login of `grafana.oidc` when it is enabled (the client secret comes from GF_AUTH_GENERIC_OAUTH_CLIENT_SECRET,
never from values) and `server.root_url` from `grafana.oidc.rootURL`. Input: the root context. Output: YAML.
*/}}
{{- define "kof-mothership.grafanaConfig" -}}
{{- $cfg := deepCopy .Values.grafana.config -}}
{{- $o := .Values.grafana.oidc -}}
{{- if $o.enabled -}}
{{- $oauth := dict "enabled" "true" "name" $o.name "client_id" $o.clientID "scopes" $o.scopes "auth_url" $o.authURL
  "token_url" $o.tokenURL "use_pkce" "true" "allow_sign_up" "true" -}}
{{- with $o.apiURL }}{{ $_ := set $oauth "api_url" . }}{{ end -}}
{{- with $o.roleAttributePath }}{{ $_ := set $oauth "role_attribute_path" . }}{{ end -}}
{{- $_ := set $cfg "auth.generic_oauth" $oauth -}}
{{- with $o.rootURL -}}
{{- $server := get $cfg "server" | default dict -}}
{{- $_ := set $server "root_url" . -}}
{{- $_ := set $cfg "server" $server -}}
{{- end -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
kof-mothership.istioNamespace: the names of the Istio namespace bootstrap (docs/storage-modes.md): the ConfigMap that
holds the member namespace (`kof-namespace-template`), the ServiceTemplate of plain resources that delivers it
(`kof-namespace-<version with . replaced by ->`) and the MultiClusterService that selects the Istio members
(`kof-istio-namespace`, which the Istio MultiClusterServices of kof-regional and kof-child depend on).
Input: the root context. Output: YAML map {configMap, template, mcs, service}.
*/}}
{{- define "kof-mothership.istioNamespace" -}}
configMap: kof-namespace-template
template: {{ include "kof-mothership.serviceTemplateName" (dict "name" "kof-namespace" "version" .Chart.Version) }}
mcs: kof-istio-namespace
service: kof-namespace
{{- end -}}
