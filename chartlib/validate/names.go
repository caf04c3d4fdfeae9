package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kof.dev/kof/chartlib/manifest"
)

// nameRule checks one name and returns apimachinery's messages, none when it is valid.
type nameRule func(name string) []string

// objectName is the rule of an object name (metadata.name of most kinds and every custom resource, and of the
// fields that name one): a DNS-1123 subdomain (apimachinery validation.NameIsDNSSubdomain, which the API server
// applies to custom resources and most built-in kinds).
func objectName(name string) []string { return apimachineryvalidation.NameIsDNSSubdomain(name, false) }

// namespaceName is the rule of a namespace name: a DNS-1123 label (apimachinery ValidateNamespaceName).
func namespaceName(name string) []string {
	return apimachineryvalidation.ValidateNamespaceName(name, false)
}

// serviceName is the rule of a Service's name: a DNS-1035 label (apimachinery NameIsDNS1035Label; Kubernetes
// ValidateService).
func serviceName(name string) []string { return apimachineryvalidation.NameIsDNS1035Label(name, false) }

// metadataNameRule returns the rule of metadata.name of a kind: Namespace a DNS-1123 label, Service a DNS-1035 label,
// every other kind (built-in or custom) a DNS-1123 subdomain.
func metadataNameRule(group, kind string) nameRule {
	if group == "" {
		switch kind {
		case "Namespace":
			return namespaceName
		case "Service":
			return serviceName
		}
	}
	return objectName
}

// nameFields are the fields, by JSON name, whose string value is the name of another object, with the rule it
// must meet: a storage class, Secret, service account, Gateway class, priority class or volume claim is named by a
// DNS-1123 subdomain (Kubernetes ValidateClassName and the object-name rule of the named kind).
func nameFields() map[string]nameRule {
	return map[string]nameRule{
		"storageClassName":   objectName,
		"secretName":         objectName,
		"serviceAccountName": objectName,
		"gatewayClassName":   objectName,
		"priorityClassName":  objectName,
		"claimName":          objectName,
	}
}

// refFields are the fields, by JSON name, holding a reference (or a list of references) whose `name` names an object
// and whose `namespace`, when set, names a namespace: Secret and ConfigMap references (secretKeyRef,
// configMapKeyRef, secretRef, configMapRef, a volume's configMap, any `...SecretRef` such as cert-manager's
// privateKeySecretRef), cert-manager's issuerRef and Gateway API parentRefs and backendRefs.
func refFields() map[string]bool {
	return map[string]bool{
		"secretKeyRef": true, "configMapKeyRef": true, "secretRef": true, "configMapRef": true, "configMap": true,
		"issuerRef": true, "parentRefs": true, "backendRefs": true,
	}
}

// isRef reports whether the field key holds object references (refFields, or a name ending in SecretRef).
func isRef(key string) bool { return refFields()[key] || strings.HasSuffix(key, "SecretRef") }

// templated reports whether s is (or holds) a template expression that another layer fills in: such a name is
// checked where it is instantiated.
func templated(s string) bool { return strings.Contains(s, "{{") }

// metadataProblems returns the problems the API server would find in o's metadata: metadata.name by the rule of its
// kind, metadata.namespace as a namespace name, metadata.labels and metadata.annotations (apimachinery
// ValidateLabels and ValidateAnnotations), each with apimachinery's message.
func metadataProblems(o manifest.Object) []problem {
	var out []problem
	gvk := o.GroupVersionKind()
	if n := o.GetName(); n != "" && !templated(n) {
		for _, m := range metadataNameRule(gvk.Group, gvk.Kind)(n) {
			out = append(out, problem{"metadata.name", fmt.Sprintf("Invalid value %q: %s", n, m)})
		}
	}
	if ns := o.GetNamespace(); ns != "" && !templated(ns) {
		for _, m := range namespaceName(ns) {
			out = append(out, problem{"metadata.namespace", fmt.Sprintf("Invalid value %q: %s", ns, m)})
		}
	}
	errs := metav1validation.ValidateLabels(o.GetLabels(), field.NewPath("metadata", "labels"))
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(o.GetAnnotations(), field.NewPath("metadata", "annotations"))...)
	for _, e := range errs {
		out = append(out, problem{e.Field, e.ErrorBody()})
	}
	return out
}

// fieldProblems walks the object below metadata and returns a problem for every field that names another object
// (nameFields, the `name` and `namespace` of refFields) with a value the API server (or the kind's own reference
// rule) would reject, and for every key of a ConfigMap's or Secret's data that is no valid key (apimachinery
// IsConfigMapKey). Nested `metadata.labels` (Pod templates, volume claim templates) are checked as labels.
func fieldProblems(o manifest.Object) []problem {
	var out []problem
	gvk := o.GroupVersionKind()
	for _, k := range slices.Sorted(maps.Keys(o.Object)) {
		if k == "metadata" || k == "apiVersion" || k == "kind" {
			continue
		}
		if gvk.Group == "" && (gvk.Kind == "ConfigMap" || gvk.Kind == "Secret") && (k == "data" || k == "stringData" || k == "binaryData") {
			if m, ok := o.Object[k].(map[string]any); ok {
				for _, key := range slices.Sorted(maps.Keys(m)) {
					for _, msg := range validation.IsConfigMapKey(key) {
						out = append(out, problem{k + "[" + key + "]", fmt.Sprintf("Invalid value %q: %s", key, msg)})
					}
				}
			}
			continue
		}
		walkNames(o.Object[k], k, &out)
	}
	return out
}

// walkNames adds to out the problems of the name fields below v (at path).
func walkNames(v any, path string, out *[]problem) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			p := path + "." + k
			switch s, isString := t[k].(string); {
			case isString && nameFields()[k] != nil:
				checkName(p, s, nameFields()[k], out)
			case isRef(k):
				checkRefs(t[k], p, out)
			case k == "metadata":
				if m, ok := t[k].(map[string]any); ok {
					checkLabels(m, p, out)
				}
			}
			walkNames(t[k], p, out)
		}
	case []any:
		for i, item := range t {
			walkNames(item, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// checkRefs checks the name and namespace of one reference (a map) or a list of them at path.
func checkRefs(v any, path string, out *[]problem) {
	switch t := v.(type) {
	case map[string]any:
		if s, ok := t["name"].(string); ok {
			checkName(path+".name", s, objectName, out)
		}
		if s, ok := t["namespace"].(string); ok {
			checkName(path+".namespace", s, namespaceName, out)
		}
	case []any:
		for i, item := range t {
			checkRefs(item, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// checkName adds a problem for s at path when it is set, not templated and fails rule.
func checkName(path, s string, rule nameRule, out *[]problem) {
	if s == "" || templated(s) {
		return
	}
	for _, m := range rule(s) {
		*out = append(*out, problem{path, fmt.Sprintf("Invalid value %q: %s", s, m)})
	}
}

// checkLabels adds the problems of the labels of a nested metadata map m at path.
func checkLabels(m map[string]any, path string, out *[]problem) {
	raw, ok := m["labels"].(map[string]any)
	if !ok {
		return
	}
	labels := make(map[string]string, len(raw))
	for k, v := range raw {
		s, _ := v.(string)
		if templated(k) || templated(s) {
			continue
		}
		labels[k] = s
	}
	for _, e := range metav1validation.ValidateLabels(labels, field.NewPath(path, "labels")) {
		*out = append(*out, problem{e.Field, e.ErrorBody()})
	}
}
