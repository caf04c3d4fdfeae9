// Package validate checks rendered Kubernetes objects against their API schemas and against the rules those
// schemas cannot express.
//
// Schema check: every object is decoded strictly (sigs.k8s.io/json UnmarshalStrict: unknown and duplicate fields
// are errors) into the upstream Go API type its apiVersion/kind maps to in NewScheme. An unknown field fails with
// its path (`spec.vmstorage.replicaCont`), a wrong type with the Go field path. VictoriaMetrics operator types
// decode their spec leniently inside their own UnmarshalJSON and report problems in Status.ParsingSpecError, so for
// any type with its own UnmarshalJSON the spec is decoded again strictly into the spec type, and a non-empty
// ParsingSpecError is reported too. A kind that NewScheme does not know fails unless it is on the Validator's
// allow-list (see DefaultAllowList).
//
// Rules (rules.go): (group, kind, namespace, name) is unique in a render; a Flux HelmRelease has exactly one of
// spec.chart and spec.chartRef and a positive spec.interval; a KCM MultiClusterService has a non-empty
// spec.clusterSelector; service dependsOn entries of a MultiClusterService or ClusterDeployment name services of
// the same object and form no cycle; MultiClusterService spec.dependsOn forms no cycle among the rendered MCSs.
//
// Names (names.go), as the API server validates them (k8s.io/apimachinery/pkg/api/validation and
// pkg/util/validation): metadata.name by the rule of its kind (a DNS-1123 subdomain; Namespace a DNS-1123 label,
// Service a DNS-1035 label), metadata.namespace, metadata.labels and metadata.annotations, the labels of nested
// metadata (Pod and volume claim templates), the fields that name other objects (storageClassName, secretName,
// serviceAccountName, gatewayClassName, priorityClassName, claimName) and the name and namespace of references
// (Secret and ConfigMap references, issuerRef, Gateway API parentRefs and backendRefs), and the data keys of
// ConfigMaps and Secrets. Values holding a template expression (`{{`) are left to the layer that fills them in.
//
// All findings are collected and returned at once, in the set's order; none stops the check.
package validate

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kof.dev/kof/chartlib/manifest"
)

// Finding is one problem with one rendered object.
type Finding struct {
	// Object identifies the object (kind, namespace, name).
	Object manifest.Key
	// Source is the template file that rendered the object ("" when unknown).
	Source string
	// Path is the field path within the object, e.g. `spec.clusterSelector` ("" for the object as a whole).
	Path string
	// Message says what is wrong and how to fix it.
	Message string
}

// String returns `<source>: <Kind ns/name>: <path>: <message>` (empty parts left out).
func (f Finding) String() string {
	s := f.Object.String() + ": "
	if f.Source != "" {
		s = f.Source + ": " + s
	}
	if f.Path != "" {
		s += f.Path + ": "
	}
	return s + f.Message
}

// Validator checks objects against a Scheme and the package's rules. The zero value is not usable: use New.
type Validator struct {
	// Scheme maps apiVersion/kind to Go types.
	Scheme *runtime.Scheme
	// Allow lists kinds accepted without a schema: key `Kind.group` (`Kind` for the core group), value the reason.
	Allow map[string]string
}

// DefaultAllowList returns the kinds KOF charts may render without a Go API type to check them against: key
// `Kind.group`, value why it has no schema here. It is empty today: every kind the KOF charts render has upstream Go
// types in NewScheme. Add an entry only with the reason (typically: the API's Go module is not pinned in go.mod).
func DefaultAllowList() map[string]string {
	return map[string]string{}
}

// New returns a Validator with NewScheme and DefaultAllowList. It fails only if a scheme group fails to register.
func New() (*Validator, error) {
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	return &Validator{Scheme: s, Allow: DefaultAllowList()}, nil
}

// Set validates every object of set (schema and per-object rules) and the rules across objects (uniqueness,
// MCS dependsOn cycles). It returns all findings, none when the set is valid.
func (v *Validator) Set(set *manifest.Set) []Finding {
	var out []Finding
	for _, o := range set.Entries() {
		out = append(out, v.Object(o)...)
	}
	for _, k := range set.Duplicates() {
		out = append(out, Finding{Object: k, Message: "rendered more than once; (kind, namespace, name) must be " +
			"unique in a render"})
	}
	out = append(out, mcsCycles(set)...)
	return out
}

// Object validates one object: its schema, then the rules of its kind. It returns the findings, each carrying
// o's key and source.
func (v *Validator) Object(o manifest.Object) []Finding {
	key := manifest.KeyOf(o.Unstructured)
	var out []Finding
	add := func(path, format string, args ...any) {
		out = append(out, Finding{Object: key, Source: o.Source, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if o.GetName() == "" && o.GetGenerateName() == "" {
		add("metadata.name", "required; set a name")
	}
	for _, p := range append(metadataProblems(o), fieldProblems(o)...) {
		add(p.path, "%s", p.msg)
	}
	gvk := o.GroupVersionKind()
	if !v.Scheme.Recognizes(gvk) {
		if _, ok := v.Allow[allowKey(gvk)]; !ok {
			add("", "no schema for %s; register its Go API types in validate.NewScheme or add %q with a reason "+
				"to the allow-list", gvk.GroupVersion().String()+", Kind="+gvk.Kind, allowKey(gvk))
		}
		return out
	}
	typed, err := v.Scheme.New(gvk)
	if err != nil {
		add("", "create %s: %v", gvk, err)
		return out
	}
	decoded := decodeStrict(o.Unstructured, typed)
	var ruled []problem
	for _, r := range rulesFor(gvk) {
		ruled = append(ruled, r(typed, o.Object)...)
	}
	for _, p := range decoded {
		if !explained(p, ruled) {
			add(p.path, "%s", p.msg)
		}
	}
	for _, p := range ruled {
		add(p.path, "%s", p.msg)
	}
	return out
}

// explained reports whether a decoding problem without a path (e.g. `time: invalid duration "x"`) is repeated,
// with its path, by a rule's problem; such a problem is then reported once, by the rule.
func explained(p problem, ruled []problem) bool {
	if p.path != "" {
		return false
	}
	for _, r := range ruled {
		if strings.Contains(r.msg, p.msg) {
			return true
		}
	}
	return false
}

// allowKey returns `Kind.group`, or `Kind` for the core group.
func allowKey(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

// Objects validates set with a Validator from New. It returns the findings, or an error if the scheme cannot be
// built.
func Objects(set *manifest.Set) ([]Finding, error) {
	v, err := New()
	if err != nil {
		return nil, err
	}
	return v.Set(set), nil
}

// problem is a finding without its object: a field path and a message.
type problem struct {
	path, msg string
}
