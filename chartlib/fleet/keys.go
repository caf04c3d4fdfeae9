package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/values"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
)

// Keys the KOF charts read from a ClusterDeployment that the operator does not (docs/annotations.md); the operator's
// keys are the constants of operator/api/v1beta1.
const (
	// VersionLabel pins the KOF version of a cluster when autoUpgrade is off.
	VersionLabel = kofv1.Prefix + "kof-version"

	StorageValuesAnnotation                 = kofv1.Prefix + "kof-storage-values"
	CollectorsValuesAnnotation              = kofv1.Prefix + "kof-collectors-values"
	OperatorsValuesAnnotation               = kofv1.Prefix + "kof-operators-values"
	VictoriaMetricsOperatorValuesAnnotation = kofv1.Prefix + "kof-victoria-metrics-operator-values"
	EnvoyGatewayValuesAnnotation            = kofv1.Prefix + "kof-envoy-gateway-values"
	IngressNginxValuesAnnotation            = kofv1.Prefix + "kof-ingress-nginx-values"
	KubeStateMetricsValuesAnnotation        = kofv1.Prefix + "kof-kube-state-metrics-values"
	NodeExporterValuesAnnotation            = kofv1.Prefix + "kof-node-exporter-values"
	OpenCostValuesAnnotation                = kofv1.Prefix + "kof-opencost-values"
	ExternalDNSValuesAnnotation             = kofv1.Prefix + "kof-external-dns-values"
	ExternalDNSProviderAnnotation           = kofv1.Prefix + "kof-external-dns-provider"
	ExternalDNSSecretAnnotation             = kofv1.Prefix + "kof-external-dns-secret"
	StorageClassAnnotation                  = kofv1.Prefix + "kof-storage-class"
	GatewayNameAnnotation                   = kofv1.Prefix + "kof-gateway-name"
	GatewayNamespaceAnnotation              = kofv1.Prefix + "kof-gateway-namespace"
)

// KnownLabels are the KOF labels a user sets on a ClusterDeployment (docs/annotations.md, "Labels").
var KnownLabels = []string{
	kofv1.ClusterRoleLabel, kofv1.RegionalClusterNameLabel, kofv1.RegionalClusterNamespaceLabel, kofv1.TenantLabel,
	kofv1.IstioRoleLabel, kofv1.ClusterNameLabel, kofv1.KCMRegionClusterLabel, VersionLabel,
}

// KnownAnnotations are the KOF annotations a user sets on a ClusterDeployment, in metadata.annotations or
// spec.config.clusterAnnotations: the keys of Annotations (docs/annotations.md, "Annotations").
var KnownAnnotations = func() []string {
	out := make([]string, len(Annotations))
	for i, a := range Annotations {
		out[i] = a.Key
	}
	return out
}()

// maxTypoDistance is the largest edit distance at which an unknown `k0rdent.mirantis.com/` key not starting with
// `kof-` is taken for a misspelled KOF key (KCM sets keys of its own under the same prefix).
const maxTypoDistance = 2

// InputWarnings returns warnings about the ClusterDeployments of objs that KOF would silently ignore: a label or
// annotation under `k0rdent.mirantis.com/` that is no known KOF key but close to one, and a
// `k0rdent.mirantis.com/kof-cluster-role` value other than `regional` or `child`. Each names the object, the key
// and the closest known key or value; a ClusterDeployment or ClusterTemplate whose apiVersion is not KCM's is
// named too, and a v1 List stands for its items. They are warnings: the cluster renders as a non-KOF key would
// leave it.
func InputWarnings(objs []*unstructured.Unstructured) []string {
	var out []string
	if expanded, err := expandLists(objs); err == nil {
		objs = expanded // a malformed List is readInputs' error
	}
	for _, o := range objs {
		if o != nil && (o.GetKind() == "ClusterDeployment" || o.GetKind() == "ClusterTemplate") &&
			o.GroupVersionKind().Group != kcmGroup {
			out = append(out, fmt.Sprintf("%s %s: apiVersion %q is not KCM's (%s/v1beta1), so KOF ignores it; "+
				"set apiVersion: %s/v1beta1", o.GetKind(), objectName(o), o.GetAPIVersion(), kcmGroup, kcmGroup))
		}
		if o == nil || !isKCM(o, "ClusterDeployment") {
			continue
		}
		where := "ClusterDeployment " + objectName(o)
		labels := o.GetLabels()
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			if w := unknownKey(k, KnownLabels, KnownAnnotations, "annotation"); w != "" {
				out = append(out, fmt.Sprintf("%s: label %s", where, w))
			}
		}
		if v, ok := labels[kofv1.ClusterRoleLabel]; ok && v != kofv1.RoleRegional && v != kofv1.RoleChild {
			out = append(out, fmt.Sprintf("%s: label %s: value %q is neither %q nor %q, so KOF ignores the cluster; "+
				"did you mean %q?", where, kofv1.ClusterRoleLabel, v, kofv1.RoleRegional, kofv1.RoleChild,
				closest(v, []string{kofv1.RoleRegional, kofv1.RoleChild})))
		}
		annotations := o.GetAnnotations()
		for _, k := range slices.Sorted(maps.Keys(annotations)) {
			if w := unknownKey(k, KnownAnnotations, KnownLabels, "label"); w != "" {
				out = append(out, fmt.Sprintf("%s: annotation %s", where, w))
			}
		}
		cd, ok := readClusterAnnotations(o)
		for _, k := range slices.Sorted(maps.Keys(cd)) {
			if !ok {
				break
			}
			if w := unknownKey(k, KnownAnnotations, KnownLabels, "label"); w != "" {
				out = append(out, fmt.Sprintf("%s: spec.config.clusterAnnotations: annotation %s", where, w))
			}
		}
	}
	return out
}

// objectName returns `namespace/name` of o, or `name (no namespace)` when o has no metadata.namespace.
func objectName(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName() + " (no namespace)"
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// readClusterAnnotations returns spec.config.clusterAnnotations of o when it is an object of strings.
func readClusterAnnotations(o *unstructured.Unstructured) (map[string]string, bool) {
	raw, found, err := unstructured.NestedFieldNoCopy(o.Object, "spec", "config")
	if err != nil || !found {
		return nil, false
	}
	config, ok := raw.(map[string]any)
	if !ok {
		return nil, false
	}
	m, err := discovery.ClusterAnnotations(config)
	return m, err == nil
}

// unknownKey returns `<key> is not a KOF key ...; did you mean <closest>?` when key is under the KOF prefix, not in
// known, and either starts with `kof-` or is close to a key of known; when key is in other, it says key is
// a KOF otherKind (label or annotation). It returns "" for known keys and keys of other tools.
func unknownKey(key string, known, other []string, otherKind string) string {
	suffix, ok := strings.CutPrefix(key, kofv1.Prefix)
	if !ok || slices.Contains(known, key) {
		return ""
	}
	if slices.Contains(other, key) {
		return fmt.Sprintf("%s is ignored here: it is a KOF %s key; move it to the %ss", key, otherKind, otherKind)
	}
	best := closest(key, known)
	if !strings.HasPrefix(suffix, "kof-") && values.Distance(key, best) > maxTypoDistance {
		return ""
	}
	return fmt.Sprintf("%s is not a KOF key and is ignored; did you mean %s?", key, best)
}

// closest returns the candidate nearest to s by edit distance (the first on ties).
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := values.Distance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
