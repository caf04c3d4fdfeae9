{{/*
kof-child.validate: cross-field checks; each failure names both keys and the fix. At most one of regionless, M2M
and M2R (docs/values-contract.md). Input: the root context. Output: nothing (or a render failure).
*/}}
{{- define "kof-child.validate" -}}
{{- $fm := .Values.fromManagement -}}
{{- if and $fm.toManagementCluster.enabled $fm.toRegionalCluster.name -}}
{{- fail (printf "kof-child: fromManagement.toManagementCluster.enabled (M2M) and fromManagement.toRegionalCluster.name (M2R, %q) are both set; the management cluster's data is stored in one place: unset one of them" $fm.toRegionalCluster.name) -}}
{{- end -}}
{{- if and .Values.regionless.enabled $fm.toManagementCluster.enabled -}}
{{- fail "kof-child: regionless.enabled and fromManagement.toManagementCluster.enabled are both true; regionless already stores the management cluster's data on itself: unset fromManagement.toManagementCluster.enabled" -}}
{{- end -}}
{{- if and .Values.regionless.enabled $fm.toRegionalCluster.name -}}
{{- fail "kof-child: regionless.enabled is true and fromManagement.toRegionalCluster.name is set; regionless has no regional clusters: unset fromManagement.toRegionalCluster.name" -}}
{{- end -}}
{{- end -}}
