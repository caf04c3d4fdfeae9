package outputs

import (
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/endpoints"
	"kof.dev/kof/operator/names"
)

// Regional is what the operator makes of one regional cluster.
type Regional struct {
	// Cluster is the regional's discovery view.
	Cluster discovery.Cluster
	// Data is the data of its ConfigMap `kof-<c>`; nil when the cluster cannot publish endpoints (a fatal problem
	// says why).
	Data map[string]string
	// Problems are its settings the operator cannot use.
	Problems []Problem
	// Unused is true in regionless mode: the management cluster stores every cluster's data, so a regional
	// ClusterDeployment gets nothing (its ConfigMap, credentials and promxy server group would point promxy at a
	// cluster without storage).
	Unused bool
}

// Ref returns the regional's name and namespace.
func (r Regional) Ref() discovery.Ref {
	return discovery.Ref{Name: r.Cluster.Name, Namespace: r.Cluster.Namespace}
}

// ConfigMap returns the regional ConfigMap `kof-<c>` in the cluster's namespace, labelled Labels() plus role
// regional, with Data; nil when Data is nil.
func (r Regional) ConfigMap() *corev1.ConfigMap {
	if r.Data == nil {
		return nil
	}
	return configMap(r.Cluster.Namespace, names.RegionalConfigMap(r.Cluster.Name),
		withLabels(map[string]string{kofv1.ClusterRoleLabel: kofv1.RoleRegional}), r.Data)
}

// ForRegional takes the operator configuration, the discovery view of a regional ClusterDeployment and the error of
// reading it (discovery.FromClusterDeployment) and returns what the operator makes of it: nothing in regionless
// mode (Unused), else the data of discovery.RegionalData, or none with a fatal problem (InvalidConfig for
// spec.config, InvalidAnnotation for missing endpoints); a setting replaced by its default is a problem that is
// not fatal (InvalidAnnotation naming the key).
func ForRegional(cfg config.Config, c discovery.Cluster, viewErr error) Regional {
	r := Regional{Cluster: c}
	if cfg.Regionless {
		r.Unused = true
		return r
	}
	if viewErr != nil {
		r.Problems = append(r.Problems, Problem{Reason: kofv1.ReasonInvalidConfig, Err: viewErr, Fatal: true})
		return r
	}
	data, ignored, err := discovery.RegionalData(c)
	if err != nil {
		r.Problems = append(r.Problems, Problem{Reason: kofv1.ReasonInvalidAnnotation, Err: err, Fatal: true})
		return r
	}
	r.Data = data
	for _, e := range ignored {
		r.Problems = append(r.Problems, Problem{Reason: kofv1.ReasonInvalidAnnotation, Err: e})
	}
	return r
}

// KeepHTTPConfig returns r with the last valid `kof_http_config` kept: when r's `kof-http-config` annotation is
// malformed (a discovery.HTTPConfigError among its problems) and previous (the data of its ConfigMap as it is, nil
// when there is none) holds a valid value, that value replaces the empty one, so promxy and the storage connections
// keep their settings (docs/annotations.md, "Mistakes"). Otherwise r as it is.
func (r Regional) KeepHTTPConfig(previous map[string]string) Regional {
	last, ok := previous[discovery.KeyHTTPConfig]
	if r.Data == nil || !ok || last == "" || !r.HTTPConfigMalformed() {
		return r
	}
	if _, err := endpoints.ParseHTTPConfig(last); err != nil {
		return r
	}
	r.Data = maps.Clone(r.Data)
	r.Data[discovery.KeyHTTPConfig] = last
	return r
}

// HTTPConfigMalformed reports whether r's `kof-http-config` annotation is malformed (a discovery.HTTPConfigError
// among its problems).
func (r Regional) HTTPConfigMalformed() bool {
	for _, p := range r.Problems {
		var hc *discovery.HTTPConfigError
		if errors.As(p.Err, &hc) {
			return true
		}
	}
	return false
}

// Regionless returns the management cluster as the regionless "regional" (docs/contract.md, "regional
// ConfigMap"): RegionlessClusterName in the KCM namespace, with discovery.RegionlessData.
func Regionless(cfg config.Config) Regional {
	ref := RegionlessRef(cfg)
	return Regional{
		Cluster: discovery.Cluster{Name: ref.Name, Namespace: ref.Namespace, Role: kofv1.RoleRegional},
		Data:    discovery.RegionlessData(ref, cfg.RegionlessDomain),
	}
}

// RegionlessRef returns the management cluster's name and namespace as KOF sees it in regionless mode.
func RegionlessRef(cfg config.Config) discovery.Ref {
	return discovery.Ref{Name: cfg.RegionlessClusterName, Namespace: cfg.KCMNamespace}
}

// RegionlessConfigMap returns the regionless ConfigMap `kof-<mgmt>` in the KCM namespace: the ConfigMap of
// Regionless plus the label `k0rdent.mirantis.com/kof-regionless: "true"`.
func RegionlessConfigMap(cfg config.Config) *corev1.ConfigMap {
	cm := Regionless(cfg).ConfigMap()
	cm.Labels[kofv1.RegionlessLabel] = kofv1.TrueValue
	return cm
}

// Child is what the operator makes of one child cluster.
type Child struct {
	// Cluster is the child's discovery view.
	Cluster discovery.Cluster
	// Regional is the regional it binds to (the management cluster in regionless mode).
	Regional discovery.Ref
	// RegionalIstio is true when that regional is an Istio mesh member.
	RegionalIstio bool
	// Data is the data of its ConfigMap (a copy of its regional's); nil when it is not bound (a fatal problem says
	// why).
	Data map[string]string
	// Problems are its settings the operator cannot use.
	Problems []Problem
}

// ConfigMap returns the child ConfigMap `kof-cluster-config-<c>` in the child's namespace: Data, labelled Labels()
// plus the regional's name and namespace; nil when Data is nil.
func (c Child) ConfigMap() *corev1.ConfigMap {
	if c.Data == nil {
		return nil
	}
	return configMap(c.Cluster.Namespace, names.ChildConfigMap(c.Cluster.Name), withLabels(map[string]string{
		kofv1.RegionalClusterNameLabel: c.Regional.Name, kofv1.RegionalClusterNamespaceLabel: c.Regional.Namespace,
	}), c.Data)
}

// Tenant returns the child's tenant: label `k0rdent.mirantis.com/kof-tenant-id`, default `PLATFORM`.
func (c Child) Tenant() string { return ChildTenant(c.Cluster.Labels) }

// ForChild takes the operator configuration, the discovery view of a child ClusterDeployment with the error of
// reading it, every regional the operator sees (ForRegional of each, or Regionless) and the other KOF clusters
// its label could name, and returns how the operator binds it. Fatal problems: the view error (InvalidConfig), a
// label naming a namespace outside KOF_WATCH_NAMESPACES (OutsideWatchScope), no regional (NoRegionalCluster, the
// message from discovery.FindRegional), a regional without endpoints (RegionalMisconfigured naming the regional
// and its faulty key). A child write-endpoint annotation that is not an absolute http(s) URL is a problem that is
// not fatal (InvalidAnnotation naming the key): the ConfigMap is still made.
func ForChild(cfg config.Config, c discovery.Cluster, viewErr error, regionals []Regional, others []discovery.Cluster) Child {
	ch := Child{Cluster: c}
	fatal := func(reason string, err error) Child {
		ch.Problems = append(ch.Problems, Problem{Reason: reason, Err: err, Fatal: true})
		return ch
	}
	if viewErr != nil {
		return fatal(kofv1.ReasonInvalidConfig, viewErr)
	}
	r, ok, err := bind(cfg, c, regionals, others)
	if err != nil {
		reason := kofv1.ReasonNoRegional
		if !ok {
			reason = kofv1.ReasonOutsideWatchScope
		}
		return fatal(reason, err)
	}
	ch.Regional, ch.RegionalIstio = r.Ref(), r.Cluster.Istio()
	if r.Data == nil {
		return fatal(kofv1.ReasonRegionalMisconfigured, fmt.Errorf("regional cluster %s/%s is misconfigured: %v; "+
			"fix ClusterDeployment %s/%s", r.Cluster.Namespace, r.Cluster.Name, Fatal(r.Problems), r.Cluster.Namespace,
			r.Cluster.Name))
	}
	ch.Data = maps.Clone(r.Data)
	for _, a := range childWriteAnnotations() {
		if v, set := c.Annotations[a]; set {
			if err := endpoints.CheckOverride(a, v); err != nil {
				ch.Problems = append(ch.Problems, Problem{Reason: kofv1.ReasonInvalidAnnotation, Err: err})
			}
		}
	}
	return ch
}

// bind returns the regional child c binds to. ok is false (with the error) when the regional its label names lives
// outside the watch scope.
func bind(cfg config.Config, c discovery.Cluster, regionals []Regional, others []discovery.Cluster) (Regional, bool, error) {
	if cfg.Regionless {
		return Regionless(cfg), true, nil
	}
	if ref, ok := discovery.ExplicitRegional(c); ok {
		if err := cfg.OutsideWatchScope(fmt.Sprintf("regional cluster %s/%s named by label %s", ref.Namespace,
			ref.Name, kofv1.RegionalClusterNameLabel), ref.Namespace); err != nil {
			return Regional{}, false, err
		}
	}
	candidates := make([]discovery.Cluster, 0, len(regionals)+len(others))
	for _, r := range regionals {
		candidates = append(candidates, r.Cluster)
	}
	candidates = append(candidates, others...)
	found, err := discovery.FindRegional(c, candidates)
	if err != nil {
		return Regional{}, true, err
	}
	for _, r := range regionals {
		if r.Cluster.Key() == found.Key() {
			return r, true, nil
		}
	}
	return Regional{}, true, fmt.Errorf("regional cluster %s not found", found.Key())
}

// childWriteAnnotations are the write-endpoint overrides a child may carry (its collectors write there).
func childWriteAnnotations() []string {
	return []string{kofv1.WriteMetricsEndpointAnnotation, kofv1.WriteLogsEndpointAnnotation,
		kofv1.WriteAuditLogsEndpointAnnotation, kofv1.WriteTracesEndpointAnnotation}
}

// VMRulesKey is the data key of a vmrules ConfigMap, read by the regional MultiClusterService's valuesFrom
// (docs/contract.md, "vmrules ConfigMap").
const VMRulesKey = "values"

// EmptyVMRules is the `values` of a vmrules ConfigMap before any rule is merged.
const EmptyVMRules = "vmrules:\n  groups: {}\n"

// VMRulesConfigMap returns the vmrules ConfigMap `kof-record-vmrules-<cluster>` in namespace: key VMRulesKey =
// values, labelled Labels() plus `k0rdent.mirantis.com/kof-record-vmrules-cluster-name: <cluster>`.
func VMRulesConfigMap(namespace, cluster, values string) *corev1.ConfigMap {
	return configMap(namespace, names.VMRulesConfigMap(cluster),
		withLabels(map[string]string{kofv1.VMRulesClusterLabel: cluster}), map[string]string{VMRulesKey: values})
}
