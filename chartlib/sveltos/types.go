package sveltos

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Mode selects how many times a service's values text is executed as a template.
type Mode string

const (
	// DoublePass reproduces Sveltos v1.0.1 to v1.15 (the releases KCM ships): every field of a helm chart entry
	// is YAML-marshalled, executed and unmarshalled, then `values` is executed again. It is the default.
	// Source: projectsveltos/addon-controller controllers/template_instantiation.go (instantiateStructFields)
	// and controllers/handlers_helm.go (getHelmChartInstantiatedValues).
	DoublePass Mode = "double-pass"
	// SinglePass executes `values` once, as the planned upstream fix does.
	SinglePass Mode = "single-pass"
)

// ParseMode turns the text of a --mode flag into a Mode. It returns DoublePass for "", and an error naming the
// accepted values for anything else that is not a known mode.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", DoublePass:
		return DoublePass, nil
	case SinglePass:
		return SinglePass, nil
	}
	return "", fmt.Errorf("mode %q: unknown; use %q or %q", s, DoublePass, SinglePass)
}

// Data is the value a service's values template is executed against: exactly the four fields Sveltos offers.
// Cluster is the CAPI Cluster or the SveltosCluster; InfrastructureProvider and KubeadmControlPlane are the
// objects the CAPI Cluster references (nil for SveltosClusters); MgmtResources maps each templateResourceRefs
// identifier to its object. All maps hold unstructured (JSON-typed) content.
// Source: addon-controller controllers/template_instantiation.go (currentClusterObjects).
type Data struct {
	Cluster                map[string]any
	KubeadmControlPlane    map[string]any
	InfrastructureProvider map[string]any
	MgmtResources          map[string]map[string]any
}

// TemplateResourceRef is one entry of a Profile's (or MCS's spec.serviceSpec) templateResourceRefs, field for
// field addon-controller api/v1beta1 TemplateResourceRef, so the MCS's JSON decodes into it.
type TemplateResourceRef struct {
	// Resource is the referenced object (apiVersion, kind, namespace, name). Name and namespace may be
	// html/templates over {Cluster, ClusterNamespace, ClusterName}; an empty namespace means the cluster's.
	Resource corev1.ObjectReference `json:"resource"`
	// Identifier is the key under .MgmtResources; unique within one profile.
	Identifier string `json:"identifier"`
	// Optional lets a missing object be skipped instead of failing the cluster.
	Optional bool `json:"optional,omitempty"`
	// IgnoreStatusChanges drops status, metadata.resourceVersion and metadata.managedFields.
	IgnoreStatusChanges bool `json:"ignoreStatusChanges,omitempty"`
	// WatchFields, when set, keeps only these dot-separated paths of the object.
	WatchFields []string `json:"watchFields,omitempty"`
}

// ValuesFrom is one entry of a helm chart's valuesFrom: a ConfigMap or Secret whose data values (in key order)
// are merged over the inline values. Name and Namespace may be templates; an empty namespace means the
// cluster's namespace (KCM resolves a service's valuesFrom in the ClusterDeployment's namespace).
// Source: addon-controller api/v1beta1 ValueFrom and controllers/handlers_utils.go (getValuesFrom).
type ValuesFrom struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Optional  bool   `json:"optional,omitempty"`
}

// Environment pins everything a template could read from the process or the clock, so that instantiation is
// deterministic. The zero value is valid: no variables, no hosts, PinnedNow(), seed 0.
type Environment struct {
	// Vars answers sprig `env` and `expandenv`; absent names read as "".
	Vars map[string]string
	// Hosts answers sprig `getHostByName`; absent names read as "".
	Hosts map[string]string
	// Now is returned by `now` and used by the date functions for non-time arguments; zero means PinnedNow().
	Now time.Time
	// Seed seeds the generator behind rand*, randInt, randBytes, shuffle, uuidv4 and gen*.
	Seed int64
}

// PinnedNow returns the clock of an Environment whose Now is zero: 2025-01-01T00:00:00Z.
func PinnedNow() time.Time { return time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC) }

// now returns the Environment's clock, PinnedNow when unset.
func (e Environment) now() time.Time {
	if e.Now.IsZero() {
		return PinnedNow()
	}
	return e.Now
}

// Input is everything needed to instantiate one service's values for one cluster (a Profile with one
// Service; see InstantiateProfile for several).
type Input struct {
	// Profile is the MultiClusterService (or Sveltos Profile) name; used in errors.
	Profile string
	// Service is the service (helm release) name.
	Service string
	// ServiceNamespace is the release namespace ("" means the service name, as KCM converts it); like the
	// release name it is templated in the first pass.
	ServiceNamespace string
	// Cluster is the CAPI Cluster or SveltosCluster the values are instantiated for. Required.
	Cluster *unstructured.Unstructured
	// Values is the service's values text as KCM copies it into the Profile.
	Values string
	// ValuesFrom lists ConfigMaps/Secrets merged over the inline values, looked up in Objects.
	ValuesFrom []ValuesFrom
	// TemplateResourceRefs are resolved against Objects into .MgmtResources.
	TemplateResourceRefs []TemplateResourceRef
	// Objects are the management-cluster objects visible to the resolution; they are never modified.
	Objects []*unstructured.Unstructured
	// Mode is DoublePass when empty.
	Mode Mode
	// Env pins env, DNS, time and randomness.
	Env Environment
}

// Service is one helm chart entry of a profile: a MultiClusterService service as KCM converts it.
type Service struct {
	// Name is the service (helm release) name.
	Name string
	// Namespace is the release namespace ("" means Name, as KCM converts it).
	Namespace string
	// Values is the service's values text.
	Values string
	// ValuesFrom lists ConfigMaps/Secrets merged over the inline values.
	ValuesFrom []ValuesFrom
}

// Profile is a MultiClusterService (or Sveltos Profile) with all its services, for one cluster.
type Profile struct {
	// Name is the MultiClusterService or Profile name; used in errors.
	Name string
	// Cluster is the CAPI Cluster or SveltosCluster. Required.
	Cluster *unstructured.Unstructured
	// Services are instantiated in order.
	Services []Service
	// TemplateResourceRefs are resolved once against Objects into .MgmtResources, shared by all services.
	TemplateResourceRefs []TemplateResourceRef
	// Objects are the management-cluster objects visible to the resolution; they are never modified.
	Objects []*unstructured.Unstructured
	// Mode is DoublePass when empty.
	Mode Mode
	// Env pins env, DNS, time and randomness.
	Env Environment
}

// Result is the outcome of Instantiate for one service.
type Result struct {
	// ReleaseName and ReleaseNamespace are the instantiated chart entry fields.
	ReleaseName      string
	ReleaseNamespace string
	// Text is the instantiated inline values text (after the last pass).
	Text string
	// Values is the final values map: Text parsed, then every valuesFrom document merged over it. It is parsed
	// with sigs.k8s.io/yaml as Sveltos does, so every number is a float64 (Helm prints 1000000 as 1e+06).
	Values map[string]any
	// Data is what the last pass saw (MgmtResources after any mutation by resource functions).
	Data Data
}
