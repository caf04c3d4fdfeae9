{{- /*
  external-dns values for one regional cluster, or for the management cluster in regionless mode (layer 2), so that
  the names kof-storage publishes (`vmauth.<domain>` on its HTTPRoute or Ingress) resolve to the cluster's gateway or
  ingress. $kof: {values, provider, secret, sources, annotation, scalars, self} from the kof-regional chart; $name,
  $ann, $scalars and $override come from files/_head.tpl.
  Computed: provider.name, sources (the HTTPRoutes with Envoy Gateway, else the Ingresses), domainFilters (the
  cluster's domain), txtOwnerId `kof-<cluster>` (each cluster owns only its own records), the credentials Secret
  (by name only: `k0rdent.mirantis.com/kof-external-dns-secret` or the chart's `credentialsSecretName`) mounted
  read-only at /etc/kof/external-dns and, for aws without an env of its own, AWS_SHARED_CREDENTIALS_FILE on it.
  Merge order: computed < kof-regional `external-dns.values` < the scalar annotation kof-external-dns-provider <
  the kof-external-dns-values annotation.
  Output: one line of JSON (the only shape that survives Sveltos' double pass unchanged).
*/}}
{{- $domain := dig "k0rdent.mirantis.com/kof-regional-domain" $kof.self.domain $ann }}
{{- $secret := dig "k0rdent.mirantis.com/kof-external-dns-secret" $kof.secret $ann }}
{{- $computed := dict
  "provider" (dict "name" $kof.provider)
  "sources" $kof.sources
  "txtOwnerId" (printf "kof-%s" $name)
  "extraVolumes" (list (dict "name" "kof-dns-credentials" "secret" (dict "secretName" $secret)))
  "extraVolumeMounts" (list (dict "name" "kof-dns-credentials" "mountPath" "/etc/kof/external-dns" "readOnly" true))
}}
{{- with $domain }}{{ $_ := set $computed "domainFilters" (list .) }}{{ end }}
{{- $values := mergeOverwrite (dict) $computed (deepCopy $kof.values) $scalars $override }}
{{- if and (eq (dig "provider" "name" "" $values) "aws") (not (hasKey $values "env")) }}
{{- $_ := set $values "env" (list (dict "name" "AWS_SHARED_CREDENTIALS_FILE" "value" "/etc/kof/external-dns/credentials")) }}
{{- end }}
{{- regexReplaceAll "\\{\\{" (toJson $values) "\\u007b\\u007b" }}
