package fleet

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/sveltos"
)

// The generic checks every fleet render runs on every cluster (docs/preview.md, "Checks"). Each catches a whole
// class of defects that a live cluster would reject or that would surprise a user.
const (
	// CheckOneOwner: no (group, kind, namespace, name) is rendered by two releases on one cluster; cluster-scoped
	// objects are unique per cluster.
	CheckOneOwner = "one-owner"
	// CheckInstallable: every object's kind is served by the cluster's base APIs or by a CRD that a service on the
	// cluster installs before it (dependsOn), and every gatewayClassName, ingressClassName, issuer and parent
	// Gateway an object names is present on the cluster.
	CheckInstallable = "installable"
	// CheckWaits: every Helm service of a MultiClusterService waits for its release (helmOptions.wait), unless it
	// is on WaitAllowList; every dependsOn names a service of the same MultiClusterService, or an existing one.
	CheckWaits = "waits"
	// CheckUpgrades: every ServiceTemplateChain entry names an existing ServiceTemplate, every available upgrade
	// has a name and a version, and every template and chain a MultiClusterService service names exists.
	CheckUpgrades = "upgrades"
	// CheckSecrets: no value of a credential Secret the KOF operator made appears in any Helm release of any
	// cluster (its values or its objects, plain or base64-encoded).
	CheckSecrets = "secrets"
)

// WaitAllowList returns the MultiClusterService services allowed to run without helmOptions.wait, as
// `<mcs>/<service>` → the reason. It is empty: every KOF service waits.
func WaitAllowList() map[string]string { return map[string]string{} }

// Finding is one violation of a generic check on one cluster.
type Finding struct {
	// Check is the check's name (CheckOneOwner, ...).
	Check string
	// Service is the release or service that carries the problem ("" when none).
	Service string
	// Object names what is wrong, e.g. `VMAlert kof/cluster` or `MultiClusterService kof-child-cluster`.
	Object string
	// Message says what is wrong; Fix how to repair it.
	Message, Fix string
}

// String formats the finding as `<check>: service <service>: <object>: <message>; fix: <fix>`.
func (f Finding) String() string {
	s := f.Check + ": "
	if f.Service != "" {
		s += "service " + f.Service + ": "
	}
	if f.Object != "" {
		s += f.Object + ": "
	}
	return s + f.Message + "; fix: " + f.Fix
}

// Check runs every generic check on every cluster of f and replaces each cluster's Findings with the result. Render
// calls it; call it again after changing f (tests plant violations this way).
func (f *Fleet) Check() {
	c := newChecker(f)
	for _, cl := range f.Clusters {
		cl.Findings = nil
		cl.Findings = append(cl.Findings, c.oneOwner(cl)...)
		cl.Findings = append(cl.Findings, c.installable(cl)...)
		cl.Findings = append(cl.Findings, c.secrets(cl)...)
		if cl.Role == RoleManagement {
			cl.Findings = append(cl.Findings, c.waits()...)
			cl.Findings = append(cl.Findings, c.upgrades()...)
		}
	}
}

// checker holds what the checks share: the management cluster's objects (rendered and given), the groups and
// kinds Kubernetes serves itself, and the CRD groups of each local chart.
type checker struct {
	f *Fleet
	// rendered are the objects KOF gives the management cluster; mgmtObjs those plus the given inputs.
	rendered, mgmtObjs []*unstructured.Unstructured
	builtins           map[schema.GroupKind]bool
}

// newChecker indexes f for the checks.
func newChecker(f *Fleet) *checker {
	c := &checker{f: f, builtins: map[schema.GroupKind]bool{}}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		c.builtins[gvk.GroupKind()] = true
	}
	c.builtins[schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}] = true
	if m := f.Cluster(sveltos.ManagementClusterName); m != nil {
		for _, s := range m.Services {
			if s.Objects != nil {
				c.rendered = append(c.rendered, s.Objects.Objects()...)
			}
		}
	}
	c.mgmtObjs = append(append(c.mgmtObjs, c.rendered...), f.inputs...)
	return c
}

// objectKey is the identity of an object on one cluster.
type objectKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

// String returns `Kind.group ns/name` (`Kind name` for cluster-scoped and core objects without namespace).
func (k objectKey) String() string {
	kind := k.gk.Kind
	if k.gk.Group != "" {
		kind += "." + k.gk.Group
	}
	if k.namespace == "" {
		return kind + " " + k.name
	}
	return kind + " " + k.namespace + "/" + k.name
}

// keyOf returns o's key on the cluster: a namespaced object without namespace lands in the service's namespace.
func keyOf(o *unstructured.Unstructured, s *Service) objectKey {
	gk := o.GroupVersionKind().GroupKind()
	ns := o.GetNamespace()
	if clusterScoped(gk) {
		ns = ""
	} else if ns == "" {
		ns = s.Namespace
	}
	return objectKey{gk: gk, namespace: ns, name: o.GetName()}
}

// serviceLabel names s in findings: `<namespace>/<name>` and how it is delivered.
func serviceLabel(s *Service) string { return s.Namespace + "/" + s.Name + " (" + s.Via + ")" }

// oneOwner reports every object of cl rendered by more than one service.
func (c *checker) oneOwner(cl *Cluster) []Finding {
	owners := map[objectKey][]*Service{}
	var keys []objectKey
	for _, s := range cl.Services {
		if s.Objects == nil {
			continue
		}
		seen := map[objectKey]bool{}
		for _, o := range s.Objects.Objects() {
			k := keyOf(o, s)
			if seen[k] {
				continue // duplicates within one release are the validator's finding
			}
			seen[k] = true
			if len(owners[k]) == 0 {
				keys = append(keys, k)
			}
			owners[k] = append(owners[k], s)
		}
	}
	var out []Finding
	for _, k := range keys {
		if len(owners[k]) < 2 {
			continue
		}
		var names []string
		for _, s := range owners[k] {
			names = append(names, serviceLabel(s))
		}
		scope := "in its namespace"
		if k.namespace == "" {
			scope = "on the cluster"
		}
		out = append(out, Finding{Check: CheckOneOwner, Service: owners[k][1].Name, Object: k.String(),
			Message: fmt.Sprintf("rendered by %d releases (%s); each object must have one owner %s, or the releases "+
				"overwrite each other", len(names), strings.Join(names, ", "), scope),
			Fix: "render it in one of them only (turn it off or rename it in the others)"})
	}
	return out
}

// secrets reports every Helm release of cl whose values or objects carry a value of a credential Secret the KOF
// operator made.
func (c *checker) secrets(cl *Cluster) []Finding {
	where := map[string][]string{} // secret value → the Secret keys holding it
	for _, o := range c.f.Operator {
		if o.GetKind() != "Secret" || o.GetAPIVersion() != "v1" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		for k, enc := range data {
			raw, err := base64.StdEncoding.DecodeString(enc)
			if err != nil || k == "username" || len(raw) < 8 {
				continue
			}
			where[string(raw)] = append(where[string(raw)], fmt.Sprintf("data.%s of Secret %s/%s", k, o.GetNamespace(), o.GetName()))
		}
	}
	values := make([]string, 0, len(where))
	for v := range where {
		values = append(values, v)
		sort.Strings(where[v])
	}
	sort.Strings(values)
	var out []Finding
	for _, s := range cl.Services {
		if s.Resources || s.Name == OperatorOutputs {
			continue // Sveltos-deployed resources and the operator's own objects are not Helm releases
		}
		var texts []struct{ what, text string }
		if s.Values != nil {
			raw, _ := yaml.Marshal(s.Values)
			texts = append(texts, struct{ what, text string }{"values", string(raw)})
		}
		if s.Objects != nil {
			for _, o := range s.Objects.Objects() {
				raw, _ := yaml.Marshal(o.Object)
				texts = append(texts, struct{ what, text string }{keyOf(o, s).String(), string(raw)})
			}
		}
		for _, v := range values {
			for _, t := range texts {
				if strings.Contains(t.text, v) || strings.Contains(t.text, base64.StdEncoding.EncodeToString([]byte(v))) {
					out = append(out, Finding{Check: CheckSecrets, Service: s.Name, Object: t.what,
						Message: fmt.Sprintf("carries the value of %s, so the Helm release of %s stores the credential "+
							"in its release data", strings.Join(where[v], ", "), serviceLabel(s)),
						Fix: "reference the Secret by name (secretKeyRef) and deliver it as a Secret object " +
							"(the kof-vmuser-credentials service)"})
				}
			}
		}
	}
	return out
}
