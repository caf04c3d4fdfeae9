{{/*
kof-regional.services: the services of one regional MultiClusterService (kof.chain puts them in dependsOn order and
makes every Helm service wait for its release):
- on a regional cluster: prometheus-operator-crds and opentelemetry-operator (standalone); outside Istio the chart
  that publishes VMAuth, Envoy Gateway (it brings the Gateway API CRDs) or ingress-nginx, then cert-manager (after
  the CRDs its Gateway API support watches, which is on only with Envoy Gateway); kof-operators; the VictoriaMetrics
  operator (its Gateway API support on with Envoy Gateway); external-dns (standalone, with `external-dns.enabled`,
  never in Istio mode: files/external-dns.tpl); with `grafana.enabled` (or `storage.grafana.enabled`),
  grafana-operator and kof-storage's `grafana.enabled`; kof-storage (plus the cluster's vmrules ConfigMap
  `kof-record-vmrules-<cluster>` as valuesFrom); the metric sources kube-state-metrics and prometheus-node-exporter
  (standalone, kof.metricSources); kof-collectors, which also depends on both operators and on the metric sources;
  OpenCost (kof.opencostService), after kof-collectors, reading the cluster's own VMAuth with its admin credentials;
- on the management cluster in regionless mode: kof-vmuser-credentials (the admin credentials Secret, copied into
  the KOF namespace), external-dns (as on a regional cluster), kof-storage, the metric sources, kof-collectors, OpenCost. The operators, cert-manager and the ingress controller come from
  KCM and the kof umbrella there (kof-operators), and the management cluster's rules are kof-mothership's.
Each `values` is a layer-2 template (files/*.tpl).
Input: dict {root, istio, self} (self: the management cluster in regionless mode, else empty).
Output: YAML list of KCM Service objects (k0rdent/kcm api/v1beta1 Service).
*/}}
{{- define "kof-regional.services" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $istio := eq .istio "true" -}}
{{- $self := .self -}}
{{- $gatewayMode := and (not $istio) (eq $v.ingressMode "gateway") -}}
{{- $shared := include "kof.shared" (dict "root" $root "istio" .istio) | fromYaml -}}
{{- $none := dict "enabled" false -}}
{{- $svcs := list -}}
{{- $after := list -}}
{{- if not $self -}}
{{- $svcs = include "kof.thirdPartyOperators" $root | fromYamlArray -}}
{{- range $svcs -}}
{{- $after = append $after (dict "name" .name "namespace" .namespace) -}}
{{- end -}}
{{- if not $istio -}}
{{- if $gatewayMode -}}
{{- $eg := index $v.catalog "envoy-gateway" -}}
{{- $svcs = append $svcs (dict "name" "envoy-gateway" "namespace" $v.envoyGateway.namespace "template" (include "kof.templateName" (dict "name" "envoy-gateway" "version" $eg.version)) "file" "files/envoy-gateway.tpl" "data" (dict "values" $v.envoyGateway.values "annotation" "k0rdent.mirantis.com/kof-envoy-gateway-values" "self" $none)) -}}
{{- else -}}
{{- $in := index $v.catalog "ingress-nginx" -}}
{{- $svcs = append $svcs (dict "name" "ingress-nginx" "namespace" $v.ingressNginx.namespace "template" (include "kof.templateName" (dict "name" "ingress-nginx" "version" $in.version)) "file" "files/ingress-nginx.tpl" "data" (dict "values" $v.ingressNginx.values "annotation" "k0rdent.mirantis.com/kof-ingress-nginx-values" "self" $none)) -}}
{{- end -}}
{{- if $v.certManager.enabled -}}
{{- $cm := index $v.catalog "cert-manager" -}}
{{- $cmComputed := dict "config" (dict "apiVersion" "controller.config.cert-manager.io/v1alpha1" "kind" "ControllerConfiguration" "enableGatewayAPI" $gatewayMode) -}}
{{- $svcs = append $svcs (dict "name" "cert-manager" "namespace" $v.certManager.namespace "template" (include "kof.templateName" (dict "name" "cert-manager" "version" $cm.version)) "file" "files/cert-manager.tpl" "data" (dict "values" (mergeOverwrite (dict) $cmComputed (deepCopy $v.certManager.values)) "annotation" "" "self" $none)) -}}
{{- end -}}
{{- end -}}
{{- if $v.operators.enabled -}}
{{- $svcs = append $svcs (dict "name" "kof-operators" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kof-operators" "version" $root.Chart.Version)) "file" "files/kof-operators.tpl" "data" (dict "values" (mergeOverwrite (dict) (deepCopy $shared) (deepCopy $v.operators.values)) "annotation" "k0rdent.mirantis.com/kof-operators-values" "self" $none)) -}}
{{- end -}}
{{- $vmo := index $v.catalog "victoria-metrics-operator" -}}
{{- $vmoValues := deepCopy $v.victoriaMetricsOperator.values -}}
{{- if $v.global.registry -}}
{{- $vmoValues = mergeOverwrite (dict "global" (dict "image" (dict "registry" $v.global.registry))) $vmoValues -}}
{{- end -}}
{{- if $gatewayMode -}}
{{- $env := get $vmoValues "env" | default list -}}
{{- $named := list -}}
{{- range $env }}{{ $named = append $named (get . "name") }}{{ end -}}
{{- if not (has "VM_GATEWAY_API_ENABLED" $named) -}}
{{- $_ := set $vmoValues "env" (append $env (dict "name" "VM_GATEWAY_API_ENABLED" "value" "true")) -}}
{{- end -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" "victoria-metrics-operator" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "victoria-metrics-operator" "version" $vmo.version)) "file" "files/victoria-metrics-operator.tpl" "data" (dict "values" $vmoValues "annotation" "k0rdent.mirantis.com/kof-victoria-metrics-operator-values" "self" $none)) -}}
{{- end -}}
{{- $selfData := dict "enabled" false "name" "" "namespace" "" "domain" "" "certEmail" "" -}}
{{- if $self -}}
{{- $selfData = dict "enabled" true "name" $v.regionless.clusterName "namespace" $v.kcmNamespace "domain" $v.regionless.domain "certEmail" $v.regionless.certEmail -}}
{{- $cred := include "kof.credentials.service" $root | fromYaml -}}
{{- $svcs = append $svcs $cred -}}
{{- $after = append $after (dict "name" $cred.name "namespace" $cred.namespace) -}}
{{- end -}}
{{- $dns := index $v "external-dns" -}}
{{- if and $dns.enabled (not $istio) -}}
{{- $ed := index $v.catalog "external-dns" -}}
{{- $sources := ternary (list "gateway-httproute") (list "ingress") $gatewayMode -}}
{{- $svcs = append $svcs (dict "name" "external-dns" "namespace" $dns.namespace "template" (include "kof.templateName" (dict "name" "external-dns" "version" $ed.version)) "file" "files/external-dns.tpl" "data" (dict "values" $dns.values "provider" $dns.provider "secret" $dns.credentialsSecretName "sources" $sources "annotation" "k0rdent.mirantis.com/kof-external-dns-values" "scalars" (dict "k0rdent.mirantis.com/kof-external-dns-provider" "provider.name") "self" $selfData) "standalone" true) -}}
{{- end -}}
{{- $scalars := dict
  "k0rdent.mirantis.com/kof-regional-domain" "domain"
  "k0rdent.mirantis.com/kof-cert-email" "certEmail"
  "k0rdent.mirantis.com/kof-storage-class" "storageClass"
  "k0rdent.mirantis.com/kof-gateway-name" "gateway.name"
  "k0rdent.mirantis.com/kof-gateway-namespace" "gateway.namespace"
-}}
{{- $storage := dict "name" "kof-storage" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kof-storage" "version" $root.Chart.Version)) "file" "files/kof-storage.tpl" "data" (dict "shared" $shared "values" $v.storage "annotation" "k0rdent.mirantis.com/kof-storage-values" "scalars" $scalars "self" $selfData "istio" $istio "ingressMode" $v.ingressMode) -}}
{{- /* The regional Grafana needs grafana-operator: on with `grafana.enabled` or with `storage.grafana.enabled`. */ -}}
{{- if and (or $v.grafana.enabled (dig "grafana" "enabled" false $v.storage)) (not $self) -}}
{{- $go := index $v.catalog "grafana-operator" -}}
{{- $svcs = append $svcs (dict "name" "grafana-operator" "namespace" $v.grafana.namespace "template" (include "kof.templateName" (dict "name" "grafana-operator" "version" $go.version)) "file" "files/grafana-operator.tpl" "data" (dict "values" $v.grafana.values "annotation" "" "self" $none)) -}}
{{- $_ := set $storage.data "values" (mergeOverwrite (dict "grafana" (dict "enabled" true)) (deepCopy $v.storage)) -}}
{{- end -}}
{{- if not $self -}}
{{- $_ := set $storage "valuesFrom" (list (dict "kind" "ConfigMap" "name" (include "kof.names.composedTemplate" (dict "prefix" "kof-record-vmrules-" "nameExpr" ".Cluster.metadata.name")))) -}}
{{- end -}}
{{- $svcs = append $svcs $storage -}}
{{- range include "kof.metricSources" $root | fromYamlArray -}}
{{- $svcs = append $svcs . -}}
{{- $after = append $after (dict "name" .name "namespace" .namespace) -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" "kof-collectors" "namespace" $v.namespace "template" (include "kof.templateName" (dict "name" "kof-collectors" "version" $root.Chart.Version)) "file" "files/kof-collectors.tpl" "names" (list "adminBase") "data" (dict "shared" $shared "values" $v.collectors "annotation" "k0rdent.mirantis.com/kof-collectors-values" "self" $selfData "namespace" $v.namespace) "after" $after) -}}
{{- $read := dict "url" (printf "http://vmauth-cluster.%s:8427/vm/select/0/prometheus" $v.namespace) "fromConfig" false "secret" "adminBase" -}}
{{- $svcs = concat $svcs (include "kof.opencostService" (dict "root" $root "read" $read "istio" .istio "self" $selfData) | fromYamlArray) -}}
{{- include "kof.chain" (dict "root" $root "services" $svcs) -}}
{{- end -}}

{{/*
kof-regional.templateResourceRefs: the management-cluster objects every regional service's values may read: the
cluster refs of kof.clusterRefs and, in regionless mode, the admin VMUser Secret the KOF operator keeps in the KCM
namespace (identifier VMUserCredentials, required: kof-vmuser-credentials copies it into the KOF namespace). On a
regional cluster the operator propagates the admin bundle itself.
Input: dict {root, self}. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-regional.templateResourceRefs" -}}
{{- $v := .root.Values -}}
{{- $refs := include "kof.clusterRefs" . | fromYamlArray -}}
{{- if .self -}}
{{- $admin := dict "apiVersion" "v1" "kind" "Secret" "namespace" $v.kcmNamespace "name" (printf "kof-vmuser-creds-%s" (include "kof.names.adminVMUserBase" (dict "cluster" $v.regionless.clusterName "namespace" $v.kcmNamespace))) -}}
{{- $refs = append $refs (dict "identifier" "VMUserCredentials" "resource" $admin) -}}
{{- end -}}
{{- toYaml $refs -}}
{{- end -}}

{{/*
kof-regional.selector: the clusterSelector of one regional MultiClusterService, never empty: the management cluster
in regionless mode; else `kof-cluster-role: regional` plus, when both variants are rendered, `istio-role: member`
(Istio variant) or its absence (standard variant), so that no cluster matches both; plus the version gate label
unless autoUpgrade. Input: dict {root, variant: "standard"|"istio", both: bool, self: bool}.
Output: YAML of a metav1.LabelSelector.
*/}}
{{- define "kof-regional.selector" -}}
{{- $v := .root.Values -}}
{{- if .self -}}
matchLabels:
  k0rdent.mirantis.com/management-cluster: "true"
{{- else -}}
matchLabels:
  k0rdent.mirantis.com/kof-cluster-role: regional
  {{- if eq .variant "istio" }}
  k0rdent.mirantis.com/istio-role: member
  {{- end }}
  {{- if not $v.autoUpgrade }}
  k0rdent.mirantis.com/kof-version: {{ .root.Chart.Version | quote }}
  {{- end }}
{{- if and .both (eq .variant "standard") }}
matchExpressions:
  - key: k0rdent.mirantis.com/istio-role
    operator: DoesNotExist
{{- end }}
{{- end }}
{{- end -}}
