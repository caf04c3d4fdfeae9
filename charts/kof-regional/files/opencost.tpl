{{- /*
  OpenCost values for one cluster (layer 2). $kof: {values, read, istio} from kof.opencostService; $name, $ns,
  $config, $ann, $scalars and $override come from the head, $childBase / $adminBase / $regionalVMAuth from the names
  the service asks for.
  OpenCost reads this cluster's own usage from storage through the cluster's own metrics read endpoint, with the
  cluster's own credentials (docs/cost.md):
  - read.url: a fixed URL (a regional cluster's in-cluster VMAuth, the management cluster's own storage); else
  - read.fromConfig: `read_metrics_endpoint` of the ChildConfig (or in M2R of the regional's ConfigMap), or in Istio
    mode the regional's in-mesh VMAuth `http://<regional>-vmauth:8427/vm/select/0/prometheus`.
  - read.secret: `childBase` (the child's tenant-filtered VMUser Secret `kof-vmuser-creds-<child base>`), `adminBase`
    (the regional admin Secret of this cluster), a Secret name, or "" (no credentials: in-cluster storage). The
    Secret is referenced by name only (opencost.prometheus.secret_name with keys username and password).
  opencost.exporter.defaultClusterId is the cluster's KOF name. Merge order: computed < the chart's
  `metricSources.opencost.values` < the kof-opencost-values annotation, except the read endpoint and credentials,
  which stay the cluster's own whatever the values say.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $url := $kof.read.url }}
{{- if $kof.read.fromConfig }}
{{- $url = dig "read_metrics_endpoint" "" $config }}
{{- if $kof.istio }}
{{- $url = printf "http://%s:8427/vm/select/0/prometheus" $regionalVMAuth }}
{{- end }}
{{- end }}
{{- if not $url }}
{{- fail (printf "cluster %s/%s: no metrics read endpoint for OpenCost: the cluster's ConfigMap has no read_metrics_endpoint" $ns $name) }}
{{- end }}
{{- $secret := $kof.read.secret }}
{{- if eq $secret "childBase" }}{{ $secret = printf "kof-vmuser-creds-%s" $childBase }}{{ end }}
{{- if eq $secret "adminBase" }}{{ $secret = printf "kof-vmuser-creds-%s" $adminBase }}{{ end }}
{{- $prom := dict "internal" (dict "enabled" false) "external" (dict "enabled" true "url" $url) }}
{{- if $secret }}
{{- $prom = mergeOverwrite $prom (dict "secret_name" $secret "username_key" "username" "password_key" "password") }}
{{- end }}
{{- $computed := dict "opencost" (dict "exporter" (dict "defaultClusterId" $name)) }}
{{- $values := mergeOverwrite (dict) $computed (deepCopy $kof.values) $scalars $override }}
{{- $_ := set $values.opencost "prometheus" (mergeOverwrite (dig "opencost" "prometheus" (dict) $values) $prom) }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
