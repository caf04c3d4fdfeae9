package outputs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	addoncontrollerv1beta1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
)

// vmRulesRef is the templateResourceRef identifier of a regional's vmrules ConfigMap in its propagation MCS.
const vmRulesRef = "KOFVMRules"

// RegionPropagation returns the two MultiClusterServices of KCM region cluster r (label
// `k0rdent.mirantis.com/kcm-region-cluster: "true"`; nil for any other regional or one without data):
// `kof-child-config-propagation-<hash>` copying the regional ConfigMap (its data given literally: it holds no
// secret) and `kof-vm-rules-propagation-<hash>` copying `kof-record-vmrules-<c>` through a templateResourceRef,
// both to the region itself (docs/contract.md, "propagation MCS (KCM regions)").
func RegionPropagation(cfg config.Config, r Regional) ([]*kcmv1.MultiClusterService, error) {
	if r.Data == nil || r.Cluster.Labels[kofv1.KCMRegionClusterLabel] != kofv1.TrueValue {
		return nil, nil
	}
	c := r.Cluster
	owner := OwnerLabels(kcmv1.ClusterDeploymentKind, c.Namespace, c.Name)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: names.RegionalConfigMap(c.Name)}, Data: r.Data}
	childValues, err := propagationValues(object{obj: cm})
	if err != nil {
		return nil, fmt.Errorf("values of %s: %w", names.ChildConfigPropagation(c.Namespace, c.Name), err)
	}
	rules := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: names.VMRulesConfigMap(c.Name)}}
	rulesValues, err := propagationValues(object{rules, map[string]any{"data": templated(getFieldOrEmpty(vmRulesRef, "data"))}})
	if err != nil {
		return nil, fmt.Errorf("values of %s: %w", names.VMRulesPropagation(c.Namespace, c.Name), err)
	}
	child := propagationMCS(cfg, names.ChildConfigPropagation(c.Namespace, c.Name), c.Name, c.Istio(), owner, childValues)
	vmrules := propagationMCS(cfg, names.VMRulesPropagation(c.Namespace, c.Name), c.Name, c.Istio(), owner, rulesValues)
	vmrules.Spec.ServiceSpec.TemplateResourceRefs = []addoncontrollerv1beta1.TemplateResourceRef{{
		Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: names.VMRulesConfigMap(c.Name),
			Namespace: c.Namespace},
		Identifier: vmRulesRef,
		Optional:   true,
	}}
	return []*kcmv1.MultiClusterService{child, vmrules}, nil
}

// RegionalMCS returns the name of the chart's MultiClusterService that installs KOF on a regional cluster: the Istio
// variant for a mesh member (config KOF_ISTIO_REGIONAL_CLUSTER_MCS_NAME), else KOF_REGIONAL_CLUSTER_MCS_NAME.
func RegionalMCS(cfg config.Config, istio bool) string {
	if istio {
		return cfg.IstioRegionalMCS
	}
	return cfg.RegionalMCS
}

// propagationMCS returns an operator-made MultiClusterService: name, labels Labels() plus owner, selecting the
// cluster whose `k0rdent.mirantis.com/kof-cluster-name` is regional, depending on that regional's chart MCS, with
// one service of the kof-propagation ServiceTemplate in the release namespace that waits for its release.
func propagationMCS(cfg config.Config, name, regional string, istio bool, owner map[string]string, values string) *kcmv1.MultiClusterService {
	m := &kcmv1.MultiClusterService{
		TypeMeta:   metav1.TypeMeta{APIVersion: kcmv1.GroupVersion.String(), Kind: kcmv1.MultiClusterServiceKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: withLabels(owner)},
	}
	m.Spec.ClusterSelector = metav1.LabelSelector{MatchLabels: map[string]string{kofv1.ClusterNameLabel: regional}}
	m.Spec.DependsOn = []string{RegionalMCS(cfg, istio)}
	m.Spec.ServiceSpec.Services = []kcmv1.Service{{
		Name: name, Namespace: cfg.ReleaseNamespace, Template: cfg.PropagationTemplate, Values: values,
		HelmOptions: &kcmv1.ServiceHelmOptions{Wait: ptr.To(true)},
	}}
	return m
}

// templated is a Sveltos template action standing for one JSON value of the propagation values; Sveltos
// replaces it with the value at apply time.
type templated string

// getField returns the action that gives field of the templateResourceRef id as JSON.
func getField(id, field string) string {
	return fmt.Sprintf("{{ getField %q %q | toJson }}", id, field)
}

// getFieldOrEmpty is getField with an empty object when the (optional) resource is absent.
func getFieldOrEmpty(id, field string) string {
	return fmt.Sprintf("{{ getField %q %q | default (dict) | toJson }}", id, field)
}

// object is one entry of `propagation.data`: a typed Kubernetes object, plus fields set over it (which may be
// templated).
type object struct {
	obj  runtime.Object
	with map[string]any
}

// propagationValues returns the kof-propagation values `{"propagation":{"enabled":true,"data":[...]}}` for objs as
// one JSON line (the shape both Sveltos template passes keep intact, docs/sveltos.md "The double pass"). Each
// object is encoded from its Go type without status and server-set metadata; a templated field becomes its
// action, unquoted.
func propagationValues(objs ...object) (string, error) {
	data := make([]any, 0, len(objs))
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o.obj)
		if err != nil {
			return "", fmt.Errorf("encode %T: %w", o.obj, err)
		}
		delete(m, "status")
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "creationTimestamp")
		}
		maps.Copy(m, o.with)
		data = append(data, m)
	}
	values := map[string]any{"propagation": map[string]any{"enabled": true, "data": data}}
	var actions []string
	withPlaceholders(values, &actions)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(values); err != nil {
		return "", fmt.Errorf("encode propagation values: %w", err)
	}
	out := strings.TrimSuffix(buf.String(), "\n")
	for i, a := range actions {
		p := fmt.Sprintf("%q", placeholder(i))
		if strings.Count(out, p) != 1 {
			return "", fmt.Errorf("propagation values: template placeholder %s found %d times, want once", p,
				strings.Count(out, p))
		}
		out = strings.Replace(out, p, a, 1)
	}
	return out, nil
}

// placeholder is the string that stands for the i-th templated value while the values are encoded.
func placeholder(i int) string { return fmt.Sprintf("__kof_template_action_%d__", i) }

// withPlaceholders replaces every templated value in v (maps and lists, at any depth) by its placeholder and
// records the actions in order.
func withPlaceholders(v any, actions *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if t, ok := x[k].(templated); ok {
				x[k] = placeholder(len(*actions))
				*actions = append(*actions, string(t))
				continue
			}
			withPlaceholders(x[k], actions)
		}
	case []any:
		for i := range x {
			if t, ok := x[i].(templated); ok {
				x[i] = placeholder(len(*actions))
				*actions = append(*actions, string(t))
				continue
			}
			withPlaceholders(x[i], actions)
		}
	}
}
