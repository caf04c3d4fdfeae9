package fleet

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"kof.dev/kof/chartlib/sveltos"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// kcmGroup is the API group of ClusterDeployments, ClusterTemplates, ServiceTemplates and MultiClusterServices.
const kcmGroup = "k0rdent.mirantis.com"

// adoptedPrefix starts the name and chart of KCM's adopted-cluster template, whose clusters Sveltos sees as
// SveltosClusters (k0rdent/kcm templates/cluster/adopted-cluster).
const adoptedPrefix = "adopted-cluster"

// inputs are the management cluster's objects given by the user, indexed.
type inputs struct {
	// objects are all given objects, in the given order.
	objects []*unstructured.Unstructured
	// deployments are the ClusterDeployments by namespace and name.
	deployments []*deployment
	// templates are the ClusterTemplates.
	templates []kcmv1.ClusterTemplate
}

// deployment is one ClusterDeployment with what layer 2 and the operator need of it.
type deployment struct {
	name, namespace string
	// role is RoleRegional, RoleChild or RoleNone.
	role string
	// obj is the object as given; typed its kcm v1beta1 form; template its ClusterTemplate (nil when absent).
	obj      *unstructured.Unstructured
	typed    *kcmv1.ClusterDeployment
	template *kcmv1.ClusterTemplate
	// cluster is the object Sveltos shows as .Cluster (CAPI Cluster or SveltosCluster).
	cluster *unstructured.Unstructured
	// errs are problems with the ClusterDeployment itself; they fail this cluster only.
	errs []error
}

// key returns `namespace/name`.
func (d *deployment) key() string { return d.namespace + "/" + d.name }

// readInputs indexes objs: every ClusterDeployment with its ClusterTemplate and Sveltos cluster object (a
// SveltosCluster for all when sveltosClusters is set). A
// ClusterDeployment whose fields cannot be read gets the problem recorded; objects that are not Kubernetes objects,
// or have no metadata.name (a ClusterDeployment without one would be dropped and offered as the regional `ns/`),
// are an error naming their 1-based index. A v1 List (what `kubectl get clusterdeployments,clustertemplates -A -o yaml`
// prints) stands for its items.
func readInputs(objs []*unstructured.Unstructured, sveltosClusters bool) (*inputs, error) {
	objs, err := expandLists(objs)
	if err != nil {
		return nil, err
	}
	in := &inputs{objects: objs}
	templates := map[string]*kcmv1.ClusterTemplate{}
	for i, o := range objs {
		if o == nil || o.GetKind() == "" {
			return nil, fmt.Errorf("cluster inputs: an object without kind; every document needs apiVersion and kind")
		}
		if o.GetName() == "" {
			return nil, fmt.Errorf("cluster inputs: object %d (%s %s in namespace %q) has no metadata.name; give it "+
				"the name of the object on the management cluster", i+1, o.GetAPIVersion(), o.GetKind(), o.GetNamespace())
		}
		if isKCM(o, "ClusterTemplate") {
			tpl := &kcmv1.ClusterTemplate{}
			if err := fromUnstructured(o, tpl); err != nil {
				return nil, err
			}
			templates[o.GetNamespace()+"/"+o.GetName()] = tpl
			in.templates = append(in.templates, *tpl)
		}
	}
	for _, o := range objs {
		if isKCM(o, "ClusterDeployment") {
			in.deployments = append(in.deployments, readDeployment(o, templates, sveltosClusters))
		}
	}
	sort.SliceStable(in.deployments, func(i, j int) bool { return in.deployments[i].key() < in.deployments[j].key() })
	for i := 1; i < len(in.deployments); i++ {
		if in.deployments[i].key() == in.deployments[i-1].key() {
			return nil, fmt.Errorf("cluster inputs: ClusterDeployment %s given twice; keep one", in.deployments[i].key())
		}
	}
	return in, nil
}

// readDeployment reads one ClusterDeployment; problems are recorded on it. One without metadata.namespace gets that
// error alone and no typed object or Sveltos cluster, so neither the operator nor any MultiClusterService evaluates
// it (its file is not what `kubectl get -A -o yaml` exports; the API server stores none without a namespace).
func readDeployment(o *unstructured.Unstructured, templates map[string]*kcmv1.ClusterTemplate, sveltosClusters bool) *deployment {
	d := &deployment{name: o.GetName(), namespace: o.GetNamespace(), obj: o, role: RoleNone}
	// Read the one label: o.GetLabels() is nil when any label is not a string (stringValues reports that).
	role, _, _ := unstructured.NestedString(o.Object, "metadata", "labels", kofv1.ClusterRoleLabel)
	switch role {
	case kofv1.RoleRegional:
		d.role = RoleRegional
	case kofv1.RoleChild:
		d.role = RoleChild
	}
	if d.namespace == "" {
		// Nothing is read further: the operator and Sveltos find a ClusterDeployment by namespace and name, so every
		// other message would name the cluster "/<name>" and the objects it misses "/<object>".
		d.errs = append(d.errs, fmt.Errorf("metadata.namespace: ClusterDeployment %q has none; ClusterDeployments are "+
			"namespaced, set metadata.namespace (e.g. kcm-system)", d.name))
		return d
	}
	if err := stringValues(o, "labels", "annotations"); err != nil {
		d.errs = append(d.errs, fmt.Errorf("ClusterDeployment %s/%s: %w", d.namespace, d.name, err))
		return d
	}
	d.typed = &kcmv1.ClusterDeployment{}
	if err := fromUnstructured(o, d.typed); err != nil {
		d.errs = append(d.errs, err)
		d.typed = nil
	}
	kind := sveltos.KindCAPI
	if d.typed != nil {
		d.template = templates[d.namespace+"/"+d.typed.Spec.Template]
		if sveltosClusters || adopted(d.typed.Spec.Template, d.template) {
			kind = sveltos.KindSveltos
		}
	}
	c, err := sveltos.ClusterFromDeployment(o, kind)
	if err != nil {
		d.errs = append(d.errs, err)
	}
	d.cluster = c
	return d
}

// stringValues returns an error naming the first key of each metadata field (labels, annotations) of o whose value
// is not a string, with the fix: the API server takes strings only, and YAML reads an unquoted 123, true or 1.5 as
// another type (apimachinery would only say "cannot convert int64 to string", and o.GetLabels() drops them all).
func stringValues(o *unstructured.Unstructured, fields ...string) error {
	for _, field := range fields {
		raw, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", field)
		if !found || raw == nil {
			continue
		}
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("metadata.%s is a %s, not a mapping of strings; write it as `%s: {key: \"value\"}`",
				field, yamlType(raw), field)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if _, ok := m[k].(string); !ok {
				return fmt.Errorf("metadata.%s[%s]: %v is a %s, not a string; quote it (%s: \"%v\"): %s values "+
					"are strings", field, k, m[k], yamlType(m[k]), k, m[k], strings.TrimSuffix(field, "s"))
			}
		}
	}
	return nil
}

// yamlType names the YAML type of a decoded value as a user wrote it: number, boolean, null, list, mapping, string.
func yamlType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, int32, int64, float32, float64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// adopted reports whether a ClusterDeployment of the named template is an adopted cluster.
func adopted(name string, tpl *kcmv1.ClusterTemplate) bool {
	if strings.HasPrefix(name, adoptedPrefix) {
		return true
	}
	return tpl != nil && tpl.Spec.Helm.ChartSpec != nil && strings.HasPrefix(tpl.Spec.Helm.ChartSpec.Chart, adoptedPrefix)
}

// isKCM reports whether o is a KCM object of the given kind.
func isKCM(o *unstructured.Unstructured, kind string) bool {
	return o.GetKind() == kind && o.GroupVersionKind().Group == kcmGroup
}

// fromUnstructured converts o into the typed object out, naming o in the error.
func fromUnstructured(o *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
		return fmt.Errorf("%s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// expandLists returns objs with every v1 List (apiVersion v1, kind List: the output of `kubectl get -o yaml` for
// several objects) replaced by its items, in order. It returns an error naming the List's 1-based index when an
// item is not an object.
func expandLists(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, o := range objs {
		if o == nil || o.GetAPIVersion() != "v1" || o.GetKind() != "List" {
			out = append(out, o)
			continue
		}
		items, ok := o.Object["items"].([]any)
		if !ok && o.Object["items"] != nil {
			return nil, fmt.Errorf("cluster inputs: object %d (v1 List): items is not a list; give the output of "+
				"kubectl get ... -o yaml unchanged", i+1)
		}
		for j, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("cluster inputs: object %d (v1 List): items[%d] is not an object; give the "+
					"output of kubectl get ... -o yaml unchanged", i+1, j)
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out, nil
}
