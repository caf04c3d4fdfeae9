package diagnose

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
)

// certManager returns KCM's cert-manager controller Deployment with args and, when config is set, its
// configuration ConfigMap volume.
func certManager(config bool, args ...string) appsv1.Deployment {
	d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert-manager"}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "cert-manager-controller", Args: args}}
	if config {
		d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cert-manager"}}}}}
	}
	return d
}

// TestCertManagerGatewayAPI: with an issuer of the management cluster solving ACME challenges with Gateway
// HTTPRoutes (regionless gateway mode, the mothership's gateway issuer), a cert-manager controller without Gateway
// API support is an error naming the Deployment, the issuer and the fix; the flag or the ControllerConfiguration
// key turns it off, and so does an issuer without a gateway solver.
func TestCertManagerGatewayAPI(t *testing.T) {
	issuer := func(solver map[string]any) *fleet.Fleet {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": map[string]any{"name": "kof-issuer"},
			"spec": map[string]any{"acme": map[string]any{"solvers": []any{map[string]any{"http01": solver}}}},
		}}
		return &fleet.Fleet{Clusters: []*fleet.Cluster{{Name: "mgmt", Namespace: "mgmt", Dir: "mgmt", Services: []*fleet.Service{
			{Name: "kof-storage", Objects: manifest.New(manifest.Object{Unstructured: o})}}}}}
	}
	gateway := issuer(map[string]any{"gatewayHTTPRoute": map[string]any{"parentRefs": []any{}}})
	config := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert-manager"}, Data: map[string]string{
		"config.yaml": "apiVersion: controller.config.cert-manager.io/v1alpha1\nkind: ControllerConfiguration\nenableGatewayAPI: true\n"}}
	for name, tt := range map[string]struct {
		pred    *fleet.Fleet
		deps    []appsv1.Deployment
		configs []corev1.ConfigMap
		want    bool
	}{
		"off":                      {gateway, []appsv1.Deployment{certManager(false, "--v=2")}, nil, true},
		"flag":                     {gateway, []appsv1.Deployment{certManager(false, "--enable-gateway-api")}, nil, false},
		"configuration":            {gateway, []appsv1.Deployment{certManager(true, "--config=/var/cert-manager/config/config.yaml")}, []corev1.ConfigMap{config}, false},
		"configuration without it": {gateway, []appsv1.Deployment{certManager(true, "--config=/var/cert-manager/config/config.yaml")}, nil, true},
		"ingress solver":           {issuer(map[string]any{"ingress": map[string]any{}}), []appsv1.Deployment{certManager(false)}, nil, false},
		"no cert-manager":          {gateway, nil, nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			s := snapshot(nil)
			s.CertManager, s.CertManagerConfigs = tt.deps, tt.configs
			d := Diagnose(Input{Live: s, Predicted: tt.pred})
			fs := findings(d, "mgmt", CodeCertManagerGatewayAPI)
			if !tt.want {
				if len(fs) != 0 {
					t.Errorf("findings %v, want none", fs)
				}
				return
			}
			f := one(t, d, "mgmt", CodeCertManagerGatewayAPI)
			if f.Severity != SeverityError || f.Object != "Deployment kcm-system/cert-manager" ||
				!containsAll(f.Message, "ClusterIssuer kof-issuer", "Gateway API HTTPRoutes", "--enable-gateway-api") ||
				!containsAll(f.Fix, "enableGatewayAPI: true", "docs/install.md") {
				t.Errorf("finding %+v", f)
			}
		})
	}
}

// containsAll reports whether s contains every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
