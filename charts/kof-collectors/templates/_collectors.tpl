{{/*
kof-collectors.processors: the processor chain of every built-in pipeline: memory_limiter, the cluster-name
processor when a cluster name is set or the user defines `resource/k8sclustername`, then batch.
Input: the root context. Output: YAML list.
*/}}
{{- define "kof-collectors.processors" -}}
{{- $stack := index .Values "opentelemetry-kube-stack" -}}
{{- $user := $stack.defaultCRConfig.config.processors | default dict -}}
{{- $chain := list "memory_limiter" -}}
{{- if or $stack.clusterName (and (hasKey $user "resource/k8sclustername") (index $user "resource/k8sclustername")) -}}
{{- $chain = append $chain "resource/k8sclustername" -}}
{{- end -}}
{{- toYaml (append $chain "batch") -}}
{{- end -}}

{{/*
kof-collectors.nodeConfig: the built-in config of the node collector (DaemonSet): kubelet and host metrics, control
plane metrics (switchable), container logs, API server audit logs and OTLP from applications.
Input: the root context. Output: YAML of a collector config.
*/}}
{{- define "kof-collectors.nodeConfig" -}}
{{- $node := .Values.collectors.node -}}
{{- $processors := include "kof-collectors.processors" . | fromYamlArray -}}
receivers:
  kubeletstats:
    collection_interval: 30s
    auth_type: serviceAccount
    endpoint: https://${env:K8S_NODE_NAME}:10250
    insecure_skip_verify: true
    metric_groups:
      - node
      - pod
      - container
  hostmetrics:
    collection_interval: 30s
    root_path: /hostfs
    scrapers:
      cpu: {}
      memory: {}
      load: {}
      disk: {}
      network: {}
      filesystem:
        exclude_mount_points:
          match_type: regexp
          mount_points:
            - /dev/.*
            - /proc/.*
            - /sys/.*
            - /var/lib/kubelet/.*
            - /run/.*
  filelog:
    include:
      - /var/log/pods/*/*/*.log
    start_at: end
    include_file_path: true
    include_file_name: false
    operators:
      - type: container
        id: container-parser
  filelog/audit:
    include:
      {{- range $node.auditLogPaths }}
      - {{ printf "/hostfs%s" . | quote }}
      {{- end }}
    start_at: end
    operators:
      - type: json_parser
  otlp:
    protocols:
      grpc:
        endpoint: 0.0.0.0:4317
      http:
        endpoint: 0.0.0.0:4318
  {{- if $node.controlPlaneMetrics }}
  prometheus/controlplane:
    config:
      scrape_configs:
        - job_name: etcd
          scheme: https
          scrape_interval: 30s
          static_configs:
            - targets:
                - ${env:K8S_NODE_IP}:2379
          tls_config:
            ca_file: /hostfs/${env:PKI_PATH}/pki/etcd/ca.crt
            cert_file: /hostfs/${env:PKI_PATH}/pki/apiserver-etcd-client.crt
            key_file: /hostfs/${env:PKI_PATH}/pki/apiserver-etcd-client.key
  {{- end }}
service:
  pipelines:
    metrics:
      receivers:
        - kubeletstats
        - hostmetrics
        - otlp
        {{- if $node.controlPlaneMetrics }}
        - prometheus/controlplane
        {{- end }}
      processors: {{- toYaml $processors | nindent 8 }}
      exporters:
        - prometheusremotewrite
    logs:
      receivers:
        - filelog
        - otlp
      processors: {{- toYaml $processors | nindent 8 }}
      exporters:
        - otlphttp/logs
    logs/audit:
      receivers:
        - filelog/audit
      processors: {{- toYaml $processors | nindent 8 }}
      exporters:
        - otlphttp/auditlogs
    traces:
      receivers:
        - otlp
      processors: {{- toYaml $processors | nindent 8 }}
      exporters:
        - otlphttp/traces
{{- end -}}

{{/*
kof-collectors.clusterConfig: the built-in config of the cluster collector: cluster-level metrics, Kubernetes
events as logs, the metric sources of its namespace (metricSources) and, with kcm.monitoring, the targets of the KCM
ServiceMonitors/PodMonitors.
Input: the root context. Output: YAML of a collector config.
*/}}
{{- define "kof-collectors.clusterConfig" -}}
{{- $processors := include "kof-collectors.processors" . | fromYamlArray -}}
receivers:
  k8s_cluster:
    collection_interval: 30s
    auth_type: serviceAccount
    node_conditions_to_report:
      - Ready
      - MemoryPressure
      - DiskPressure
      - PIDPressure
    allocatable_types_to_report:
      - cpu
      - memory
      - storage
  k8sobjects:
    auth_type: serviceAccount
    objects:
      - name: events
        group: events.k8s.io
        mode: watch
  {{- if .Values.metricSources.enabled }}
  prometheus/sources:
    config:
      scrape_configs:
        - job_name: kof-metric-sources
          scrape_interval: {{ .Values.metricSources.interval }}
          honor_labels: true
          kubernetes_sd_configs:
            - role: endpoints
              namespaces:
                names:
                  - {{ .Release.Namespace }}
          relabel_configs:
            - action: keep
              source_labels: [__meta_kubernetes_service_label_app_kubernetes_io_name, __meta_kubernetes_endpoint_port_name]
              regex: {{ include "kof-collectors.metricSourcesRegex" . | quote }}
            - action: replace
              source_labels: [__meta_kubernetes_service_label_app_kubernetes_io_name]
              target_label: job
            - action: replace
              source_labels: [__meta_kubernetes_pod_node_name]
              target_label: node
  {{- end }}
  {{- if .Values.kcm.monitoring }}
  prometheus/kcm:
    config:
      scrape_configs: []
    target_allocator:
      endpoint: {{ printf "http://%s-targetallocator:80" (include "kof-collectors.clusterCollectorName" .) }}
      interval: 30s
      collector_id: ${env:POD_NAME}
  {{- end }}
service:
  pipelines:
    metrics:
      receivers:
        - k8s_cluster
        {{- if .Values.metricSources.enabled }}
        - prometheus/sources
        {{- end }}
        {{- if .Values.kcm.monitoring }}
        - prometheus/kcm
        {{- end }}
      processors: {{- toYaml $processors | nindent 8 }}
      exporters:
        - prometheusremotewrite
    logs:
      receivers:
        - k8sobjects
      processors: {{- toYaml $processors | nindent 8 }}
      exporters:
        - otlphttp/logs
{{- end -}}

{{/*
kof-collectors.metricSourcesRegex: the keep regex of the metric sources scrape over "<service app name>;<endpoint
port name>": the metrics ports of the kube-state-metrics (`http`), prometheus-node-exporter (`metrics`) and OpenCost
(`http`) Services that kof-regional and kof-child install in this namespace (docs/cost.md).
Input: none. Output: a regular expression.
*/}}
{{- define "kof-collectors.metricSourcesRegex" -}}
(kube-state-metrics;http|prometheus-node-exporter;metrics|opencost;http)
{{- end -}}

{{/*
kof-collectors.nodeCollectorName / clusterCollectorName: names of the two OpenTelemetryCollectors (the operator
suffixes their workloads and Services with `-collector`). Input: the root context. Output: a DNS label.
*/}}
{{- define "kof-collectors.nodeCollectorName" -}}
{{- printf "%s-node" (include "kof-collectors.fullname" .) | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- define "kof-collectors.clusterCollectorName" -}}
{{- printf "%s-cluster" (include "kof-collectors.fullname" .) | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/*
kof-collectors.podSecurityContext: the pod-level part of .Values.securityContext.
Input: the root context. Output: YAML map.
*/}}
{{- define "kof-collectors.podSecurityContext" -}}
{{- $sc := .Values.securityContext -}}
{{- toYaml (pick $sc "runAsNonRoot" "runAsUser" "runAsGroup" "seccompProfile") -}}
{{- end -}}
