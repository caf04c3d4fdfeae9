package diff

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/manifest"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// Reason says why a change hurts.
type Reason string

// The reasons a change hurts (docs/upgrade.md, "What kof diff flags").
const (
	// ReasonImmutableField: a field the API server refuses to change (StatefulSet spec.selector,
	// spec.volumeClaimTemplates and spec.serviceName; a Service's spec.clusterIP; a PersistentVolumeClaim's
	// spec.storageClassName, accessModes, volumeMode and volumeName): the upgrade fails on that object. Source:
	// Kubernetes API reference (apps/v1 StatefulSetSpec, core/v1 ServiceSpec, PersistentVolumeClaimSpec).
	ReasonImmutableField Reason = "immutable-field"
	// ReasonSelectorChange: a Deployment, DaemonSet or ReplicaSet spec.selector changes, which apps/v1 makes
	// immutable: the upgrade fails, or the workload has to be deleted and its pods orphaned.
	ReasonSelectorChange Reason = "selector-change"
	// ReasonCRDVersionRemoved: a served version of a CustomResourceDefinition is removed or made non-served:
	// stored objects and clients of that version stop working.
	ReasonCRDVersionRemoved Reason = "crd-version-removed"
	// ReasonOwnerMoved: an object moves from one release to another on a cluster, a release from one
	// MultiClusterService to another, or an operator-made object to another owner (its kof-owner labels): the old
	// owner deletes what the new one creates.
	ReasonOwnerMoved Reason = "owner-moved"
	// ReasonCredentialRenamed: a credential Secret or a VMUser disappears (renamed or removed): every child that
	// writes with it loses its write access until it gets the new name.
	ReasonCredentialRenamed Reason = "credential-renamed"
	// ReasonVolumeReplaced: a storage volume would be replaced: a PersistentVolumeClaim removed, a storage object
	// (StatefulSet with volumeClaimTemplates, a VictoriaMetrics kind with a volumeClaimTemplate) removed or renamed,
	// or a claim template's storage class or name changed: the new volume starts empty.
	ReasonVolumeReplaced Reason = "volume-replaced"
	// ReasonNewProblem: the new fleet has a problem on the cluster the old one did not (a failed render, a check
	// finding): the cluster would not get what it gets today.
	ReasonNewProblem Reason = "new-problem"
)

// Hurt is one change that hurts, with its reason and what exactly changes.
type Hurt struct {
	Reason  Reason `json:"reason"`
	Message string `json:"message"`
}

// String formats the hurt as `reason: message`.
func (h Hurt) String() string { return string(h.Reason) + ": " + h.Message }

// API groups and kinds the rules read.
const (
	groupApps        = "apps"
	groupExtensions  = "apiextensions.k8s.io"
	groupVM          = "operator.victoriametrics.com"
	kindStatefulSet  = "StatefulSet"
	kindPVC          = "PersistentVolumeClaim"
	kindCRD          = "CustomResourceDefinition"
	kindVMUser       = "VMUser"
	claimTemplateKey = "volumeClaimTemplate"
)

// changedHurts classifies the changes of one object present in both fleets.
func changedHurts(k manifest.Key, o, n *unstructured.Unstructured) []Hurt {
	var out []Hurt
	immutable := func(reason Reason, path ...string) {
		a, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
		b, _, _ := unstructured.NestedFieldNoCopy(n.Object, path...)
		if !equality.Semantic.DeepEqual(a, b) && !(empty(a) && empty(b)) {
			out = append(out, Hurt{Reason: reason, Message: fmt.Sprintf("%s %s: %s → %s", k.Kind,
				strings.Join(path, "."), short(a), short(b))})
		}
	}
	switch {
	case k.Group == groupApps && k.Kind == kindStatefulSet:
		immutable(ReasonImmutableField, "spec", "selector")
		immutable(ReasonImmutableField, "spec", "volumeClaimTemplates")
		immutable(ReasonImmutableField, "spec", "serviceName")
	case k.Group == groupApps && (k.Kind == "Deployment" || k.Kind == "DaemonSet" || k.Kind == "ReplicaSet"):
		immutable(ReasonSelectorChange, "spec", "selector")
	case k.Group == "" && k.Kind == "Service":
		immutable(ReasonImmutableField, "spec", "clusterIP")
		immutable(ReasonImmutableField, "spec", "clusterIPs")
	case k.Group == "" && k.Kind == kindPVC:
		for _, f := range []string{"storageClassName", "accessModes", "volumeMode", "volumeName"} {
			immutable(ReasonImmutableField, "spec", f)
		}
	case k.Group == groupExtensions && k.Kind == kindCRD:
		served := servedVersions(n)
		for _, v := range servedVersionList(o) {
			if !served[v] {
				out = append(out, Hurt{Reason: ReasonCRDVersionRemoved, Message: fmt.Sprintf("version %s of %s is "+
					"no longer served: objects and clients of %s stop working", v, k.Name, v)})
			}
		}
	}
	out = append(out, claimHurts(k, o, n)...)
	if a, b := ownerOf(o), ownerOf(n); a != b {
		out = append(out, Hurt{Reason: ReasonOwnerMoved, Message: fmt.Sprintf("the operator's owner labels move "+
			"from %s to %s", a, b)})
	}
	return out
}

// empty reports whether v is nil or an empty string, list or map.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// ownerOf returns the kof-owner labels of o as `Kind namespace/name`, "" when it has none.
func ownerOf(o *unstructured.Unstructured) string {
	l := o.GetLabels()
	if l[kofv1.OwnerKindLabel] == "" {
		return ""
	}
	return l[kofv1.OwnerKindLabel] + " " + l[kofv1.OwnerNamespaceLabel] + "/" + l[kofv1.OwnerNameLabel]
}

// servedVersionList returns the served versions of a CRD, sorted.
func servedVersionList(o *unstructured.Unstructured) []string {
	var out []string
	for v := range servedVersions(o) {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// servedVersions returns the names of a CRD's spec.versions with served: true.
func servedVersions(o *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	vs, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
	for _, v := range vs {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); served && name != "" {
			out[name] = true
		}
	}
	return out
}

// claims returns the persistent volume claim templates of an object by path: every map under a
// `volumeClaimTemplate` key (the VictoriaMetrics operator's storage), and each element of a StatefulSet's
// spec.volumeClaimTemplates by its metadata.name.
func claims(o *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for key, child := range v {
				p := path + "." + key
				if m, ok := child.(map[string]any); ok && key == claimTemplateKey {
					out[p] = m // ".a.b": prefixed with "spec" below
					continue
				}
				walk(p, child)
			}
		case []any:
			for i, child := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), child)
			}
		}
	}
	if manifest.KeyOf(o).Kind == kindStatefulSet {
		list, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeClaimTemplates")
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				name, _, _ := unstructured.NestedString(m, "metadata", "name")
				out["spec.volumeClaimTemplates["+name+"]"] = m
			}
		}
		return out
	}
	walk("", o.Object["spec"])
	for p, m := range out {
		delete(out, p)
		out["spec"+p] = m
	}
	return out
}

// claimHurts reports each claim template of o that n drops, or whose storage class or name changes.
func claimHurts(k manifest.Key, o, n *unstructured.Unstructured) []Hurt {
	before, after := claims(o), claims(n)
	var out []Hurt
	for _, p := range sortedPaths(before) {
		b, ok := after[p]
		if !ok {
			out = append(out, Hurt{Reason: ReasonVolumeReplaced, Message: fmt.Sprintf("%s %s is removed: the pods "+
				"lose their persistent volume and start on a new, empty one", k.Kind, p)})
			continue
		}
		a := before[p]
		for _, f := range [][]string{{"spec", "storageClassName"}, {"metadata", "name"}} {
			x, _, _ := unstructured.NestedString(a, f...)
			y, _, _ := unstructured.NestedString(b, f...)
			if x != y {
				out = append(out, Hurt{Reason: ReasonVolumeReplaced, Message: fmt.Sprintf("%s %s.%s: %q → %q: new "+
					"volumes are made and the data stays on the old ones", k.Kind, p, strings.Join(f, "."), x, y)})
			}
		}
	}
	return out
}

// sortedPaths returns the keys of m, sorted.
func sortedPaths(m map[string]map[string]any) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// credential reports whether o is a credential the clients of the fleet write with: a VMUser, or a Secret named
// like the operator's VMUser credentials (names.VMUserSecretPrefix) or holding the bundle's username and password
// keys (operator/outputs).
func credential(o *unstructured.Unstructured) bool {
	k := manifest.KeyOf(o)
	if k.Group == groupVM && k.Kind == kindVMUser {
		return true
	}
	if k.Group != "" || k.Kind != "Secret" {
		return false
	}
	if strings.HasPrefix(k.Name, names.VMUserSecretPrefix) {
		return true
	}
	for _, field := range []string{"data", "stringData"} {
		data, _, _ := unstructured.NestedMap(o.Object, field)
		if _, ok := data[outputs.PasswordKey]; ok {
			if _, ok := data[outputs.UsernameKey]; ok {
				return true
			}
		}
	}
	return false
}

// storage reports whether o holds persistent data: a PersistentVolumeClaim, or an object with claim templates.
func storage(o *unstructured.Unstructured) bool {
	k := manifest.KeyOf(o)
	return (k.Group == "" && k.Kind == kindPVC) || len(claims(o)) > 0
}

// removedHurts classifies an object of a release that the new fleet no longer renders; now are the release's
// objects in the new fleet, where a replacement of the same kind is looked for.
func removedHurts(k manifest.Key, o *unstructured.Unstructured, now map[manifest.Key]*unstructured.Unstructured) []Hurt {
	var out []Hurt
	replacement := func() string {
		var found []string
		for nk, n := range now {
			if nk.Group == k.Group && nk.Kind == k.Kind && nk.Namespace == k.Namespace {
				if credential(n) == credential(o) && storage(n) == storage(o) {
					found = append(found, nk.Name)
				}
			}
		}
		sort.Strings(found)
		if len(found) == 0 {
			return ""
		}
		return " (the new release has " + strings.Join(found, ", ") + ")"
	}
	if credential(o) {
		out = append(out, Hurt{Reason: ReasonCredentialRenamed, Message: fmt.Sprintf("%s %s is no longer rendered%s: "+
			"the clients that write with it lose their write access", k.Kind, k.Name, replacement())})
	}
	if storage(o) {
		out = append(out, Hurt{Reason: ReasonVolumeReplaced, Message: fmt.Sprintf("%s %s is no longer rendered%s: "+
			"its persistent volumes are left behind and a replacement starts empty", k.Kind, k.Name, replacement())})
	}
	if k.Group == groupExtensions && k.Kind == kindCRD {
		for _, v := range servedVersionList(o) {
			out = append(out, Hurt{Reason: ReasonCRDVersionRemoved, Message: fmt.Sprintf("%s is no longer rendered: "+
				"version %s is no longer installed", k.Name, v)})
		}
	}
	return out
}
