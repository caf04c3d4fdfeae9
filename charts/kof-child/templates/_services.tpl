{{/*
kof-child.paths: the write path of every signal behind a regional VMAuth (docs/contract.md "Endpoints").
Input: none. Output: YAML map signal → path.
*/}}
{{- define "kof-child.paths" -}}
metrics: /vm/insert/0/prometheus/api/v1/write
logs: /vli/insert/opentelemetry/v1/logs
auditLogs: /vlai/insert/opentelemetry/v1/logs
traces: /vti/insert/opentelemetry/v1/traces
{{- end -}}

{{/*
kof-child.mode: which management-cluster mode is on: "m2m" (fromManagement.toManagementCluster.enabled), "m2r"
(fromManagement.toRegionalCluster.name) or "" (neither). Input: the root context. Output: a string.
*/}}
{{- define "kof-child.mode" -}}
{{- if .Values.fromManagement.toManagementCluster.enabled -}}
m2m
{{- else if .Values.fromManagement.toRegionalCluster.name -}}
m2r
{{- end -}}
{{- end -}}

{{/*
kof-child.self: the management cluster as the layer-2 templates see it in M2M/M2R: its KOF name and namespace,
the credentials Secret of its collectors (M2R: the regional cluster's admin bundle
`kof-vmuser-creds-<adminVMUserBase>`, which the KOF operator keeps for every regional cluster; M2M: none, it writes
to its own storage in-cluster) and, for M2R, the regional cluster's name.
Input: the root context. Output: YAML map {name, namespace, secretName, regional}.
*/}}
{{- define "kof-child.self" -}}
{{- $v := .Values -}}
{{- $mode := include "kof-child.mode" . -}}
{{- $secret := "" -}}
{{- if eq $mode "m2r" -}}
{{- $ns := $v.fromManagement.toRegionalCluster.namespace | default $v.kcmNamespace -}}
{{- $secret = printf "kof-vmuser-creds-%s" (include "kof.names.adminVMUserBase" (dict "cluster" $v.fromManagement.toRegionalCluster.name "namespace" $ns)) -}}
{{- end -}}
{{- toYaml (dict "name" $v.regionless.clusterName "namespace" $v.kcmNamespace "secretName" $secret "regional" $v.fromManagement.toRegionalCluster.name) -}}
{{- end -}}

{{/*
kof-child.chain: services in dependsOn order: each depends on the one before it, except a `standalone` service
(no dependsOn, and not the one before the next); a service's `after` (list of {name, namespace}) adds to its
dependsOn. Input: dict {root, services} (each {name, namespace, template, file, data, standalone?, after?}).
Output: YAML list of KCM Service objects.
*/}}
{{- define "kof-child.chain" -}}
{{- $out := list -}}
{{- $prev := dict -}}
{{- range .services -}}
{{- $s := dict "name" .name "namespace" .namespace "template" .template "values" (include "kof-child.layer2" (dict "root" $.root "file" .file "data" .data)) -}}
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
kof-child.thirdPartyOperators: the third-party operator services the collectors need on a remote cluster, each
standalone (no dependsOn): prometheus-operator-crds (the PodMonitor/ServiceMonitor CRDs) and opentelemetry-operator
(the OpenTelemetryCollector CRD and controller), ServiceTemplates `<catalog entry>-<version with . → ->` that
kof-mothership renders from `catalog`. Never on the management cluster: kof-operators installs both there through
Flux (docs/values-contract.md "Operators on remote clusters"). Input: the root context.
Output: YAML list of chain entries.
*/}}
{{- define "kof-child.thirdPartyOperators" -}}
{{- $v := .Values -}}
{{- $out := list -}}
{{- range list (list "prometheus-operator-crds" "prometheusOperatorCrds") (list "opentelemetry-operator" "opentelemetryOperator") -}}
{{- $name := index . 0 -}}
{{- $key := index . 1 -}}
{{- $entry := index $v.catalog $name | default dict -}}
{{- if not $entry.version -}}
{{- fail (printf "catalog.%s.version is required (ServiceTemplate of the %s service)" $name $name) -}}
{{- end -}}
{{- $out = append $out (dict "name" $name "namespace" $v.namespace "template" (include "kof-child.templateName" (dict "name" $name "version" $entry.version)) "file" (printf "files/%s.tpl" $name) "data" (dict "values" (deepCopy (index $v $key).values | default dict) "annotation" "") "standalone" true) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
kof-child.childServices: the services of a child MultiClusterService: prometheus-operator-crds and
opentelemetry-operator (kof-child.thirdPartyOperators), kof-operators (optional), then kof-collectors (layer-2
template files/kof-collectors.tpl), which depends on kof-operators (when on) and on both operators.
Input: dict {root, istio}. Output: YAML list of KCM Service objects.
*/}}
{{- define "kof-child.childServices" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $shared := include "kof-child.shared" (dict "root" $root "istio" .istio) | fromYaml -}}
{{- $svcs := include "kof-child.thirdPartyOperators" $root | fromYamlArray -}}
{{- $after := list -}}
{{- range $svcs -}}
{{- $after = append $after (dict "name" .name "namespace" .namespace) -}}
{{- end -}}
{{- if $v.operators.enabled -}}
{{- $svcs = append $svcs (dict "name" "kof-operators" "namespace" $v.namespace "template" (include "kof-child.templateName" (dict "name" "kof-operators" "version" $root.Chart.Version)) "file" "files/kof-operators.tpl" "data" (dict "values" (mergeOverwrite (dict) (deepCopy $shared) (deepCopy $v.operators.values)) "annotation" "k0rdent.mirantis.com/kof-operators-values")) -}}
{{- end -}}
{{- $self := dict "name" "" "namespace" "" "secretName" "" "regional" "" -}}
{{- $svcs = append $svcs (dict "name" "kof-collectors" "namespace" $v.namespace "template" (include "kof-child.templateName" (dict "name" "kof-collectors" "version" $root.Chart.Version)) "file" "files/kof-collectors.tpl" "data" (dict "shared" $shared "values" $v.collectors "annotation" "k0rdent.mirantis.com/kof-collectors-values" "mode" "child" "self" $self "istio" (eq .istio "true") "namespace" $v.namespace "pkiPath" $v.pkiPath "endpoints" (include "kof-child.paths" . | fromYaml)) "after" $after) -}}
{{- include "kof-child.chain" (dict "root" $root "services" $svcs) -}}
{{- end -}}

{{/*
kof-child.mgmtServices: the services of the management-cluster MultiClusterService. M2M: kof-storage (VictoriaMetrics
off, promxy and multilevel select on, `storage` values), then kof-collectors writing in-cluster; M2R: kof-collectors
writing to the regional cluster. Input: dict {root, istio}. Output: YAML list of KCM Service objects.
*/}}
{{- define "kof-child.mgmtServices" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $mode := include "kof-child.mode" $root -}}
{{- $shared := include "kof-child.shared" (dict "root" $root "istio" .istio) | fromYaml -}}
{{- $self := include "kof-child.self" $root | fromYaml -}}
{{- $svcs := list -}}
{{- $endpoints := include "kof-child.paths" . | fromYaml -}}
{{- if eq $mode "m2m" -}}
{{- $ns := $v.namespace -}}
{{- $endpoints = dict
  "metrics" (printf "http://vminsert-cluster.%s:8480/insert/0/prometheus/api/v1/write" $ns)
  "logs" (printf "http://vlinsert-logs.%s:9481/insert/opentelemetry/v1/logs" $ns)
  "auditLogs" (printf "http://vlinsert-audit-logs.%s:9481/insert/opentelemetry/v1/logs" $ns)
  "traces" (printf "http://vtinsert-traces.%s:10481/insert/opentelemetry/v1/traces" $ns) -}}
{{- $computed := dict
  "clusterName" $v.regionless.clusterName
  "victoriametrics" (dict "enabled" false)
  "cert-manager" (dict "enabled" false)
  "gateway" (dict "enabled" false)
  "promxy" (dict "enabled" true "targets" (list (printf "vmselect-cluster.%s.svc:8481" $ns)))
  "multilevel" (dict "enabled" true "namespace" $root.Release.Namespace) -}}
{{- $svcs = append $svcs (dict "name" "kof-storage" "namespace" $ns "template" (include "kof-child.templateName" (dict "name" "kof-storage" "version" $root.Chart.Version)) "file" "files/kof-storage.tpl" "data" (dict "shared" $shared "computed" $computed "values" $v.storage "annotation" "k0rdent.mirantis.com/kof-storage-values")) -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" "kof-collectors" "namespace" $v.namespace "template" (include "kof-child.templateName" (dict "name" "kof-collectors" "version" $root.Chart.Version)) "file" "files/kof-collectors.tpl" "data" (dict "shared" $shared "values" $v.fromManagement.collectors "annotation" "k0rdent.mirantis.com/kof-collectors-values" "mode" $mode "self" $self "istio" (eq .istio "true") "namespace" $v.namespace "pkiPath" $v.pkiPath "endpoints" $endpoints)) -}}
{{- include "kof-child.chain" (dict "root" $root "services" $svcs) -}}
{{- end -}}

{{/*
kof-child.clusterRefs: the optional templateResourceRefs of every KOF MCS: the ClusterDeployment (its metadata
annotations win over the cluster's, docs/contract.md), the CAPI Cluster and the SveltosCluster (so that annotation edits
re-render the values). Input: none. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-child.clusterRefs" -}}
{{- toYaml (list
  (dict "identifier" "ClusterDeployment" "optional" true "resource" (dict "apiVersion" "k0rdent.mirantis.com/v1beta1" "kind" "ClusterDeployment" "name" "{{ .ClusterName }}"))
  (dict "identifier" "Cluster" "optional" true "resource" (dict "apiVersion" "cluster.x-k8s.io/v1beta2" "kind" "Cluster" "name" "{{ .ClusterName }}"))
  (dict "identifier" "SveltosCluster" "optional" true "resource" (dict "apiVersion" "lib.projectsveltos.io/v1beta1" "kind" "SveltosCluster" "name" "{{ .ClusterName }}"))
) -}}
{{- end -}}

{{/*
kof-child.childRefs: templateResourceRefs of a child MCS: the cluster refs, the ChildConfig ConfigMap
`kof-cluster-config-<cluster>` (names.ChildConfigMap; required: the KOF operator writes it) and the child's VMUser Secret
`kof-vmuser-creds-<base>` (required), base as operator/names.ChildVMUserBase, computed by Sveltos from the cluster's
name and namespace. Input: none. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-child.childRefs" -}}
{{- $secret := "kof-vmuser-creds-{{ $n := .ClusterName }}{{ $r := regexReplaceAll \"[^a-z0-9-]+\" (lower $n) \"-\" | trimAll \"-\" | trunc 29 | trimAll \"-\" }}{{ if $r }}{{ $r }}-{{ end }}{{ printf \"kof-cluster-config-%s/%s\" $n .ClusterNamespace | sha256sum | trunc 10 }}" -}}
{{- $refs := include "kof-child.clusterRefs" . | fromYamlArray -}}
{{- $refs = append $refs (dict "identifier" "ChildConfig" "resource" (dict "apiVersion" "v1" "kind" "ConfigMap" "name" (include "kof.names.composedTemplate" (dict "prefix" "kof-cluster-config-" "nameExpr" ".ClusterName")))) -}}
{{- $refs = append $refs (dict "identifier" "ChildVMUser" "resource" (dict "apiVersion" "v1" "kind" "Secret" "name" $secret)) -}}
{{- toYaml $refs -}}
{{- end -}}

{{/*
kof-child.mgmtRefs: templateResourceRefs of the management-cluster MCS: the cluster refs; for M2R also the regional
cluster's ConfigMap `kof-<regional>` (its write endpoints) and its admin VMUser Secret (the credentials the
management cluster's collectors use; identifier ChildVMUser, as for children), both required.
Input: the root context. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-child.mgmtRefs" -}}
{{- $v := .Values -}}
{{- $refs := include "kof-child.clusterRefs" . | fromYamlArray -}}
{{- if eq (include "kof-child.mode" .) "m2r" -}}
{{- $self := include "kof-child.self" . | fromYaml -}}
{{- $ns := $v.fromManagement.toRegionalCluster.namespace | default $v.kcmNamespace -}}
{{- $refs = append $refs (dict "identifier" "RegionalConfig" "resource" (dict "apiVersion" "v1" "kind" "ConfigMap" "namespace" $ns "name" (include "kof.names.composed" (dict "prefix" "kof-" "name" $v.fromManagement.toRegionalCluster.name)))) -}}
{{- $refs = append $refs (dict "identifier" "ChildVMUser" "resource" (dict "apiVersion" "v1" "kind" "Secret" "namespace" $ns "name" $self.secretName)) -}}
{{- end -}}
{{- toYaml $refs -}}
{{- end -}}

{{/*
kof-child.selector: the clusterSelector of a child MultiClusterService, never empty: `kof-cluster-role: child` plus,
when both variants are rendered, `istio-role: member` (Istio variant) or its absence (standard variant), plus the
version gate label unless autoUpgrade. In regionless Istio mode the Istio variant alone selects every child. Input: dict {root, variant, both}. Output: YAML of a metav1.LabelSelector.
*/}}
{{- define "kof-child.selector" -}}
matchLabels:
  k0rdent.mirantis.com/kof-cluster-role: child
  {{- if and .both (eq .variant "istio") }}
  k0rdent.mirantis.com/istio-role: member
  {{- end }}
  {{- if not .root.Values.autoUpgrade }}
  k0rdent.mirantis.com/kof-version: {{ .root.Chart.Version | quote }}
  {{- end }}
{{- if and .both (eq .variant "standard") }}
matchExpressions:
  - key: k0rdent.mirantis.com/istio-role
    operator: DoesNotExist
{{- end }}
{{- end -}}
