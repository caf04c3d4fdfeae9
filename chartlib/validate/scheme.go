package validate

import (
	"fmt"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	vmv1 "github.com/VictoriaMetrics/operator/api/operator/v1"
	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	grafanav1beta1 "github.com/grafana/grafana-operator/v5/api/v1beta1"
	otelv1alpha1 "github.com/open-telemetry/opentelemetry-operator/apis/v1alpha1"
	otelv1beta1 "github.com/open-telemetry/opentelemetry-operator/apis/v1beta1"
	addonv1beta1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	libsveltosv1beta1 "github.com/projectsveltos/libsveltos/api/v1beta1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	kofv1beta1 "kof.dev/kof/operator/api/v1beta1"
)

// NewScheme returns a runtime.Scheme with every API group whose objects KOF charts render, from the upstream Go
// API types pinned in go.mod: Kubernetes built-ins and CRDs (client-go, apiextensions), Flux helm-controller v2 and
// source-controller v1, KCM v1beta1, Sveltos (libsveltos and addon-controller v1beta1), VictoriaMetrics operator
// v1beta1 and v1, cert-manager v1, Gateway API v1 and v1beta1, OpenTelemetry operator v1beta1 and v1alpha1, Grafana
// operator v1beta1, Prometheus operator monitoring v1, and KOF's own v1beta1. It returns an error naming the group
// that failed to register.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	groups := []struct {
		name string
		add  func(*runtime.Scheme) error
	}{
		{"kubernetes", clientgoscheme.AddToScheme},
		{"apiextensions.k8s.io/v1", apiextensionsv1.AddToScheme},
		{"helm.toolkit.fluxcd.io/v2", helmv2.AddToScheme},
		{"source.toolkit.fluxcd.io/v1", sourcev1.AddToScheme},
		{"k0rdent.mirantis.com/v1beta1", kcmv1.AddToScheme},
		{"lib.projectsveltos.io/v1beta1", libsveltosv1beta1.AddToScheme},
		{"config.projectsveltos.io/v1beta1", addonv1beta1.AddToScheme},
		{"operator.victoriametrics.com/v1beta1", vmv1beta1.AddToScheme},
		{"operator.victoriametrics.com/v1", vmv1.AddToScheme},
		{"cert-manager.io/v1", cmv1.AddToScheme},
		{"gateway.networking.k8s.io/v1", gatewayv1.Install},
		{"gateway.networking.k8s.io/v1beta1", gatewayv1beta1.Install},
		{"opentelemetry.io/v1beta1", otelv1beta1.AddToScheme},
		{"opentelemetry.io/v1alpha1", otelv1alpha1.AddToScheme},
		{"grafana.integreatly.org/v1beta1", grafanav1beta1.AddToScheme},
		{"monitoring.coreos.com/v1", monitoringv1.AddToScheme},
		{"kof.k0rdent.mirantis.com/v1beta1", kofv1beta1.AddToScheme},
	}
	for _, g := range groups {
		if err := g.add(s); err != nil {
			return nil, fmt.Errorf("register %s types: %w", g.name, err)
		}
	}
	return s, nil
}
