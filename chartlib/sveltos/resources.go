package sveltos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// normalize deep-copies an object into the shape an API server returns: JSON types only (int64, float64,
// string, bool, []any, map[string]any), and for a core/v1 Secret, stringData folded into base64 data.
func normalize(obj map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	if out["apiVersion"] == "v1" && out["kind"] == "Secret" {
		foldStringData(out)
	}
	return out, nil
}

// foldStringData moves a Secret's stringData into data, base64-encoded, as the API server does on write.
func foldStringData(secret map[string]any) {
	sd, ok := secret["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := secret["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	secret["data"] = data
	delete(secret, "stringData")
}

// objectKey identifies an object the way a GET does: API group, kind, namespace and name.
type objectKey struct {
	group, kind, namespace, name string
}

// index maps objects by key; cluster-scoped objects (no namespace) are also found under any namespace.
type index struct {
	byKey map[objectKey]*unstructured.Unstructured
}

// newIndex indexes objects; the last of duplicates wins.
func newIndex(objs []*unstructured.Unstructured) index {
	ix := index{byKey: make(map[objectKey]*unstructured.Unstructured, len(objs))}
	for _, o := range objs {
		if o == nil {
			continue
		}
		gv, _ := schema.ParseGroupVersion(o.GetAPIVersion())
		ix.byKey[objectKey{gv.Group, o.GetKind(), o.GetNamespace(), o.GetName()}] = o
	}
	return ix
}

// get finds the object of apiVersion (group only; the server converts versions) and kind in namespace.
func (ix index) get(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, bool) {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return ix.lookup(gv.Group, kind, namespace, name)
}

// lookup finds the object of group and kind in namespace, or cluster-scoped.
func (ix index) lookup(group, kind, namespace, name string) (*unstructured.Unstructured, bool) {
	if o, ok := ix.byKey[objectKey{group, kind, namespace, name}]; ok {
		return o, true
	}
	o, ok := ix.byKey[objectKey{group, kind, "", name}]
	return o, ok
}

// clusterContext is the data name and namespace templates of referenced objects see.
// Source: libsveltos lib/template/referenced_resource.go (renderClusterTemplate).
type clusterContext struct {
	Cluster                       map[string]any
	ClusterNamespace, ClusterName string
}

// clusterType is libsveltos' name of the cluster's type: "Sveltos" for a SveltosCluster, else "Capi".
func clusterType(cluster map[string]any) string {
	if cluster["kind"] == "SveltosCluster" {
		return "Sveltos"
	}
	return "Capi"
}

// renderRefTemplate instantiates the name or namespace of a referenced object with html/template against
// {Cluster, ClusterNamespace, ClusterName}; "" yields the cluster's namespace, as in libsveltos. The template
// is named "<cluster namespace>-<cluster name>-<cluster type>" as libsveltos names it.
func renderRefTemplate(raw string, cc clusterContext, funcs template.FuncMap) (string, error) {
	tmplName := cc.ClusterNamespace + "-" + cc.ClusterName + "-" + clusterType(cc.Cluster)
	if raw == "" {
		return cc.ClusterNamespace, nil
	}
	if !strings.Contains(raw, "{{") {
		return raw, nil // literal template text passes html/template unchanged
	}
	tmpl, err := htmltemplate.New(tmplName).Option("missingkey=error").Funcs(funcs).Parse(raw)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, cc); err != nil {
		return "", fmt.Errorf("error executing template: %w", err)
	}
	return buf.String(), nil
}

// resolveRefs fetches every templateResourceRefs entry from ix into the map .MgmtResources is built from.
// A missing optional object is skipped; a missing required one, or a name that fails to instantiate, is an
// error naming the entry. Source: addon-controller controllers/templateresourcedef_utils.go.
func resolveRefs(refs []TemplateResourceRef, ix index, cc clusterContext, funcs template.FuncMap,
) (map[string]map[string]any, error) {
	if refs == nil {
		return nil, nil
	}
	out := make(map[string]map[string]any, len(refs))
	for i, ref := range refs {
		where := fmt.Sprintf("templateResourceRefs[%d] (identifier %q)", i, ref.Identifier)
		ns, err := renderRefTemplate(ref.Resource.Namespace, cc, funcs)
		if err != nil {
			return nil, fmt.Errorf("%s: resource.namespace %q: %w", where, ref.Resource.Namespace, err)
		}
		name, err := renderRefTemplate(ref.Resource.Name, cc, funcs)
		if err != nil {
			return nil, fmt.Errorf("%s: resource.name %q: %w", where, ref.Resource.Name, err)
		}
		obj, ok := ix.get(ref.Resource.APIVersion, ref.Resource.Kind, ns, name)
		if !ok {
			if ref.Optional {
				continue
			}
			return nil, &MissingObjectError{Where: where, Kind: ref.Resource.Kind, Namespace: ns, Name: name}
		}
		content, err := normalize(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out[ref.Identifier] = prune(content, ref)
	}
	return out, nil
}

// prune keeps only ref.WatchFields when set, else drops status, resourceVersion and managedFields when
// ref.IgnoreStatusChanges is set. Source: addon-controller controllers/templateresourcedef_utils.go.
func prune(obj map[string]any, ref TemplateResourceRef) map[string]any {
	if len(ref.WatchFields) > 0 {
		kept := map[string]any{}
		for _, path := range ref.WatchFields {
			parts := strings.Split(path, ".")
			v, found, err := unstructured.NestedFieldNoCopy(obj, parts...)
			if err != nil || !found {
				continue
			}
			_ = unstructured.SetNestedField(kept, v, parts...)
		}
		return kept
	}
	if ref.IgnoreStatusChanges {
		unstructured.RemoveNestedField(obj, "status")
		unstructured.RemoveNestedField(obj, "metadata", "resourceVersion")
		unstructured.RemoveNestedField(obj, "metadata", "managedFields")
	}
	return obj
}

// resourceFuncs returns Sveltos' functions over .MgmtResources, bound to res. They mutate the shared objects
// exactly as Sveltos does: getResource and copy clear managedFields, resourceVersion and uid; setField and
// removeField change the object and return it as YAML; failures are swallowed into "" (or nil).
// Source: addon-controller controllers/template_instantiation.go (instantiateTemplateValues).
func resourceFuncs(res map[string]map[string]any) template.FuncMap {
	asYAML := func(u map[string]any) string {
		data, err := yaml.Marshal(resetFields(u).UnstructuredContent())
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	return template.FuncMap{
		"getResource": func(id string) map[string]any {
			u, ok := res[id]
			if !ok {
				return nil
			}
			return resetFields(u).Object
		},
		"copy": func(id string) string {
			u, ok := res[id]
			if !ok {
				return ""
			}
			return asYAML(u)
		},
		"getField": func(id, fields string) any {
			u, ok := res[id]
			if !ok {
				return ""
			}
			v, found, err := unstructured.NestedFieldCopy(u, strings.Split(fields, ".")...)
			if err != nil || !found {
				return ""
			}
			return v
		},
		"removeField": func(id, fields string) string {
			u, ok := res[id]
			if !ok {
				return ""
			}
			unstructured.RemoveNestedField(u, strings.Split(fields, ".")...)
			return asYAML(u)
		},
		"setField": func(id, fields string, value any) string {
			u, ok := res[id]
			if !ok {
				return ""
			}
			if err := unstructured.SetNestedField(u, value, strings.Split(fields, ".")...); err != nil {
				return ""
			}
			return asYAML(u)
		},
		"chainRemoveField": func(u map[string]any, fields string) map[string]any {
			unstructured.RemoveNestedField(u, strings.Split(fields, ".")...)
			return u
		},
		"chainSetField": func(u map[string]any, fields string, value any) map[string]any {
			if err := unstructured.SetNestedField(u, value, strings.Split(fields, ".")...); err != nil {
				return nil
			}
			return u
		},
	}
}

// resetFields clears managedFields, resourceVersion and uid of the shared object, as Sveltos does before
// handing it to a template.
func resetFields(u map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: u}
	obj.SetManagedFields(nil)
	obj.SetResourceVersion("")
	obj.SetUID("")
	return obj
}
