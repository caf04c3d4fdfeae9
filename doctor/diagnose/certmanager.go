package diagnose

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/sveltos"
)

// Where cert-manager turns on its Gateway API support (cert-manager v1.15+, "Gateway API" and
// ControllerConfiguration): the controller flag `--enable-gateway-api`, or `enableGatewayAPI: true` in the
// ControllerConfiguration the chart's `config` value writes into a ConfigMap the controller reads with `--config`.
const (
	gatewayAPIFlag      = "--enable-gateway-api"
	gatewayAPIConfigKey = "enableGatewayAPI"
)

// certManagerGatewayAPI adds a CertManagerGatewayAPI finding on the management cluster when an issuer KOF gives it
// (the prediction: kof-mothership's ClusterIssuer, regionless kof-storage's issuers) solves ACME http01 challenges
// with Gateway API HTTPRoutes (spec.acme.solvers[].http01.gatewayHTTPRoute) and no cert-manager controller of the
// cluster has Gateway API support on: KOF does not install the management cluster's cert-manager (KCM does), so
// that support is a requirement KOF checks here (docs/install.md). Nothing is reported when the controllers cannot
// be listed (Snapshot.Unreadable says so), when the cluster runs none (no cert-manager: its issuers cannot exist
// either) or when there is no prediction.
func (b *builder) certManagerGatewayAPI() {
	if b.pred == nil || !b.live.readable(whatCertManager) || len(b.live.CertManager) == 0 {
		return
	}
	issuer := b.gatewaySolverIssuer()
	if issuer == "" {
		return
	}
	for i := range b.live.CertManager {
		if gatewayAPIEnabled(&b.live.CertManager[i], b.live) {
			return
		}
	}
	d := b.live.CertManager[0]
	object := "Deployment " + d.Namespace + "/" + d.Name
	where := "cert-manager's controller runs without " + gatewayAPIFlag + " and without " + gatewayAPIConfigKey +
		": true in its ControllerConfiguration"
	m := b.mgmt()
	m.Findings = append(m.Findings, newFinding(CodeCertManagerGatewayAPI, m.Dir, object, "spec.template.spec.containers[].args",
		issuer+" solves ACME challenges with Gateway API HTTPRoutes, but "+where+", so no certificate is ever issued",
		"turn on cert-manager's Gateway API support in KCM's cert-manager values: `cert-manager: {config: {apiVersion: "+
			"controller.config.cert-manager.io/v1alpha1, kind: ControllerConfiguration, enableGatewayAPI: true}}` "+
			"(docs/install.md), or use ingress mode"))
}

// gatewaySolverIssuer returns `<Kind> <namespace/>name` of the first issuer the prediction gives the management
// cluster that has a gatewayHTTPRoute ACME solver, "" when none does.
func (b *builder) gatewaySolverIssuer() string {
	c := b.pred.Cluster(sveltos.ManagementClusterName)
	if c == nil {
		return ""
	}
	for _, s := range c.Services {
		if s.Objects == nil {
			continue
		}
		for _, o := range s.Objects.Objects() {
			if (o.GetKind() == "ClusterIssuer" || o.GetKind() == "Issuer") && hasGatewaySolver(o) {
				name := o.GetName()
				if o.GetNamespace() != "" {
					name = o.GetNamespace() + "/" + name
				}
				return o.GetKind() + " " + name
			}
		}
	}
	return ""
}

// hasGatewaySolver reports whether issuer o has an ACME http01 solver of kind gatewayHTTPRoute.
func hasGatewaySolver(o *unstructured.Unstructured) bool {
	solvers, _, _ := unstructured.NestedSlice(o.Object, "spec", "acme", "solvers")
	for _, s := range solvers {
		m, _ := s.(map[string]any)
		if _, ok, _ := unstructured.NestedMap(m, "http01", "gatewayHTTPRoute"); ok {
			return true
		}
	}
	return false
}

// gatewayAPIEnabled reports whether the cert-manager controller d has Gateway API support on: a container arg
// `--enable-gateway-api` (or `=true`), or a `--config` file whose ConfigMap (a volume of d, among live's
// cert-manager ConfigMaps) sets `enableGatewayAPI: true`.
func gatewayAPIEnabled(d *appsv1.Deployment, live *Snapshot) bool {
	config := false
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, a := range c.Args {
			switch {
			case a == gatewayAPIFlag || a == gatewayAPIFlag+"=true":
				return true
			case strings.HasPrefix(a, "--config="):
				config = true
			}
		}
	}
	if !config {
		return false
	}
	var volumes []string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			volumes = append(volumes, v.ConfigMap.Name)
		}
	}
	for _, cm := range live.CertManagerConfigs {
		if cm.Namespace != d.Namespace || !slices.Contains(volumes, cm.Name) {
			continue
		}
		for _, text := range cm.Data {
			var cfg map[string]any
			if yaml.Unmarshal([]byte(text), &cfg) == nil && cfg[gatewayAPIConfigKey] == true {
				return true
			}
		}
	}
	return false
}
