{{/*
kof-mothership.validate: fails the render when values contradict each other, each message naming both keys:
grafana.enabled or victoriametrics.vmalert.enabled without promxy.enabled (their datasource); a
serviceTemplates.thirdParty entry missing from catalog; an ACME certManager.clusterIssuer without certManager.clusterIssuer.email
or regionless.certEmail; grafana.oidc without its issuer, endpoints, client ID or client Secret; tenantProxy
without promxy, an issuer or an audience, or with Grafana but not grafana.oidc. Input: the root context. Output:
nothing.
*/}}
{{- define "kof-mothership.validate" -}}
{{- if and .Values.grafana.enabled (not .Values.promxy.enabled) -}}
{{- fail "grafana.enabled is true but promxy.enabled is false: Grafana's metrics datasource is promxy; enable promxy or disable grafana" -}}
{{- end -}}
{{- if and .Values.victoriametrics.vmalert.enabled (not .Values.promxy.enabled) -}}
{{- fail "victoriametrics.vmalert.enabled is true but promxy.enabled is false: VMAlert queries promxy; enable promxy or disable victoriametrics.vmalert" -}}
{{- end -}}
{{- $oidc := .Values.grafana.oidc -}}
{{- if and .Values.grafana.enabled $oidc.enabled -}}
{{- range $k := list "issuer" "authURL" "tokenURL" "clientID" -}}
{{- if not (get $oidc $k) -}}
{{- fail (printf "grafana.oidc.enabled is true but grafana.oidc.%s is empty; set it from your issuer's discovery document (docs/tenancy.md)" $k) -}}
{{- end -}}
{{- end -}}
{{- if not $oidc.clientSecret.name -}}
{{- fail "grafana.oidc.enabled is true but grafana.oidc.clientSecret.name is empty; name the Secret holding Grafana's OAuth client secret (never put the secret in values)" -}}
{{- end -}}
{{- end -}}
{{- $tp := .Values.tenantProxy -}}
{{- if $tp.enabled -}}
{{- if not .Values.promxy.enabled -}}
{{- fail "tenantProxy.enabled is true but promxy.enabled is false: the proxy serves metrics from promxy; enable promxy or disable tenantProxy" -}}
{{- end -}}
{{- if not ($tp.oidc.issuer | default $oidc.issuer) -}}
{{- fail "tenantProxy.enabled is true but tenantProxy.oidc.issuer and grafana.oidc.issuer are both empty; set the issuer of the ID tokens" -}}
{{- end -}}
{{- if not ($tp.oidc.audience | default $oidc.clientID) -}}
{{- fail "tenantProxy.enabled is true but tenantProxy.oidc.audience and grafana.oidc.clientID are both empty; set the OAuth client ID the ID tokens are issued to" -}}
{{- end -}}
{{- if and .Values.grafana.enabled (not $oidc.enabled) -}}
{{- fail "tenantProxy.enabled is true and grafana.enabled is true but grafana.oidc.enabled is false: Grafana's data sources go through the proxy and need the users' ID tokens; enable grafana.oidc" -}}
{{- end -}}
{{- end -}}
{{- $issuer := .Values.certManager.clusterIssuer -}}
{{- if and $issuer.enabled (not .Values.tls.selfSigned) (not (include "kof-mothership.issuerEmail" .)) -}}
{{- fail "certManager.clusterIssuer.enabled is true with ACME (tls.selfSigned false) but certManager.clusterIssuer.email and regionless.certEmail are both empty; set one of them or set tls.selfSigned" -}}
{{- end -}}
{{- if .Values.serviceTemplates.enabled -}}
{{- range .Values.serviceTemplates.thirdParty -}}
{{- if not (hasKey $.Values.catalog .) -}}
{{- fail (printf "serviceTemplates.thirdParty lists %q but catalog.%s is missing; add its repository, chart and version to catalog" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
