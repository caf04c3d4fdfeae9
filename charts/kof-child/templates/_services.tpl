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
to its own storage in-cluster) and, for M2R, the regional cluster's name and namespace.
Input: the root context. Output: YAML map {enabled, name, namespace, secretName, regional, regionalNamespace}.
*/}}
{{- define "kof-child.self" -}}
{{- $v := .Values -}}
{{- $mode := include "kof-child.mode" . -}}
{{- $secret := "" -}}
{{- $ns := $v.fromManagement.toRegionalCluster.namespace | default $v.kcmNamespace -}}
{{- if eq $mode "m2r" -}}
{{- $secret = printf "kof-vmuser-creds-%s" (include "kof.names.adminVMUserBase" (dict "cluster" $v.fromManagement.toRegionalCluster.name "namespace" $ns)) -}}
{{- end -}}
{{- toYaml (dict "enabled" true "name" $v.regionless.clusterName "namespace" $v.kcmNamespace "secretName" $secret "regional" $v.fromManagement.toRegionalCluster.name "regionalNamespace" $ns) -}}
{{- end -}}

{{/*
kof-child.endpointScalars: the scalar annotations of the collectors' values: each write endpoint annotation of a
cluster sets `kof.<signal>.endpoint` (above the chart's values, below the kof-collectors-values annotation).
Input: none. Output: YAML map annotation → values path.
*/}}
{{- define "kof-child.endpointScalars" -}}
k0rdent.mirantis.com/kof-write-metrics-endpoint: kof.metrics.endpoint
k0rdent.mirantis.com/kof-write-logs-endpoint: kof.logs.endpoint
k0rdent.mirantis.com/kof-write-audit-logs-endpoint: kof.auditLogs.endpoint
k0rdent.mirantis.com/kof-write-traces-endpoint: kof.traces.endpoint
{{- end -}}

{{/*
kof-child.storageScalars: the scalar annotations of the M2M storage values, as kof-regional reads them for every
storage (docs/annotations.md). Input: none. Output: YAML map annotation → values path.
*/}}
{{- define "kof-child.storageScalars" -}}
k0rdent.mirantis.com/kof-regional-domain: domain
k0rdent.mirantis.com/kof-cert-email: certEmail
k0rdent.mirantis.com/kof-storage-class: storageClass
k0rdent.mirantis.com/kof-gateway-name: gateway.name
k0rdent.mirantis.com/kof-gateway-namespace: gateway.namespace
{{- end -}}

{{/*
kof-child.childServices: the services of a child MultiClusterService: prometheus-operator-crds and
opentelemetry-operator (kof.thirdPartyOperators), kof-vmuser-credentials (the child's credentials Secret), kof-operators
(optional), the metric sources (kof.metricSources), then kof-collectors (layer-2 template files/kof-collectors.tpl),
which depends on kof-operators (when on), on both operators, on the credentials and on the metric sources, then
OpenCost reading the child's own data (its regional's read endpoint from the ChildConfig, or in Istio its in-mesh
VMAuth) with the child's tenant-filtered credentials. Input: dict {root, istio}. Output: YAML list of KCM Service objects.
*/}}
{{- define "kof-child.childServices" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $shared := include "kof.shared" (dict "root" $root "istio" .istio) | fromYaml -}}
{{- $svcs := include "kof.thirdPartyOperators" $root | fromYamlArray -}}
{{- $svcs = append $svcs (include "kof.credentials.service" $root | fromYaml) -}}
{{- $after := list -}}
{{- range $svcs -}}
{{- $after = append $after (dict "name" .name "namespace" .namespace) -}}
{{- end -}}
{{- if $v.operators.enabled -}}
{{- $svcs = append $svcs (dict "name" "kof-operators" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kof-operators" "version" $root.Chart.Version)) "file" "files/kof-operators.tpl" "data" (dict "values" (mergeOverwrite (dict) (deepCopy $shared) (deepCopy $v.operators.values)) "annotation" "k0rdent.mirantis.com/kof-operators-values" "self" (dict "enabled" false))) -}}
{{- end -}}
{{- $self := dict "enabled" false "name" "" "namespace" "" "secretName" "" "regional" "" -}}
{{- $data := dict "shared" $shared "values" $v.collectors "annotation" "k0rdent.mirantis.com/kof-collectors-values" "scalars" (include "kof-child.endpointScalars" . | fromYaml) "mode" "child" "self" $self "istio" (eq .istio "true") "namespace" $v.namespace "pkiPath" $v.pkiPath "endpoints" (include "kof-child.paths" . | fromYaml) "configRef" "ChildConfig" "regional" $v.regionless.clusterName -}}
{{- range include "kof.metricSources" $root | fromYamlArray -}}
{{- $svcs = append $svcs . -}}
{{- $after = append $after (dict "name" .name "namespace" .namespace) -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" "kof-collectors" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kof-collectors" "version" $root.Chart.Version)) "file" "files/kof-collectors.tpl" "names" (list "childBase" "regionalVMAuth") "data" $data "after" $after) -}}
{{- $read := dict "url" "" "fromConfig" true "secret" "childBase" -}}
{{- $svcs = concat $svcs (include "kof.opencostService" (dict "root" $root "read" $read "istio" .istio "configRef" "ChildConfig") | fromYamlArray) -}}
{{- include "kof.chain" (dict "root" $root "services" $svcs) -}}
{{- end -}}

{{/*
kof-child.mgmtServices: the services of the management-cluster MultiClusterService. M2M: kof-storage (VictoriaMetrics
off, promxy and multilevel select on, `storage` values), then kof-collectors writing in-cluster; M2R:
kof-vmuser-credentials (the regional cluster's admin credentials Secret), then kof-collectors writing to the
regional cluster; both with the metric sources before kof-collectors and OpenCost after it, reading the management
cluster's own data (M2M: its vmselect in-cluster; M2R: the regional's read endpoint with the regional admin
credentials the collectors use). Input: dict {root, istio}. Output: YAML list of KCM Service objects.
*/}}
{{- define "kof-child.mgmtServices" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $mode := include "kof-child.mode" $root -}}
{{- $shared := include "kof.shared" (dict "root" $root "istio" .istio) | fromYaml -}}
{{- $self := include "kof-child.self" $root | fromYaml -}}
{{- $svcs := list -}}
{{- $after := list -}}
{{- $endpoints := include "kof-child.paths" . | fromYaml -}}
{{- $regional := $self.regional -}}
{{- $configRef := "RegionalConfig" -}}
{{- if eq $mode "m2m" -}}
{{- $ns := $v.namespace -}}
{{- $regional = $v.regionless.clusterName -}}
{{- $configRef = "" -}}
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
{{- $svcs = append $svcs (dict "name" "kof-storage" "namespace" $ns "template" (include "kof.templateName" (dict "name" "kof-storage" "version" $root.Chart.Version)) "file" "files/kof-storage.tpl" "data" (dict "shared" $shared "computed" $computed "values" $v.storage "annotation" "k0rdent.mirantis.com/kof-storage-values" "scalars" (include "kof-child.storageScalars" . | fromYaml) "self" $self)) -}}
{{- else -}}
{{- $cred := include "kof.credentials.service" $root | fromYaml -}}
{{- $svcs = append $svcs $cred -}}
{{- $after = append $after (dict "name" $cred.name "namespace" $cred.namespace) -}}
{{- end -}}
{{- $data := dict "shared" $shared "values" $v.fromManagement.collectors "annotation" "k0rdent.mirantis.com/kof-collectors-values" "scalars" (include "kof-child.endpointScalars" . | fromYaml) "mode" $mode "self" $self "istio" (eq .istio "true") "namespace" $v.namespace "pkiPath" $v.pkiPath "endpoints" $endpoints "configRef" $configRef "regional" $regional -}}
{{- range include "kof.metricSources" $root | fromYamlArray -}}
{{- $svcs = append $svcs . -}}
{{- $after = append $after (dict "name" .name "namespace" .namespace) -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" "kof-collectors" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kof-collectors" "version" $root.Chart.Version)) "file" "files/kof-collectors.tpl" "names" (list "childBase" "regionalVMAuth") "data" $data "after" $after) -}}
{{- $read := dict "url" "" "fromConfig" true "secret" $self.secretName -}}
{{- if eq $mode "m2m" -}}
{{- $read = dict "url" (printf "http://vmselect-cluster.%s:8481/select/0/prometheus" $v.namespace) "fromConfig" false "secret" "" -}}
{{- end -}}
{{- $svcs = concat $svcs (include "kof.opencostService" (dict "root" $root "read" $read "istio" .istio "self" $self "configRef" $configRef) | fromYamlArray) -}}
{{- include "kof.chain" (dict "root" $root "services" $svcs) -}}
{{- end -}}

{{/*
kof-child.childRefs: templateResourceRefs of a child MCS: the cluster refs (kof.clusterRefs), the ChildConfig
ConfigMap `kof-cluster-config-<cluster>` (names.ChildConfigMap; required: the KOF operator writes it) and the child's
VMUser Secret `kof-vmuser-creds-<base>` (identifier VMUserCredentials, required; kof-vmuser-credentials copies it to
the child), base as operator/names.ChildVMUserBase, computed by Sveltos from the cluster's name and namespace.
Input: none. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-child.childRefs" -}}
{{- $secret := printf "kof-vmuser-creds-{{ %s }}" (include "kof.names.childVMUserBaseExpr" (dict "name" ".ClusterName" "namespace" ".ClusterNamespace")) -}}
{{- $refs := include "kof.clusterRefs" . | fromYamlArray -}}
{{- $refs = append $refs (dict "identifier" "ChildConfig" "resource" (dict "apiVersion" "v1" "kind" "ConfigMap" "name" (include "kof.names.composedTemplate" (dict "prefix" "kof-cluster-config-" "nameExpr" ".ClusterName")))) -}}
{{- $refs = append $refs (dict "identifier" "VMUserCredentials" "resource" (dict "apiVersion" "v1" "kind" "Secret" "name" $secret)) -}}
{{- toYaml $refs -}}
{{- end -}}

{{/*
kof-child.mgmtRefs: templateResourceRefs of the management-cluster MCS: the cluster refs; for M2R also the regional
cluster's ConfigMap `kof-<regional>` (its write endpoints) and its admin VMUser Secret (identifier VMUserCredentials:
the credentials the management cluster's collectors use, copied by kof-vmuser-credentials), both required.
Input: the root context. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-child.mgmtRefs" -}}
{{- $v := .Values -}}
{{- $refs := include "kof.clusterRefs" . | fromYamlArray -}}
{{- if eq (include "kof-child.mode" .) "m2r" -}}
{{- $self := include "kof-child.self" . | fromYaml -}}
{{- $refs = append $refs (dict "identifier" "RegionalConfig" "resource" (dict "apiVersion" "v1" "kind" "ConfigMap" "namespace" $self.regionalNamespace "name" (include "kof.names.composed" (dict "prefix" "kof-" "name" $self.regional)))) -}}
{{- $refs = append $refs (dict "identifier" "VMUserCredentials" "resource" (dict "apiVersion" "v1" "kind" "Secret" "namespace" $self.regionalNamespace "name" $self.secretName)) -}}
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
