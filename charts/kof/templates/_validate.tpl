{{/*
kof.validate: fails the render when the values contradict each other; renders nothing otherwise.
Checks: at most one storage mode of regionless, M2M and M2R (docs/values-contract.md); kof-collectors not enabled
with one of them (two owners of the release kof-collectors on the management cluster); every name in
`global.components` has a component block; in Istio mode, kof-mothership's `istio.memberNamespace` (the namespace
delivered labelled `istio-injection: enabled` to every member, docs/storage-modes.md) equals the `namespace` of
kof-regional and kof-child, where their services land; the umbrella's own namespace, where its HelmReleases live, is
not `global.helmRepo.namespace` (KCM's system namespace: KCM v1.10.0's Management reconciler deletes every HelmRelease
there that is not one of its components and has no owner, docs/sveltos.md). Input: the root context.
*/}}
{{- define "kof.validate" -}}
{{- $modes := list -}}
{{- if .Values.regionless.enabled -}}
{{- $modes = append $modes "regionless.enabled" -}}
{{- end -}}
{{- $fm := dig "values" "fromManagement" dict (index .Values "kof-child") -}}
{{- if dig "toManagementCluster" "enabled" false $fm -}}
{{- $modes = append $modes "kof-child.values.fromManagement.toManagementCluster.enabled" -}}
{{- end -}}
{{- if dig "toRegionalCluster" "name" "" $fm -}}
{{- $modes = append $modes "kof-child.values.fromManagement.toRegionalCluster.name" -}}
{{- end -}}
{{- if gt (len $modes) 1 -}}
{{- fail (printf "storage modes conflict: %s are set together; keep at most one of regionless.enabled, kof-child.values.fromManagement.toManagementCluster.enabled (M2M) and kof-child.values.fromManagement.toRegionalCluster.name (M2R)" (join " and " $modes)) -}}
{{- end -}}
{{- if and (dig "enabled" false (index .Values "kof-collectors")) $modes -}}
{{- fail (printf "release owners conflict: kof-collectors.enabled and %s are set together: both install the Helm release kof-collectors on the management cluster (the umbrella's HelmRelease and the %s MultiClusterService), and one would overwrite the other; set kof-collectors.enabled to false (the mode gives the management cluster its collectors; tune them with %s) or turn %s off" (first $modes) (ternary "kof-regional" "kof-child" (eq (first $modes) "regionless.enabled")) (ternary "kof-regional.values.collectors" "kof-child.values.fromManagement.collectors" (eq (first $modes) "regionless.enabled")) (first $modes)) -}}
{{- end -}}
{{- if eq (include "kof.istio" .) "true" -}}
{{- $member := dig "values" "istio" "memberNamespace" "kof" (index .Values "kof-mothership" | default dict) -}}
{{- range $c := list "kof-regional" "kof-child" -}}
{{- $ns := dig "values" "namespace" "kof" (index $.Values $c | default dict) -}}
{{- if ne $ns $member -}}
{{- fail (printf "Istio namespace conflict: kof-mothership.values.istio.memberNamespace is %q but %s.values.namespace is %q: every Istio member gets namespace %q labelled istio-injection: enabled while the %s services land in %q, without sidecars; set both to the same namespace" $member $c $ns $member $c $ns) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if eq .Release.Namespace .Values.global.helmRepo.namespace -}}
{{- fail (printf "release namespace %q is global.helmRepo.namespace: the umbrella's HelmReleases live in its own namespace, and KCM deletes the HelmReleases in its system namespace that it does not own; install the umbrella in a namespace of its own (helm install -n kof)" .Release.Namespace) -}}
{{- end -}}
{{- range .Values.global.components -}}
{{- if not (hasKey $.Values .) -}}
{{- fail (printf "global.components: %q has no component block; add `%s: {enabled: ...}` or remove it from global.components" . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
