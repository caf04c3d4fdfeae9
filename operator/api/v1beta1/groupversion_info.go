// Package v1beta1 holds the KOF custom resource types of group kof.k0rdent.mirantis.com, version v1beta1:
// PromxyServerGroup and VMStorageConnection (docs/contract.md, "CRDs"). Their JSON field names are those of objects made
// by earlier KOF releases and must not change. It also defines, once, the labels, annotations, condition types and
// reasons of the KOF contract that the operator and the fleet renderer share.
//
// +kubebuilder:object:generate=true
// +groupName=kof.k0rdent.mirantis.com
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of every KOF custom resource.
const Group = "kof.k0rdent.mirantis.com"

// Version is the API version of the types in this package.
const Version = "v1beta1"

// GroupVersion returns the group and version of every KOF custom resource.
func GroupVersion() schema.GroupVersion { return schema.GroupVersion{Group: Group, Version: Version} }

// AddToScheme registers PromxyServerGroup, VMStorageConnection, their lists and the common meta types of the group
// in s. It never fails; the error result matches runtime.SchemeBuilder's signature.
func AddToScheme(s *runtime.Scheme) error {
	gv := GroupVersion()
	s.AddKnownTypes(gv,
		&PromxyServerGroup{}, &PromxyServerGroupList{},
		&VMStorageConnection{}, &VMStorageConnectionList{},
	)
	metav1.AddToGroupVersion(s, gv)
	return nil
}
