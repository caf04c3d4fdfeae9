{{/*
kof-regional.services: the services of one regional MultiClusterService: first prometheus-operator-crds and
opentelemetry-operator (ServiceTemplates `<catalog entry>-<version with . → ->` of kof-mothership, no dependsOn),
then in dependsOn order (each on the one before it): cert-manager and Envoy Gateway or ingress-nginx (not in Istio),
kof-operators, the VictoriaMetrics operator (none of these six on the management cluster in regionless mode: KCM and
the kof umbrella install them there already), kof-storage (plus the cluster's vmrules ConfigMap
`kof-record-vmrules-<cluster>` as valuesFrom, except in regionless mode, where the management cluster's rules are
kof-mothership's), kof-collectors, which also depends on prometheus-operator-crds and opentelemetry-operator.
Each `values` is a layer-2 template (files/*.tpl).
Input: dict {root, istio, self} (self: the management cluster in regionless mode, else empty).
Output: YAML list of KCM Service objects (k0rdent/kcm api/v1beta1 Service).
*/}}
{{- define "kof-regional.services" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $istio := eq .istio "true" -}}
{{- $self := .self -}}
{{- $shared := include "kof-regional.shared" (dict "root" $root "istio" .istio) | fromYaml -}}
{{- $svcs := list -}}
{{- $after := list -}}
{{- if not $self -}}
{{- range list (list "prometheus-operator-crds" "prometheusOperatorCrds") (list "opentelemetry-operator" "opentelemetryOperator") -}}
{{- $name := index . 0 -}}
{{- $key := index . 1 -}}
{{- $entry := index $v.catalog $name | default dict -}}
{{- if not $entry.version -}}
{{- fail (printf "catalog.%s.version is required (ServiceTemplate of the %s service)" $name $name) -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" $name "namespace" $v.namespace "template" (include "kof-regional.templateName" (dict "name" $name "version" $entry.version)) "file" (printf "files/%s.tpl" $name) "data" (dict "values" (deepCopy (index $v $key).values | default dict) "annotation" "") "standalone" true) -}}
{{- $after = append $after (dict "name" $name "namespace" $v.namespace) -}}
{{- end -}}
{{- if and (not $istio) $v.certManager.enabled -}}
{{- $cm := index $v.catalog "cert-manager" -}}
{{- $svcs = append $svcs (dict "name" "cert-manager" "namespace" $v.certManager.namespace "template" (include "kof-regional.templateName" (dict "name" "cert-manager" "version" $cm.version)) "file" "files/cert-manager.tpl" "data" (dict "values" $v.certManager.values "annotation" "")) -}}
{{- end -}}
{{- if not $istio -}}
{{- if eq $v.ingressMode "ingress" -}}
{{- $in := index $v.catalog "ingress-nginx" -}}
{{- $svcs = append $svcs (dict "name" "ingress-nginx" "namespace" $v.ingressNginx.namespace "template" (include "kof-regional.templateName" (dict "name" "ingress-nginx" "version" $in.version)) "file" "files/ingress-nginx.tpl" "data" (dict "values" $v.ingressNginx.values "annotation" "k0rdent.mirantis.com/kof-ingress-nginx-values")) -}}
{{- else -}}
{{- $eg := index $v.catalog "envoy-gateway" -}}
{{- $svcs = append $svcs (dict "name" "envoy-gateway" "namespace" $v.envoyGateway.namespace "template" (include "kof-regional.templateName" (dict "name" "envoy-gateway" "version" $eg.version)) "file" "files/envoy-gateway.tpl" "data" (dict "values" $v.envoyGateway.values "annotation" "k0rdent.mirantis.com/kof-envoy-gateway-values")) -}}
{{- end -}}
{{- end -}}
{{- if $v.operators.enabled -}}
{{- $svcs = append $svcs (dict "name" "kof-operators" "namespace" $v.namespace "template" (include "kof-regional.templateName" (dict "name" "kof-operators" "version" $root.Chart.Version)) "file" "files/kof-operators.tpl" "data" (dict "values" (mergeOverwrite (dict) (deepCopy $shared) (deepCopy $v.operators.values)) "annotation" "k0rdent.mirantis.com/kof-operators-values")) -}}
{{- end -}}
{{- $vmo := index $v.catalog "victoria-metrics-operator" -}}
{{- $vmoValues := deepCopy $v.victoriaMetricsOperator.values -}}
{{- if $v.global.registry -}}
{{- $vmoValues = mergeOverwrite (dict "global" (dict "image" (dict "registry" $v.global.registry))) $vmoValues -}}
{{- end -}}
{{- $svcs = append $svcs (dict "name" "victoria-metrics-operator" "namespace" $v.namespace "template" (include "kof-regional.templateName" (dict "name" "victoria-metrics-operator" "version" $vmo.version)) "file" "files/victoria-metrics-operator.tpl" "data" (dict "values" $vmoValues "annotation" "k0rdent.mirantis.com/kof-victoria-metrics-operator-values")) -}}
{{- end -}}
{{- $selfData := dict "enabled" false "name" "" "namespace" "" "domain" "" "certEmail" "" -}}
{{- if $self -}}
{{- $selfData = dict "enabled" true "name" $v.regionless.clusterName "namespace" $v.kcmNamespace "domain" $v.regionless.domain "certEmail" $v.regionless.certEmail -}}
{{- end -}}
{{- $storage := dict "name" "kof-storage" "namespace" $v.namespace "template" (include "kof-regional.templateName" (dict "name" "kof-storage" "version" $root.Chart.Version)) "file" "files/kof-storage.tpl" "data" (dict "shared" $shared "values" $v.storage "annotation" "k0rdent.mirantis.com/kof-storage-values" "self" $selfData "istio" $istio "ingressMode" $v.ingressMode) -}}
{{- if not $self -}}
{{- $_ := set $storage "valuesFrom" (list (dict "kind" "ConfigMap" "name" (include "kof.names.composedTemplate" (dict "prefix" "kof-record-vmrules-" "nameExpr" ".Cluster.metadata.name")))) -}}
{{- end -}}
{{- $svcs = append $svcs $storage -}}
{{- $svcs = append $svcs (dict "name" "kof-collectors" "namespace" $v.namespace "template" (include "kof-regional.templateName" (dict "name" "kof-collectors" "version" $root.Chart.Version)) "file" "files/kof-collectors.tpl" "data" (dict "shared" $shared "values" $v.collectors "annotation" "k0rdent.mirantis.com/kof-collectors-values" "self" $selfData "namespace" $v.namespace) "after" $after) -}}
{{- $out := list -}}
{{- $prev := dict -}}
{{- range $svcs -}}
{{- $s := dict "name" .name "namespace" .namespace "template" .template "values" (include "kof-regional.layer2" (dict "root" $root "file" .file "data" .data)) -}}
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
kof-regional.templateResourceRefs: the management-cluster objects every regional service's values may read: the
ClusterDeployment (optional; its metadata annotations win over the cluster's, docs/contract.md), the CAPI Cluster and
the SveltosCluster (optional, so that annotation edits re-render the values) and, in regionless mode, the admin
VMUser Secret the KOF operator keeps in the KCM namespace (required: the collectors copy its credentials). On a
regional cluster the operator propagates the admin bundle itself, so the values need not read it.
Input: dict {root, self}. Output: YAML list of Sveltos TemplateResourceRef objects.
*/}}
{{- define "kof-regional.templateResourceRefs" -}}
{{- $v := .root.Values -}}
{{- $refs := list
  (dict "identifier" "ClusterDeployment" "optional" true "resource" (dict "apiVersion" "k0rdent.mirantis.com/v1beta1" "kind" "ClusterDeployment" "name" "{{ .ClusterName }}"))
  (dict "identifier" "Cluster" "optional" true "resource" (dict "apiVersion" "cluster.x-k8s.io/v1beta2" "kind" "Cluster" "name" "{{ .ClusterName }}"))
  (dict "identifier" "SveltosCluster" "optional" true "resource" (dict "apiVersion" "lib.projectsveltos.io/v1beta1" "kind" "SveltosCluster" "name" "{{ .ClusterName }}"))
-}}
{{- if .self -}}
{{- $admin := dict "apiVersion" "v1" "kind" "Secret" "namespace" $v.kcmNamespace "name" (printf "kof-vmuser-creds-%s" (include "kof.names.adminVMUserBase" (dict "cluster" $v.regionless.clusterName "namespace" $v.kcmNamespace))) -}}
{{- $refs = append $refs (dict "identifier" "AdminVMUser" "resource" $admin) -}}
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
