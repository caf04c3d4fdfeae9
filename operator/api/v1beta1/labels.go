package v1beta1

// Prefix is the domain of every KOF label and annotation (docs/contract.md writes it `k/`).
const Prefix = "k0rdent.mirantis.com/"

// Labels on ClusterDeployments and on the objects the operator writes (docs/contract.md, "Cluster roles and labels" and
// "Objects the operator writes").
const (
	// ClusterRoleLabel is `regional` or `child`; any other value means the cluster is not a KOF cluster.
	ClusterRoleLabel = Prefix + "kof-cluster-role"
	// RegionalClusterNameLabel binds a child to a regional cluster explicitly.
	RegionalClusterNameLabel = Prefix + "kof-regional-cluster-name"
	// RegionalClusterNamespaceLabel is the regional's namespace in an explicit binding (default: the child's).
	RegionalClusterNamespaceLabel = Prefix + "kof-regional-cluster-namespace"
	// ClusterNameLabel carries a KOF cluster's own name; the propagation MCSs select regionals by it.
	ClusterNameLabel = Prefix + "kof-cluster-name"
	// IstioRoleLabel is `member` on clusters in the Istio mesh.
	IstioRoleLabel = Prefix + "istio-role"
	// KCMRegionClusterLabel is "true" on a ClusterDeployment that is a KCM region cluster.
	KCMRegionClusterLabel = Prefix + "kcm-region-cluster"
	// TenantLabel is the tenant of a child cluster.
	TenantLabel = Prefix + "kof-tenant-id"
	// GeneratedLabel is "true" on ConfigMaps the operator generates.
	GeneratedLabel = Prefix + "kof-generated"
	// RegionlessLabel is "true" on the regionless ConfigMap `kof-<mgmt>`.
	RegionlessLabel = Prefix + "kof-regionless"
	// SecretNameLabel on a PromxyServerGroup names the promxy config Secret it belongs to.
	SecretNameLabel = Prefix + "secret-name"
	// StorageClusterNameLabel indexes a VMStorageConnection by the name of the storage cluster it points at.
	StorageClusterNameLabel = Prefix + "cluster-name"
	// StorageClusterKindLabel indexes a VMStorageConnection by the kind of the storage cluster it points at.
	StorageClusterKindLabel = Prefix + "cluster-kind"
	// AlertRulesClusterLabel marks alert rule ConfigMaps; value "" = defaults, else a cluster name.
	AlertRulesClusterLabel = Prefix + "kof-alert-rules-cluster-name"
	// RecordRulesClusterLabel marks record rule ConfigMaps; value "" = defaults, else a cluster name.
	RecordRulesClusterLabel = Prefix + "kof-record-rules-cluster-name"
	// VMRulesClusterLabel marks the vmrules ConfigMaps the operator writes (`kof-record-vmrules-<cluster>`); its
	// value is the regional cluster whose storage reads them.
	VMRulesClusterLabel = Prefix + "kof-record-vmrules-cluster-name"
	// OwnerKindLabel (ours) on a cluster-scoped object the operator makes names the kind of the object that caused it
	// (ClusterDeployment or ConfigMap); with OwnerNameLabel and OwnerNamespaceLabel it replaces the owner reference
	// a cluster-scoped object cannot have to a namespaced one.
	OwnerKindLabel = Prefix + "kof-owner-kind"
	// OwnerNameLabel (ours) names the object that caused a cluster-scoped object.
	OwnerNameLabel = Prefix + "kof-owner-name"
	// OwnerNamespaceLabel (ours) is the namespace of the object that caused a cluster-scoped object.
	OwnerNamespaceLabel = Prefix + "kof-owner-namespace"
	// ManagedByLabel is the standard label naming the tool that manages an object.
	ManagedByLabel = "app.kubernetes.io/managed-by"
)

// FieldManager is the one server-side apply field manager of every write the KOF operator makes.
const FieldManager = "kof-operator"

// Label values of the contract.
const (
	RoleRegional  = "regional"
	RoleChild     = "child"
	IstioMember   = "member"
	TrueValue     = "true"
	ManagedBy     = "kof-operator"
	DefaultTenant = "PLATFORM"
	KindVTCluster = "VTCluster"
	KindVLCluster = "VLCluster"
	SchemeHTTP    = "http"
	SchemeHTTPS   = "https"
)

// Annotations on a ClusterDeployment, read from metadata.annotations and then spec.config.clusterAnnotations
// (docs/contract.md, "Annotations on a ClusterDeployment").
const (
	// RegionalDomainAnnotation is the base domain the default endpoints derive from.
	RegionalDomainAnnotation = Prefix + "kof-regional-domain"
	// CertEmailAnnotation is the ACME e-mail of a regional cluster.
	CertEmailAnnotation = Prefix + "kof-cert-email"
	// HTTPConfigAnnotation is the JSON HTTP client configuration promxy uses towards a regional cluster.
	HTTPConfigAnnotation = Prefix + "kof-http-config"
	// WriteMetricsEndpointAnnotation overrides the metrics write URL.
	WriteMetricsEndpointAnnotation = Prefix + "kof-write-metrics-endpoint"
	// ReadMetricsEndpointAnnotation overrides the metrics read URL.
	ReadMetricsEndpointAnnotation = Prefix + "kof-read-metrics-endpoint"
	// WriteLogsEndpointAnnotation overrides the logs write URL.
	WriteLogsEndpointAnnotation = Prefix + "kof-write-logs-endpoint"
	// ReadLogsEndpointAnnotation overrides the logs read URL.
	ReadLogsEndpointAnnotation = Prefix + "kof-read-logs-endpoint"
	// WriteAuditLogsEndpointAnnotation overrides the audit logs write URL.
	WriteAuditLogsEndpointAnnotation = Prefix + "kof-write-audit-logs-endpoint"
	// ReadAuditLogsEndpointAnnotation overrides the audit logs read URL.
	ReadAuditLogsEndpointAnnotation = Prefix + "kof-read-audit-logs-endpoint"
	// WriteTracesEndpointAnnotation overrides the traces write URL.
	WriteTracesEndpointAnnotation = Prefix + "kof-write-traces-endpoint"
	// ReadTracesEndpointAnnotation overrides the traces read URL.
	ReadTracesEndpointAnnotation = Prefix + "kof-read-traces-endpoint"
)

// Annotations the VMStorageConnection controller writes (ours).
const (
	// MountedSecretsAnnotation on a storage cluster lists, comma-separated, the Secrets the operator mounted, so
	// that mounts made by others are kept when connections go away.
	MountedSecretsAnnotation = Prefix + "kof-storage-connection-secrets"
	// SourceSecretAnnotation on a credentials Secret the operator copied names its source `namespace/name`.
	SourceSecretAnnotation = Prefix + "kof-source-secret"
	// ClusterRefAnnotation on a VMStorageConnection records the cluster (`kind/namespace/name`) its node was last
	// applied to, so that the node leaves that cluster when spec.cluster_ref changes.
	ClusterRefAnnotation = Prefix + "kof-storage-cluster"
)

// Finalizers (docs/contract.md, "CRDs"; **ours** for ClusterDeployments).
const (
	// VMStorageConnectionFinalizer keeps a VMStorageConnection until its storage node args are removed.
	VMStorageConnectionFinalizer = Prefix + "vmstorageconnection"
	// ClusterDeploymentFinalizer is the finalizer earlier releases put on KOF ClusterDeployments; the operator now
	// removes it (a deleted ClusterDeployment is cleaned up without one) and only reads it.
	ClusterDeploymentFinalizer = Prefix + "kof-cluster-cleanup"
	// RegionalConfigMapFinalizer keeps a regional ConfigMap until its admin bundle and connections are removed.
	RegionalConfigMapFinalizer = Prefix + "kof-regional-cleanup"
)

// The kof-operator Deployment kof-mothership renders (charts/kof-mothership, componentLabels), found by these labels
// wherever KOF looks for it (kof doctor, the demo and e2e harness); OperatorContainer runs kof-operator.
const (
	ComponentLabel    = "app.kubernetes.io/component"
	ChartNameLabel    = "app.kubernetes.io/name"
	OperatorComponent = "operator"
	MothershipChart   = "kof-mothership"
	OperatorContainer = "manager"
)

// OperatorDeploymentLabels returns the labels that select the kof-operator Deployment: ComponentLabel
// OperatorComponent and ChartNameLabel MothershipChart.
func OperatorDeploymentLabels() map[string]string {
	return map[string]string{ComponentLabel: OperatorComponent, ChartNameLabel: MothershipChart}
}

// IsOperatorDeployment reports whether labels carry every label of OperatorDeploymentLabels.
func IsOperatorDeployment(labels map[string]string) bool {
	for k, v := range OperatorDeploymentLabels() {
		if labels[k] != v {
			return false
		}
	}
	return true
}
