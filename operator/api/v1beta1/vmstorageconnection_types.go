package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VMStorageConnectionSpec connects a local VictoriaLogs or VictoriaTraces cluster to a remote storage node
// (docs/contract.md, "CRDs").
type VMStorageConnectionSpec struct {
	// ClusterRef is the VLCluster or VTCluster whose select component gets the storage node.
	// +required
	ClusterRef ClusterRef `json:"cluster_ref"`

	// TargetStorageNode is the remote storage node to add.
	// +required
	TargetStorageNode TargetStorageNode `json:"target_storage_node"`
}

// ClusterRef references a VictoriaMetrics-operator storage cluster.
type ClusterRef struct {
	// Name of the storage cluster.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// Namespace of the storage cluster; defaults to the VMStorageConnection's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Kind of the storage cluster.
	// +kubebuilder:validation:Enum=VTCluster;VLCluster
	// +required
	Kind string `json:"kind"`
}

// TargetStorageNode is a remote storage node address with its credentials and TLS settings.
type TargetStorageNode struct {
	// Address is the storage node URL or `host:port`.
	// +kubebuilder:validation:MinLength=1
	// +required
	Address string `json:"address"`
	// Secret names the Secret holding the basic auth credentials, in the VMStorageConnection's namespace.
	// +optional
	Secret *SecretKeys `json:"secret,omitempty"`
	// TLSConfig configures TLS towards the storage node.
	// +optional
	TLSConfig *StorageTLSConfig `json:"tls_config,omitempty"`
}

// SecretKeys names a Secret and the keys of its username and password.
type SecretKeys struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
	// UsernameKey is the Secret key of the username.
	// +kubebuilder:validation:MinLength=1
	// +required
	UsernameKey string `json:"username_key"`
	// PasswordKey is the Secret key of the password.
	// +kubebuilder:validation:MinLength=1
	// +required
	PasswordKey string `json:"password_key"`
}

// StorageTLSConfig is the TLS configuration towards a storage node.
type StorageTLSConfig struct {
	// Enabled turns TLS on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// InsecureSkipVerify disables verification of the storage node's certificate.
	// +optional
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// VMStorageConnectionStatus is the observed state of a VMStorageConnection.
type VMStorageConnectionStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready and StorageConnected.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// VMStorageConnection adds one remote storage node to a VLCluster or VTCluster's select component.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.cluster_ref.kind`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster_ref.name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VMStorageConnection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VMStorageConnectionSpec   `json:"spec,omitempty"`
	Status VMStorageConnectionStatus `json:"status,omitempty"`
}

// VMStorageConnectionList is a list of VMStorageConnections.
//
// +kubebuilder:object:root=true
type VMStorageConnectionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VMStorageConnection `json:"items"`
}
