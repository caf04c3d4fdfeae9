{{/*
kof-mothership.operatorRules: the ClusterRole rules of kof-operator. Written by generate.sh from
operator/config/rbac/role.yaml (controller-gen output of the operator's RBAC markers): change the markers,
never this file. Input: none. Output: YAML list of PolicyRules.
*/}}
{{- define "kof-mothership.operatorRules" -}}
- apiGroups:
  - ""
  resources:
  - configmaps
  - secrets
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - ""
  resources:
  - pods
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - k0rdent.mirantis.com
  resources:
  - clusterdeployments
  verbs:
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - k0rdent.mirantis.com
  resources:
  - clustertemplates
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - k0rdent.mirantis.com
  resources:
  - multiclusterservices
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - kof.k0rdent.mirantis.com
  resources:
  - promxyservergroups
  - vmstorageconnections
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - kof.k0rdent.mirantis.com
  resources:
  - promxyservergroups/status
  - vmstorageconnections/status
  verbs:
  - get
  - patch
  - update
- apiGroups:
  - kof.k0rdent.mirantis.com
  resources:
  - vmstorageconnections/finalizers
  verbs:
  - update
- apiGroups:
  - monitoring.coreos.com
  resources:
  - prometheusrules
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - operator.victoriametrics.com
  resources:
  - vlclusters
  - vtclusters
  verbs:
  - get
  - list
  - patch
  - watch
- apiGroups:
  - operator.victoriametrics.com
  resources:
  - vmusers
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
{{- end -}}
