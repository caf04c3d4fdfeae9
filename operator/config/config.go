// Package config reads the KOF operator's environment once at start-up into one validated struct (docs/contract.md,
// "Operator environment"). The kof-mothership chart sets these variables from its values; a missing or malformed
// required value stops start-up with a message naming the variable and the fix.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/operator/endpoints"
)

// Environment variable names (docs/contract.md, "Operator environment"; those marked ours are new in this operator).
const (
	EnvReleaseNamespace = "RELEASE_NAMESPACE"
	EnvReleaseName      = "RELEASE_NAME"

	EnvRegionlessEnabled = "KOF_REGIONLESS_ENABLED"
	EnvRegionlessDomain  = "KOF_REGIONLESS_DOMAIN"
	// EnvRegionlessClusterName (ours) is the management cluster's name as KOF sees it; default `mothership`.
	EnvRegionlessClusterName = "KOF_REGIONLESS_CLUSTER_NAME"
	// EnvKCMNamespace (ours) is the KCM system namespace holding the regionless ConfigMap; default `kcm-system`.
	EnvKCMNamespace = "KOF_KCM_NAMESPACE"

	EnvAutoUpgrade         = "KOF_AUTO_UPGRADE"
	EnvVersion             = "KOF_VERSION"
	EnvPropagationTemplate = "KOF_PROPAGATION_TEMPLATE"

	EnvRegionalMCS      = "KOF_REGIONAL_CLUSTER_MCS_NAME"
	EnvChildMCS         = "KOF_CHILD_CLUSTER_MCS_NAME"
	EnvIstioRegionalMCS = "KOF_ISTIO_REGIONAL_CLUSTER_MCS_NAME"
	EnvIstioChildMCS    = "KOF_ISTIO_CHILD_CLUSTER_MCS_NAME"

	EnvVTClusterName = "KOF_VT_CLUSTER_NAME"
	EnvVLClusterName = "KOF_VL_CLUSTER_NAME"
	// EnvVLAuditClusterName (ours) is the audit logs VLCluster; default `<KOF_VL_CLUSTER_NAME>-audit`.
	EnvVLAuditClusterName = "KOF_VL_AUDIT_CLUSTER_NAME"

	// The eight storage URLs the VMUser routes point at (in route order of docs/contract.md, "VMUser routes"), named
	// as the KOF implementation guide names them: KOF_<VM|VL|VL_AUDIT|VT>_<INSERT|SELECT>_URL.
	EnvVMInsertURL      = "KOF_VM_INSERT_URL"
	EnvVMSelectURL      = "KOF_VM_SELECT_URL"
	EnvVLInsertURL      = "KOF_VL_INSERT_URL"
	EnvVLSelectURL      = "KOF_VL_SELECT_URL"
	EnvVLAuditInsertURL = "KOF_VL_AUDIT_INSERT_URL"
	EnvVLAuditSelectURL = "KOF_VL_AUDIT_SELECT_URL"
	EnvVTInsertURL      = "KOF_VT_INSERT_URL"
	EnvVTSelectURL      = "KOF_VT_SELECT_URL"

	// EnvPromxyPodSelector is the label selector of the promxy pods to reload, e.g. `app.kubernetes.io/name=promxy`.
	EnvPromxyPodSelector = "KOF_PROMXY_POD_SELECTOR"
	// EnvPromxySecretName is the promxy config Secret name, also the `k0rdent.mirantis.com/secret-name` label value of
	// the PromxyServerGroups the operator makes.
	EnvPromxySecretName = "KOF_PROMXY_SECRET_NAME"
	// EnvPromxyAlertmanagerURL (ours) is the Alertmanager promxy sends alerts to; optional.
	EnvPromxyAlertmanagerURL = "KOF_PROMXY_ALERTMANAGER_URL"
	// EnvPromxyRemoteWriteURL (ours) is where promxy writes recording rule results; optional.
	EnvPromxyRemoteWriteURL = "KOF_PROMXY_REMOTE_WRITE_URL"
	// EnvPromxyRulesConfigMap (ours) is the promxy rules ConfigMap name; default `<RELEASE_NAME>-promxy-rules`.
	EnvPromxyRulesConfigMap = "KOF_PROMXY_RULES_CONFIGMAP"

	// EnvWatchNamespaces (ours) is a comma-separated list of namespaces the informer cache watches; empty = all.
	EnvWatchNamespaces = "KOF_WATCH_NAMESPACES"
)

// Defaults of the optional variables.
const (
	DefaultRegionlessClusterName = "mothership"
	DefaultKCMNamespace          = "kcm-system"
	DefaultRegionalMCS           = "kof-regional-cluster"
	DefaultChildMCS              = "kof-child-cluster"
	DefaultIstioRegionalMCS      = "kof-istio-regional-cluster"
	DefaultIstioChildMCS         = "kof-istio-child-cluster"
)

// StorageURLs are the storage services the eight VMUser routes point at.
type StorageURLs struct {
	VMInsert, VMSelect           string
	VLInsert, VLSelect           string
	VLAuditInsert, VLAuditSelect string
	VTInsert, VTSelect           string
}

// Config is the operator's validated environment.
type Config struct {
	ReleaseNamespace string
	ReleaseName      string

	// Regionless is true when storage lives on the management cluster; RegionlessDomain is then required.
	Regionless            bool
	RegionlessDomain      string
	RegionlessClusterName string
	KCMNamespace          string

	AutoUpgrade bool
	// Version is the KOF chart version; required when AutoUpgrade is false (MCS selector gate).
	Version             string
	PropagationTemplate string

	RegionalMCS, ChildMCS           string
	IstioRegionalMCS, IstioChildMCS string

	VTClusterName      string
	VLClusterName      string
	VLAuditClusterName string

	Storage StorageURLs

	PromxyPodSelector     labels.Selector
	PromxySecretName      string
	PromxyAlertmanagerURL string
	PromxyRemoteWriteURL  string
	PromxyRulesConfigMap  string

	// WatchNamespaces limits the informer cache; nil means every namespace.
	WatchNamespaces []string
}

// WatchScope returns the namespaces the operator's informer cache holds, sorted: WatchNamespaces plus the release
// and KCM namespaces (which hold the operator's own inputs), or nil for every namespace when WatchNamespaces is
// empty (docs/operator.md, "Watch scope").
func (c Config) WatchScope() []string {
	if len(c.WatchNamespaces) == 0 {
		return nil
	}
	set := map[string]bool{c.ReleaseNamespace: true, c.KCMNamespace: true}
	for _, ns := range c.WatchNamespaces {
		set[ns] = true
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		if ns != "" {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// Watches reports whether the operator sees objects in namespace ns (WatchScope).
func (c Config) Watches(ns string) bool {
	scope := c.WatchScope()
	if scope == nil {
		return true
	}
	i := sort.SearchStrings(scope, ns)
	return i < len(scope) && scope[i] == ns
}

// OutsideWatchScope returns the error for an object in namespace ns that the operator does not see: it names the
// namespace, the variable and the chart value that widen the scope. It returns nil when Watches(ns).
func (c Config) OutsideWatchScope(what, ns string) error {
	if c.Watches(ns) {
		return nil
	}
	return fmt.Errorf("%s: namespace %s is outside %s (%s); add it to the kof-mothership value "+
		"operator.watchNamespaces", what, ns, EnvWatchNamespaces, strings.Join(c.WatchScope(), ","))
}

// Load reads the environment through getenv (os.Getenv in main, a map in tests) and validates it. It returns every
// problem at once, each naming the variable and the fix.
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		ReleaseNamespace:      r.required(EnvReleaseNamespace),
		ReleaseName:           r.required(EnvReleaseName),
		Regionless:            r.boolean(EnvRegionlessEnabled, false),
		RegionlessDomain:      r.optional(EnvRegionlessDomain, ""),
		RegionlessClusterName: r.optional(EnvRegionlessClusterName, DefaultRegionlessClusterName),
		KCMNamespace:          r.optional(EnvKCMNamespace, DefaultKCMNamespace),
		AutoUpgrade:           r.boolean(EnvAutoUpgrade, true),
		Version:               r.optional(EnvVersion, ""),
		PropagationTemplate:   r.required(EnvPropagationTemplate),
		RegionalMCS:           r.optional(EnvRegionalMCS, DefaultRegionalMCS),
		ChildMCS:              r.optional(EnvChildMCS, DefaultChildMCS),
		IstioRegionalMCS:      r.optional(EnvIstioRegionalMCS, DefaultIstioRegionalMCS),
		IstioChildMCS:         r.optional(EnvIstioChildMCS, DefaultIstioChildMCS),
		VTClusterName:         r.required(EnvVTClusterName),
		VLClusterName:         r.required(EnvVLClusterName),
		Storage: StorageURLs{
			VMInsert: r.url(EnvVMInsertURL), VMSelect: r.url(EnvVMSelectURL),
			VLInsert: r.url(EnvVLInsertURL), VLSelect: r.url(EnvVLSelectURL),
			VLAuditInsert: r.url(EnvVLAuditInsertURL), VLAuditSelect: r.url(EnvVLAuditSelectURL),
			VTInsert: r.url(EnvVTInsertURL), VTSelect: r.url(EnvVTSelectURL),
		},
		PromxyPodSelector:     r.selector(EnvPromxyPodSelector),
		PromxySecretName:      r.required(EnvPromxySecretName),
		PromxyAlertmanagerURL: r.optionalURL(EnvPromxyAlertmanagerURL),
		PromxyRemoteWriteURL:  r.optionalURL(EnvPromxyRemoteWriteURL),
		WatchNamespaces:       r.list(EnvWatchNamespaces),
	}
	c.VLAuditClusterName = r.optional(EnvVLAuditClusterName, c.VLClusterName+"-audit")
	c.PromxyRulesConfigMap = r.optional(EnvPromxyRulesConfigMap, c.ReleaseName+"-promxy-rules")
	if c.Regionless && c.RegionlessDomain == "" {
		r.fail(EnvRegionlessDomain, "required when %s is true; set the regionless.domain value", EnvRegionlessEnabled)
	}
	if !c.AutoUpgrade && c.Version == "" {
		r.fail(EnvVersion, "required when %s is false; set it to the KOF chart version", EnvAutoUpgrade)
	}
	return c, errors.Join(r.errs...)
}

// reader collects the problems found while reading variables.
type reader struct {
	getenv func(string) string
	errs   []error
}

func (r *reader) fail(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("environment %s: %s", name, fmt.Sprintf(format, args...)))
}

func (r *reader) optional(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) required(name string) string {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		r.fail(name, "required; set it in the kof-mothership chart values")
	}
	return v
}

func (r *reader) boolean(name string, def bool) bool {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, "%q is not a boolean; use true or false", v)
		return def
	}
	return b
}

func (r *reader) url(name string) string {
	v := r.required(name)
	if v != "" {
		if err := endpoints.CheckURL(v); err != nil {
			r.fail(name, "%v", err)
		}
	}
	return v
}

func (r *reader) optionalURL(name string) string {
	v := r.optional(name, "")
	if v != "" {
		if err := endpoints.CheckURL(v); err != nil {
			r.fail(name, "%v", err)
		}
	}
	return v
}

func (r *reader) selector(name string) labels.Selector {
	v := r.required(name)
	if v == "" {
		return labels.Nothing()
	}
	s, err := labels.Parse(v)
	if err != nil {
		r.fail(name, "invalid label selector %q: %v; use the form app.kubernetes.io/name=promxy", v, err)
		return labels.Nothing()
	}
	if s.Empty() {
		r.fail(name, "selector %q selects every pod; name the promxy pods' labels", v)
	}
	return s
}

func (r *reader) list(name string) []string {
	var out []string
	for _, p := range strings.Split(r.getenv(name), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// shippedDeployment is the operator Deployment shipped without Helm, whose environment is the one the
// kof-mothership chart renders with its default values.
//
//go:embed manager/deployment.yaml
var shippedDeployment []byte

// Shipped returns the configuration of the shipped operator (operator/config/manager/deployment.yaml, the
// environment of its container `manager`, read by Load with its defaults), the one source of the default
// configuration the controller tests run with. The error names what does not load.
func Shipped() (Config, error) {
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string `json:"name"`
						Env  []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(shippedDeployment, &d); err != nil {
		return Config{}, fmt.Errorf("operator/config/manager/deployment.yaml: %w", err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		env := make(map[string]string, len(c.Env))
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		cfg, err := Load(func(k string) string { return env[k] })
		if err != nil {
			return Config{}, fmt.Errorf("operator/config/manager/deployment.yaml: %w", err)
		}
		return cfg, nil
	}
	return Config{}, errors.New("operator/config/manager/deployment.yaml: no container named manager")
}
