package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PromxyServerGroupSpec is one promxy server group: the read endpoint of one regional cluster
// (docs/contract.md, "CRDs" and "Promxy configuration").
type PromxyServerGroupSpec struct {
	// ClusterName is the regional cluster this group reads from; promxy labels its series with it.
	// +kubebuilder:validation:MinLength=1
	// +required
	ClusterName string `json:"cluster_name"`

	// Targets are the `host[:port]` addresses promxy queries, without scheme or path.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:Pattern=`^[^/\s]+$`
	// +required
	Targets []string `json:"targets"`

	// PathPrefix is the URL path prepended to every query, e.g. `/vm/select/0/prometheus`.
	// +kubebuilder:validation:Pattern=`^(/.*)?$`
	// +optional
	PathPrefix string `json:"path_prefix,omitempty"`

	// Scheme is the URL scheme towards the targets.
	// +kubebuilder:validation:Enum=http;https
	// +kubebuilder:default=https
	// +optional
	Scheme string `json:"scheme,omitempty"`

	// HTTPClient configures the connection towards the targets.
	// +optional
	HTTPClient HTTPClientConfig `json:"http_client,omitempty"`
}

// HTTPClientConfig is promxy's HTTP client configuration of a server group (the `kof-http-config` annotation).
type HTTPClientConfig struct {
	// DialTimeout is the connection timeout as a Go duration, e.g. `5s`.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	DialTimeout string `json:"dial_timeout,omitempty"`

	// TLSConfig configures TLS towards the targets.
	// +optional
	TLSConfig TLSConfig `json:"tls_config,omitempty"`

	// BasicAuth names the Secret holding the basic auth credentials.
	// +optional
	BasicAuth BasicAuth `json:"basic_auth,omitempty"`
}

// TLSConfig is the TLS part of promxy's HTTP client configuration.
type TLSConfig struct {
	// InsecureSkipVerify disables verification of the targets' certificates.
	// +optional
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// BasicAuth references the Secret holding basic auth credentials, in the PromxyServerGroup's namespace.
// Credentials are accepted only by reference.
// +kubebuilder:validation:XValidation:rule="!has(self.credentials_secret_name) || size(self.credentials_secret_name) == 0 || (has(self.username_key) && has(self.password_key))",message="username_key and password_key are required with credentials_secret_name"
type BasicAuth struct {
	// CredentialsSecretName is the name of the Secret holding the credentials.
	// +optional
	CredentialsSecretName string `json:"credentials_secret_name,omitempty"`
	// UsernameKey is the Secret key of the username.
	// +optional
	UsernameKey string `json:"username_key,omitempty"`
	// PasswordKey is the Secret key of the password.
	// +optional
	PasswordKey string `json:"password_key,omitempty"`
}

// PromxyServerGroupStatus is the observed state of a PromxyServerGroup.
type PromxyServerGroupStatus struct {
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready and PromxyConfigured.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PromxyServerGroup is one regional cluster's read endpoint for promxy; the groups sharing the label
// `k0rdent.mirantis.com/secret-name` make one promxy config Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster_name`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PromxyServerGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PromxyServerGroupSpec   `json:"spec,omitempty"`
	Status PromxyServerGroupStatus `json:"status,omitempty"`
}

// PromxyServerGroupList is a list of PromxyServerGroups.
//
// +kubebuilder:object:root=true
type PromxyServerGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PromxyServerGroup `json:"items"`
}
