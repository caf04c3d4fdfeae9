{{/* Copied from charts/partials/templates/_kof_layer2.tpl by `make generate`; edit the source, not this copy. */}}
{{/*
The MultiClusterService helpers kof-regional and kof-child share: Istio detection, the shared keys, ServiceTemplate
names, the readable layer-2 hand-off and the service chain (docs/sveltos.md, docs/values-contract.md).
*/}}

{{/*
kof.shared: the keys every KOF component chart accepts (docs/values-contract.md), handed to the services' values as
their lowest layer. Input: dict {root, istio}. Output: YAML map.
*/}}
{{- define "kof.shared" -}}
{{- $v := .root.Values -}}
{{- toYaml (dict "global" $v.global "regionless" $v.regionless "tls" $v.tls "autoUpgrade" $v.autoUpgrade "istio" (dict "enabled" (eq .istio "true"))) -}}
{{- end -}}

{{/*
kof.templateName: the KCM ServiceTemplate name of a chart version: `<name>-<version with . → ->`
(docs/values-contract.md). Input: dict {name, version}. Output: a DNS label.
*/}}
{{- define "kof.templateName" -}}
{{- printf "%s-%s" .name (replace "." "-" .version) | lower | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof.layer2.literal: a value written as the Sveltos template expression that builds it: maps as `(dict "key" value
...)` with sorted keys, lists as `(list ...)`, one entry per line indented under pad, strings as Go string literals
with every character outside printable ASCII escaped (`printf "%+q"`: line breaks, quotes, unicode), numbers and
booleans as JSON, null as nil. Every literal fits on one line of printable ASCII, so Sveltos' first pass (which
indents the values text by 2 columns inside a YAML block) changes only the whitespace between them, never a value.
Input: dict {value, pad}. Output: template expression text.
*/}}
{{- define "kof.layer2.literal" -}}
{{- $v := .value -}}
{{- $pad := .pad -}}
{{- $kind := kindOf $v -}}
{{- if eq $kind "map" -}}
{{- if eq (len $v) 0 -}}
(dict)
{{- else -}}
(dict
{{- range $k := keys $v | sortAlpha }}
{{ $pad }}  {{ printf "%+q" $k }} {{ include "kof.layer2.literal" (dict "value" (index $v $k) "pad" (printf "%s  " $pad)) }}
{{- end }}
{{ $pad }})
{{- end -}}
{{- else if eq $kind "slice" -}}
{{- if eq (len $v) 0 -}}
(list)
{{- else -}}
(list
{{- range $e := $v }}
{{ $pad }}  {{ include "kof.layer2.literal" (dict "value" $e "pad" (printf "%s  " $pad)) }}
{{- end }}
{{ $pad }})
{{- end -}}
{{- else if eq $kind "invalid" -}}
nil
{{- else if eq $kind "string" -}}
{{ printf "%+q" $v }}
{{- else -}}
{{ toJson $v }}
{{- end -}}
{{- end -}}

{{/*
kof.layer2.names: the layer-2 lines that compute the names a service's template asks for (data key `names`), each
from the rules of _kof_names.tpl over the variables files/_head.tpl sets ($name, $ns, $regional):
`childBase` (names.ChildVMUserBase), `adminBase` (names.AdminVMUserBase), `regionalVMAuth`
(names.IstioVMAuthService of the regional cluster). Input: list of names. Output: template lines.
*/}}
{{- define "kof.layer2.names" -}}
{{- range . }}
{{- if eq . "childBase" }}
{{ printf "{{- $childBase := %s }}" (include "kof.names.childVMUserBaseExpr" (dict "name" "$name" "namespace" "$ns")) }}
{{- else if eq . "adminBase" }}
{{ printf "{{- $adminBase := %s }}" (include "kof.names.adminVMUserBaseExpr" (dict "name" "$name" "namespace" "$ns")) }}
{{- else if eq . "regionalVMAuth" }}
{{ printf "{{- $regionalVMAuth := %s }}" (include "kof.names.suffixedExpr" (dict "name" "$regional" "suffix" "-vmauth")) }}
{{- else }}
{{- fail (printf "kof.layer2.names: unknown name %q; use childBase, adminBase or regionalVMAuth" .) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
kof.layer2: a service's values text for Sveltos, readable in `kubectl get multiclusterservice -o yaml`: a comment
line, then `$kof := dict ...`, the chart's data for the service written as template literals (kof.layer2.literal),
then the shared head files/_head.tpl ($name, $ns, $regional, $ann, $scalars, $override), the names the service asks
for (kof.layer2.names) and the service's own layer-2 template file, which prints one line of JSON. The first line's
action keeps its left space, so Sveltos' first pass keeps the output inside its YAML block; every other line trims
it. Input: dict {root, file, data, names}. Output: the values text (multi-line, no trailing spaces).
*/}}
{{- define "kof.layer2" -}}
{{- printf "{{/* %s %s: this service's data from the chart (layer 1), then the layer-2 template. */}}" .root.Chart.Name .root.Chart.Version }}
{{ printf "{{- $kof := %s }}" (include "kof.layer2.literal" (dict "value" .data "pad" "")) }}
{{ .root.Files.Get "files/_head.tpl" | trimSuffix "\n" }}
{{- with .names }}{{ include "kof.layer2.names" . }}{{ end }}
{{ .root.Files.Get .file | trimSuffix "\n" }}
{{- end -}}

{{/*
kof.chain: KCM Service objects in dependsOn order: each service depends on the one before it, except a `standalone`
one (no dependsOn, and not the one before the next); a service's `after` (list of {name, namespace}) adds to its
dependsOn. Every Helm service waits for its release to be ready (`helmOptions.wait`), so that a service that
depends on it starts after it works; a `resources` service (Sveltos-deployed objects, no Helm) has no values.
Input: dict {root, services} (each {name, namespace, template, file, data, names?, valuesFrom?, standalone?, after?,
resources?}). Output: YAML list of KCM Service objects (k0rdent/kcm api/v1beta1 Service).
*/}}
{{- define "kof.chain" -}}
{{- $out := list -}}
{{- $prev := dict -}}
{{- range .services -}}
{{- $s := dict "name" .name "namespace" .namespace "template" .template -}}
{{- if not (get . "resources") -}}
{{- $_ := set $s "values" (include "kof.layer2" (dict "root" $.root "file" .file "data" .data "names" (get . "names"))) -}}
{{- $_ := set $s "helmOptions" (dict "wait" true) -}}
{{- end -}}
{{- with get . "valuesFrom" -}}
{{- $_ := set $s "valuesFrom" . -}}
{{- end -}}
{{- $deps := list -}}
{{- if and $prev (not (get . "standalone")) -}}
{{- $deps = append $deps (dict "name" $prev.name "namespace" $prev.namespace) -}}
{{- end -}}
{{- range (get . "after" | default list) -}}
{{- $deps = append $deps . -}}
{{- end -}}
{{- with $deps -}}
{{- $_ := set $s "dependsOn" . -}}
{{- end -}}
{{- $out = append $out $s -}}
{{- if not (get . "standalone") -}}
{{- $prev = . -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof.clusterRefs: the optional templateResourceRefs of every KOF MCS: the ClusterDeployment (its metadata annotations
win over the cluster's, docs/contract.md), the CAPI Cluster and the SveltosCluster (so that annotation edits
re-render the values). Input: none. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof.clusterRefs" -}}
{{- toYaml (list
  (dict "identifier" "ClusterDeployment" "optional" true "resource" (dict "apiVersion" "k0rdent.mirantis.com/v1beta1" "kind" "ClusterDeployment" "name" "{{ .ClusterName }}"))
  (dict "identifier" "Cluster" "optional" true "resource" (dict "apiVersion" "cluster.x-k8s.io/v1beta2" "kind" "Cluster" "name" "{{ .ClusterName }}"))
  (dict "identifier" "SveltosCluster" "optional" true "resource" (dict "apiVersion" "lib.projectsveltos.io/v1beta1" "kind" "SveltosCluster" "name" "{{ .ClusterName }}"))
) -}}
{{- end -}}

{{/*
kof.thirdPartyOperators: the third-party operator services the collectors need on a remote cluster, each standalone
(no dependsOn): prometheus-operator-crds (the PodMonitor/ServiceMonitor CRDs) and opentelemetry-operator (the
OpenTelemetryCollector CRD and controller), ServiceTemplates `<catalog entry>-<version with . → ->` that
kof-mothership renders from `catalog`. Never on the management cluster: kof-operators installs both there through
Flux (docs/values-contract.md "Operators on remote clusters"). Input: the root context.
Output: YAML list of chain entries.
*/}}
{{- define "kof.thirdPartyOperators" -}}
{{- $v := .Values -}}
{{- $out := list -}}
{{- range list (list "prometheus-operator-crds" "prometheusOperatorCrds") (list "opentelemetry-operator" "opentelemetryOperator") -}}
{{- $name := index . 0 -}}
{{- $key := index . 1 -}}
{{- $entry := index $v.catalog $name | default dict -}}
{{- if not $entry.version -}}
{{- fail (printf "catalog.%s.version is required (ServiceTemplate of the %s service)" $name $name) -}}
{{- end -}}
{{- $out = append $out (dict "name" $name "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" $name "version" $entry.version)) "file" (printf "files/%s.tpl" $name) "data" (dict "values" (deepCopy (index $v $key).values | default dict) "annotation" "" "self" (dict "enabled" false)) "standalone" true) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof.credentials.templateName: the ServiceTemplate (and its source ConfigMap) that copies a VMUser credentials Secret
of the management cluster to the target cluster: `<chart>-vmuser-credentials-<version with . → ->`.
Input: the root context. Output: a DNS label.
*/}}
{{- define "kof.credentials.templateName" -}}
{{- include "kof.templateName" (dict "name" (printf "%s-vmuser-credentials" .Chart.Name) "version" .Chart.Version) -}}
{{- end -}}

{{/*
kof.credentials.service: the chain entry of the `kof-vmuser-credentials` service: Sveltos deploys the Secret that
files/vmuser-credentials.yaml builds from the templateResourceRef `VMUserCredentials` (a Secret the KOF operator
keeps on the management cluster) into the KOF namespace of the target cluster, so the password reaches the cluster
as a Secret object and never appears in Helm values or release data (docs/security.md). Standalone; kof-collectors
depends on it. Input: the root context. Output: YAML map (a chain entry).
*/}}
{{- define "kof.credentials.service" -}}
{{- toYaml (dict "name" "kof-vmuser-credentials" "namespace" .Values.namespace "template" (include "kof.credentials.templateName" .) "resources" true "standalone" true) -}}
{{- end -}}

{{/*
kof.credentials.objects: the source of the kof-vmuser-credentials service in the KCM namespace: a ConfigMap holding
the Sveltos resources template files/vmuser-credentials.yaml (annotated `projectsveltos.io/template`, after a line
setting $namespace to the KOF namespace) and the ServiceTemplate that deploys it as resources (KCM api/v1beta1
ServiceTemplateSpec.Resources: a local ConfigMap source, Sveltos policyRefs), both named kof.credentials.templateName.
Input: dict {root, labels} (labels: the chart's common labels as YAML). Output: two YAML documents.
*/}}
{{- define "kof.credentials.objects" -}}
{{- $v := .root.Values -}}
{{- $name := include "kof.credentials.templateName" .root -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}
  namespace: {{ $v.kcmNamespace }}
  labels:
    {{- .labels | nindent 4 }}
  annotations:
    projectsveltos.io/template: "ok"
data:
  secret.yaml: |
    {{- printf "{{- $namespace := %s }}" (toJson $v.namespace) | nindent 4 }}
    {{- .root.Files.Get "files/vmuser-credentials.yaml" | trimSuffix "\n" | nindent 4 }}
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceTemplate
metadata:
  name: {{ $name }}
  namespace: {{ $v.kcmNamespace }}
  labels:
    {{- .labels | nindent 4 }}
spec:
  resources:
    localSourceRef:
      kind: ConfigMap
      name: {{ $name }}
    deploymentType: Remote
{{- end -}}

{{/*
kof.metricSources: the metric source services every KOF cluster gets (docs/cost.md), each standalone: kube-state-metrics
(with KOF's custom-resource metrics for KCM ClusterDeployments, CAPI Clusters and Flux HelmReleases, and the RBAC
rules to list and watch them) and prometheus-node-exporter, ServiceTemplates `<catalog entry>-<version with . → ->`
that kof-mothership renders from `catalog`, in the KOF namespace. The cluster collector scrapes both (kof-collectors
`metricSources`), so kof-collectors depends on them. Empty when `metricSources.enabled` is false.
Input: the root context. Output: YAML list of chain entries.
*/}}
{{- define "kof.metricSources" -}}
{{- $v := .Values -}}
{{- $out := list -}}
{{- if $v.metricSources.enabled -}}
{{- $ksm := index $v.catalog "kube-state-metrics" | default dict -}}
{{- $ne := index $v.catalog "prometheus-node-exporter" | default dict -}}
{{- range list (list "kube-state-metrics" $ksm) (list "prometheus-node-exporter" $ne) -}}
{{- if not (index . 1).version -}}
{{- fail (printf "catalog.%s.version is required (ServiceTemplate of the %s service)" (index . 0) (index . 0)) -}}
{{- end -}}
{{- end -}}
{{- $ksmValues := mergeOverwrite (include "kof.kubeStateMetrics.computed" . | fromYaml) (deepCopy $v.metricSources.kubeStateMetrics.values) -}}
{{- $out = append $out (dict "name" "kube-state-metrics" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kube-state-metrics" "version" $ksm.version)) "file" "files/kube-state-metrics.tpl" "data" (dict "values" $ksmValues "annotation" "k0rdent.mirantis.com/kof-kube-state-metrics-values" "self" (dict "enabled" false)) "standalone" true) -}}
{{- $out = append $out (dict "name" "prometheus-node-exporter" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "prometheus-node-exporter" "version" $ne.version)) "file" "files/prometheus-node-exporter.tpl" "data" (dict "values" (deepCopy $v.metricSources.nodeExporter.values) "annotation" "k0rdent.mirantis.com/kof-node-exporter-values" "self" (dict "enabled" false)) "standalone" true) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof.opencostService: the OpenCost chain entry of one MultiClusterService (docs/cost.md), placed after kof-collectors
(it reads what the collectors store) in the KOF namespace, where the credentials Secret it names lives. read says
where this cluster's own usage is read (files/opencost.tpl): {url, fromConfig, secret}; self is the head's self
(the management cluster in M2M/M2R/regionless); configRef the templateResourceRef whose data has
read_metrics_endpoint; after extra dependencies. Empty when `metricSources.enabled` is false.
Input: dict {root, read, istio, self, configRef, after}. Output: YAML list of zero or one chain entry.
*/}}
{{- define "kof.opencostService" -}}
{{- $v := .root.Values -}}
{{- $out := list -}}
{{- if $v.metricSources.enabled -}}
{{- $oc := index $v.catalog "opencost" | default dict -}}
{{- if not $oc.version -}}
{{- fail "catalog.opencost.version is required (ServiceTemplate of the opencost service)" -}}
{{- end -}}
{{- $data := dict "values" (deepCopy $v.metricSources.opencost.values) "annotation" "k0rdent.mirantis.com/kof-opencost-values" "read" .read "istio" (eq (toString .istio) "true") "self" (get . "self" | default (dict "enabled" false)) "configRef" (get . "configRef" | default "") "regional" (dig "regional" "" (get . "self" | default dict)) -}}
{{- $out = append $out (dict "name" "opencost" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "opencost" "version" $oc.version)) "file" "files/opencost.tpl" "names" (list "childBase" "adminBase" "regionalVMAuth") "data" $data "after" (get . "after" | default list)) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof.kubeStateMetrics.computed: the kube-state-metrics values KOF computes: custom-resource state metrics (the
kube-state-metrics CustomResourceStateMetrics format, docs/cost.md lists the series) for KCM ClusterDeployments
(`kof_clusterdeployment_*`), CAPI Clusters (`kof_capi_cluster_*`) and Flux HelmReleases (`kof_helmrelease_*`):
an info series and one series per status condition (1 when True), and the RBAC rules that let kube-state-metrics
list and watch those kinds. Input: the root context. Output: YAML map of kube-state-metrics chart values.
*/}}
{{- define "kof.kubeStateMetrics.computed" -}}
{{- $kinds := list
  (dict "group" "k0rdent.mirantis.com" "version" "v1beta1" "kind" "ClusterDeployment" "resource" "clusterdeployments" "prefix" "kof_clusterdeployment" "info" (dict "template" (list "spec" "template") "role" (list "metadata" "labels" "k0rdent.mirantis.com/kof-cluster-role")))
  (dict "group" "cluster.x-k8s.io" "version" "v1beta2" "kind" "Cluster" "resource" "clusters" "prefix" "kof_capi_cluster" "info" (dict "phase" (list "status" "phase")))
  (dict "group" "helm.toolkit.fluxcd.io" "version" "v2" "kind" "HelmRelease" "resource" "helmreleases" "prefix" "kof_helmrelease" "info" (dict "chart" (list "spec" "chart" "spec" "chart") "version" (list "spec" "chart" "spec" "version")))
-}}
{{- $resources := list -}}
{{- $rules := list -}}
{{- range $kinds -}}
{{- $info := dict "name" "info" "help" (printf "Information about a %s." .kind) "each" (dict "type" "Info" "info" (dict "labelsFromPath" .info)) -}}
{{- $cond := dict "name" "status_condition" "help" (printf "The status conditions of a %s: 1 when the condition is True." .kind) "each" (dict "type" "Gauge" "gauge" (dict "path" (list "status" "conditions") "labelsFromPath" (dict "type" (list "type") "reason" (list "reason")) "valueFrom" (list "status"))) -}}
{{- $resources = append $resources (dict "groupVersionKind" (dict "group" .group "version" .version "kind" .kind) "metricNamePrefix" .prefix "labelsFromPath" (dict "name" (list "metadata" "name") "namespace" (list "metadata" "namespace")) "metrics" (list $info $cond)) -}}
{{- $rules = append $rules (dict "apiGroups" (list .group) "resources" (list .resource) "verbs" (list "list" "watch")) -}}
{{- end -}}
{{- toYaml (dict "customResourceState" (dict "enabled" true "config" (dict "kind" "CustomResourceStateMetrics" "spec" (dict "resources" $resources))) "rbac" (dict "extraRules" $rules)) -}}
{{- end -}}
