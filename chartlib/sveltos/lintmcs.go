package sveltos

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ServiceFinding is a Finding in the values of one service of a MultiClusterService.
type ServiceFinding struct {
	// Service is the service name (spec.serviceSpec.services[].name).
	Service string
	Finding
}

// String formats the finding as "service NAME: line N: rule: message".
func (f ServiceFinding) String() string { return fmt.Sprintf("service %s: %s", f.Service, f.Finding) }

// LintMultiClusterService lints the values text of every service of a rendered KCM MultiClusterService
// (spec.serviceSpec.services[].values), in service order, so that chart tests can check what layer 1 hands to
// Sveltos. It returns an error naming the field when mcs is not a MultiClusterService or a service is malformed.
// Source: k0rdent/kcm v1.10.0 api/v1beta1/multiclusterservice_types.go (ServiceSpec.Services, Service.Values).
func LintMultiClusterService(mcs *unstructured.Unstructured) ([]ServiceFinding, error) {
	if mcs == nil {
		return nil, errors.New("multiclusterservice: required")
	}
	gv, _ := schema.ParseGroupVersion(mcs.GetAPIVersion())
	if gv.Group != kcmGroup || mcs.GetKind() != "MultiClusterService" {
		return nil, fmt.Errorf("%s %s: not a %s MultiClusterService", mcs.GetKind(), mcs.GetName(), kcmGroup)
	}
	services, _, err := unstructured.NestedSlice(mcs.Object, "spec", "serviceSpec", "services")
	if err != nil {
		return nil, fmt.Errorf("MultiClusterService %s: spec.serviceSpec.services: %w", mcs.GetName(), err)
	}
	var out []ServiceFinding
	for i, s := range services {
		svc, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("MultiClusterService %s: spec.serviceSpec.services[%d]: not an object", mcs.GetName(), i)
		}
		name, _ := svc["name"].(string)
		values, ok := svc["values"].(string)
		if !ok && svc["values"] != nil {
			return nil, fmt.Errorf("MultiClusterService %s: spec.serviceSpec.services[%d].values: not a string; KCM takes the values as text", mcs.GetName(), i)
		}
		for _, f := range Lint(values) {
			out = append(out, ServiceFinding{Service: name, Finding: f})
		}
	}
	return out, nil
}
