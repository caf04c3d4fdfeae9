package sveltos

import (
	"errors"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterKind says which object stands for a ClusterDeployment in Sveltos' .Cluster.
type ClusterKind int

const (
	// KindCAPI is a CAPI Cluster (cluster.x-k8s.io/v1beta2): every provisioned ClusterDeployment.
	KindCAPI ClusterKind = iota
	// KindSveltos is a SveltosCluster (lib.projectsveltos.io/v1beta1): adopted clusters (KCM's
	// adopted-cluster template) and the management cluster.
	KindSveltos
)

// Names of the objects and metadata involved in building .Cluster.
const (
	// ManagementClusterName and ManagementClusterNamespace name the SveltosCluster that stands for the
	// management cluster (KCM and Sveltos: mgmt/mgmt).
	ManagementClusterName      = "mgmt"
	ManagementClusterNamespace = "mgmt"

	capiAPIVersion    = "cluster.x-k8s.io/v1beta2"
	sveltosAPIVersion = "lib.projectsveltos.io/v1beta1"
	kcmGroup          = "k0rdent.mirantis.com"

	// Ownership metadata Helm (pkg/action setMetadataVisitor) and Flux helm-controller (origin labels
	// post-renderer) put on every object of a release; KCM installs a ClusterDeployment's chart through a Flux
	// HelmRelease named like the ClusterDeployment.
	helmManagedByLabel        = "app.kubernetes.io/managed-by"
	helmReleaseNameAnnotation = "meta.helm.sh/release-name"
	helmReleaseNSAnnotation   = "meta.helm.sh/release-namespace"
	fluxNameLabel             = "helm.toolkit.fluxcd.io/name"
	fluxNamespaceLabel        = "helm.toolkit.fluxcd.io/namespace"
)

// ClusterFromDeployment builds the object Sveltos shows as .Cluster for a KCM ClusterDeployment, as KCM's
// cluster templates create it: name and namespace of the ClusterDeployment; labels from
// spec.config.clusterLabels, or the ClusterDeployment's own labels when that key is absent (KCM fills it);
// annotations from spec.config.clusterAnnotations only (metadata annotations of the ClusterDeployment do not
// reach the Cluster); plus the ownership labels and annotations Helm and Flux add. kind picks a CAPI Cluster or
// a SveltosCluster. It returns an error naming the field when cd is not a ClusterDeployment or a config map
// holds non-string values. Sources: k0rdent/kcm internal/controller/clusterdeployment_controller.go
// (clusterLabels default), templates/cluster/*/templates/cluster.yaml and adopted-cluster sveltoscluster.yaml.
func ClusterFromDeployment(cd *unstructured.Unstructured, kind ClusterKind) (*unstructured.Unstructured, error) {
	if cd == nil {
		return nil, errors.New("cluster deployment: required")
	}
	gv, _ := schema.ParseGroupVersion(cd.GetAPIVersion())
	if gv.Group != kcmGroup || cd.GetKind() != "ClusterDeployment" {
		return nil, fmt.Errorf("%s %s/%s: not a %s ClusterDeployment", cd.GetKind(), cd.GetNamespace(), cd.GetName(), kcmGroup)
	}
	where := fmt.Sprintf("ClusterDeployment %s/%s", cd.GetNamespace(), cd.GetName())
	labels, found, err := unstructured.NestedStringMap(cd.Object, "spec", "config", "clusterLabels")
	if err != nil {
		return nil, fmt.Errorf("%s: spec.config.clusterLabels: %w; use a map of strings", where, err)
	}
	if !found {
		labels = cd.GetLabels()
	}
	annotations, _, err := unstructured.NestedStringMap(cd.Object, "spec", "config", "clusterAnnotations")
	if err != nil {
		return nil, fmt.Errorf("%s: spec.config.clusterAnnotations: %w; use a map of strings", where, err)
	}
	labels = merged(labels, map[string]string{
		helmManagedByLabel: "Helm", fluxNameLabel: cd.GetName(), fluxNamespaceLabel: cd.GetNamespace(),
	})
	annotations = merged(annotations, map[string]string{
		helmReleaseNameAnnotation: cd.GetName(), helmReleaseNSAnnotation: cd.GetNamespace(),
	})
	apiVersion, objKind := capiAPIVersion, "Cluster"
	if kind == KindSveltos {
		apiVersion, objKind = sveltosAPIVersion, "SveltosCluster"
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(objKind)
	obj.SetName(cd.GetName())
	obj.SetNamespace(cd.GetNamespace())
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	return obj, nil
}

// ManagementCluster returns the SveltosCluster mgmt/mgmt that stands for the management cluster in
// self-management (MCS spec.serviceSpec.provider.selfManagement), carrying a copy of labels (nil for none).
// Source: k0rdent/kcm internal/controller/multiclusterservice_controller.go (mgmt/mgmt cluster reference).
func ManagementCluster(labels map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(sveltosAPIVersion)
	obj.SetKind("SveltosCluster")
	obj.SetName(ManagementClusterName)
	obj.SetNamespace(ManagementClusterNamespace)
	if len(labels) > 0 {
		obj.SetLabels(maps.Clone(labels))
	}
	return obj
}

// merged returns a new map with base's entries, then extra's.
func merged(base, extra map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(extra))
	maps.Copy(out, base)
	maps.Copy(out, extra)
	return out
}
