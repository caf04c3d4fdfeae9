// Package scheme builds the runtime.Scheme of the KOF operator: the core Kubernetes types plus every API group the
// controllers read or write (KOF, KCM, VictoriaMetrics operator, prometheus-operator).
package scheme

import (
	"fmt"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/vmapi"
)

// New returns a new scheme holding the core types, KOF v1beta1, KCM v1beta1, the VictoriaMetrics operator kinds of
// operator/vmapi (VMUser, VLCluster, VTCluster), and prometheus-operator monitoring v1. It fails only when a group refuses registration.
func New() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	adders := []struct {
		name string
		add  func(*runtime.Scheme) error
	}{
		{"core", clientgoscheme.AddToScheme},
		{"kof", kofv1.AddToScheme},
		{"kcm", kcmv1.AddToScheme},
		{"victoriametrics", vmapi.AddToScheme},
		{"monitoring", monitoringv1.AddToScheme},
	}
	for _, a := range adders {
		if err := a.add(s); err != nil {
			return nil, fmt.Errorf("register %s types: %w", a.name, err)
		}
	}
	return s, nil
}
