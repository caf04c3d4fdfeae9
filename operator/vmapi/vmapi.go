package vmapi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the VictoriaMetrics operator's API group.
const Group = "operator.victoriametrics.com"

var (
	// V1beta1 is the group version of VMUser.
	V1beta1 = schema.GroupVersion{Group: Group, Version: "v1beta1"}
	// V1 is the group version of VLCluster and VTCluster.
	V1 = schema.GroupVersion{Group: Group, Version: "v1"}
)

// SecretsDir is where the VictoriaMetrics operator mounts the Secrets listed in a component's `secrets`
// (`/etc/vm/secrets/<secret name>/<key>`; upstream v1beta1.SecretsDir).
const SecretsDir = "/etc/vm/secrets"

// AddToScheme registers the types of this package under their upstream group versions and kinds.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(V1beta1, &VMUser{}, &VMUserList{})
	metav1.AddToGroupVersion(s, V1beta1)
	s.AddKnownTypes(V1, &VLCluster{}, &VLClusterList{}, &VTCluster{}, &VTClusterList{})
	metav1.AddToGroupVersion(s, V1)
	return nil
}

// +kubebuilder:object:root=true

// VMUser is a vmauth user: credentials and the routes requests with them may take.
type VMUser struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VMUserSpec `json:"spec,omitempty"`
}

// VMUserSpec is the part of the upstream VMUserSpec KOF sets.
type VMUserSpec struct {
	// Username is the basic-auth user name.
	Username *string `json:"username,omitempty"`
	// PasswordRef is the Secret key holding the basic-auth password.
	PasswordRef *corev1.SecretKeySelector `json:"passwordRef,omitempty"`
	// TargetRefs are the routes.
	TargetRefs []TargetRef `json:"targetRefs"`
}

// TargetRef is one route of a VMUser.
type TargetRef struct {
	// Static is the backend URL.
	Static *StaticRef `json:"static,omitempty"`
	// Paths are the request path regexps the route serves.
	Paths []string `json:"paths,omitempty"`
	// URLMapCommon holds the request rewriting of the route.
	URLMapCommon `json:",omitempty"`
	// QueryArgs are added to every proxied request.
	QueryArgs []QueryArg `json:"query_args,omitempty"`
}

// StaticRef is a backend URL.
type StaticRef struct {
	URL string `json:"url,omitempty"`
}

// URLMapCommon is the request rewriting of a route.
type URLMapCommon struct {
	// DropSrcPathPrefixParts is the number of `/`-separated parts dropped from the request path before proxying.
	DropSrcPathPrefixParts *int `json:"drop_src_path_prefix_parts,omitempty"`
}

// QueryArg is a query argument added to proxied requests.
type QueryArg struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// +kubebuilder:object:root=true

// VMUserList is a list of VMUsers.
type VMUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VMUser `json:"items"`
}

// +kubebuilder:object:root=true

// VLCluster is a VictoriaLogs cluster; KOF reads and patches its select component.
type VLCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VLClusterSpec `json:"spec,omitempty"`
}

// VLClusterSpec is the part of the upstream VLClusterSpec KOF reads.
type VLClusterSpec struct {
	VLSelect *SelectComponent `json:"vlselect,omitempty"`
}

// +kubebuilder:object:root=true

// VLClusterList is a list of VLClusters.
type VLClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VLCluster `json:"items"`
}

// +kubebuilder:object:root=true

// VTCluster is a VictoriaTraces cluster; KOF reads and patches its select component.
type VTCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              VTClusterSpec `json:"spec,omitempty"`
}

// VTClusterSpec is the part of the upstream VTClusterSpec KOF reads.
type VTClusterSpec struct {
	Select *SelectComponent `json:"select,omitempty"`
}

// +kubebuilder:object:root=true

// VTClusterList is a list of VTClusters.
type VTClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VTCluster `json:"items"`
}

// SelectComponent is the part of a cluster's select component KOF reads: its command-line arguments and the
// Secrets mounted under SecretsDir.
type SelectComponent struct {
	ExtraArgs map[string]string `json:"extraArgs,omitempty"`
	Secrets   []string          `json:"secrets,omitempty"`
}
