package fleet

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API groups the checks of checks.go know by name.
const (
	groupKCM          = "k0rdent.mirantis.com"
	groupCertManager  = "cert-manager.io"
	groupACME         = "acme.cert-manager.io"
	groupGatewayAPI   = "gateway.networking.k8s.io"
	groupEnvoyGateway = "gateway.envoyproxy.io"
	groupPrometheus   = "monitoring.coreos.com"
	groupOTel         = "opentelemetry.io"
	groupVM           = "operator.victoriametrics.com"
	groupGrafana      = "grafana.integreatly.org"
)

// managementAPIs are the API groups every KOF management cluster serves before KOF is installed: KCM's own CRDs,
// Flux (source, helm, kustomize, notification controllers, which KCM installs), Sveltos (config and lib groups),
// Cluster API and cert-manager (a KCM requirement). Source: k0rdent/kcm v1.10.0 templates/provider/kcm (its
// dependencies: flux2, cert-manager, cluster-api, projectsveltos).
func managementAPIs() []string {
	return []string{
		groupKCM, "source.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io",
		"notification.toolkit.fluxcd.io", "config.projectsveltos.io", "lib.projectsveltos.io", "cluster.x-k8s.io",
		groupCertManager, groupACME,
	}
}

// ManagementAPIVersions are the group versions the management cluster's renders see in .Capabilities.APIVersions
// besides Kubernetes' own (managementAPIs at the versions KOF's charts use), so that a chart that renders only
// where Flux runs (kof-operators, `delivery: auto`) renders on the management cluster as it does live.
func ManagementAPIVersions() []string {
	return []string{
		"k0rdent.mirantis.com/v1beta1", "source.toolkit.fluxcd.io/v1", "helm.toolkit.fluxcd.io/v2",
		"kustomize.toolkit.fluxcd.io/v1", "notification.toolkit.fluxcd.io/v1", "config.projectsveltos.io/v1beta1",
		"lib.projectsveltos.io/v1beta1", "cluster.x-k8s.io/v1beta2", "cert-manager.io/v1", "acme.cert-manager.io/v1",
	}
}

// chartAPIs returns the API groups whose CRDs a third-party chart installs, by chart name as ServiceTemplates and
// HelmReleases name it (ingress-nginx and external-dns install none). Sources: each chart's crds/ or CRD templates at the version of
// the umbrella's catalog (cert-manager v1.19, Envoy Gateway's gateway-helm v1.5 with the Gateway API CRDs,
// prometheus-operator-crds 24, opentelemetry-operator 0.99, victoria-metrics-operator 0.63, grafana-operator v5).
func chartAPIs() map[string][]string {
	return map[string][]string{
		"cert-manager":              {groupCertManager, groupACME},
		"gateway-helm":              {groupGatewayAPI, groupEnvoyGateway},
		"prometheus-operator-crds":  {groupPrometheus},
		"opentelemetry-operator":    {groupOTel},
		"victoria-metrics-operator": {groupVM},
		"grafana-operator":          {groupGrafana},
		"ingress-nginx":             {},
		"external-dns":              {},
	}
}

// chartIngressClass returns the IngressClass a third-party chart creates with the given values ("" for none):
// ingress-nginx creates `controller.ingressClassResource.name`, `nginx` by default. Source: kubernetes/ingress-nginx
// chart values (controller.ingressClassResource).
func chartIngressClass(chart string, values map[string]any) string {
	if chart != "ingress-nginx" {
		return ""
	}
	if name := str(values, "controller", "ingressClassResource", "name"); name != "" {
		return name
	}
	return "nginx"
}

// clusterScoped reports whether objects of gk have no namespace: Kubernetes' own cluster-scoped kinds and those of
// the custom kinds KOF renders or reads. Sources: `kubectl api-resources --namespaced=false` (Kubernetes 1.37); the
// CRDs of KCM, cert-manager, the Gateway API and Sveltos.
func clusterScoped(gk schema.GroupKind) bool {
	switch gk {
	case schema.GroupKind{Group: groupKCM, Kind: "MultiClusterService"}, schema.GroupKind{Group: groupKCM, Kind: "Management"},
		schema.GroupKind{Group: groupKCM, Kind: "Release"}, schema.GroupKind{Group: groupKCM, Kind: "ProviderTemplate"},
		schema.GroupKind{Group: groupCertManager, Kind: "ClusterIssuer"},
		schema.GroupKind{Group: groupGatewayAPI, Kind: "GatewayClass"},
		schema.GroupKind{Group: "config.projectsveltos.io", Kind: "ClusterProfile"}:
		return true
	}
	if gk.Group != "" && strings.Contains(gk.Group, ".") && !strings.HasSuffix(gk.Group, ".k8s.io") {
		return false
	}
	switch gk.Kind {
	case "Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "StorageClass", "CSIDriver",
		"CSINode", "VolumeAttachment", "PriorityClass", "RuntimeClass", "IngressClass", "CustomResourceDefinition",
		"APIService", "CertificateSigningRequest", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "FlowSchema", "PriorityLevelConfiguration":
		return true
	}
	return false
}
