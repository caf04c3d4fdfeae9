package fleet

import (
	"fmt"
	"sort"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// mcsObjects returns every MultiClusterService KOF gives the management cluster (rendered by its releases or
// computed as the operator's outputs; not the given inputs), by name.
func (c *checker) mcsObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, o := range append(append([]*unstructured.Unstructured{}, c.rendered...), c.f.Operator...) {
		if isKCM(o, "MultiClusterService") && !seen[o.GetName()] {
			seen[o.GetName()] = true
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

// templates returns the ServiceTemplates of the management cluster by `namespace/name`.
func (c *checker) templates() map[string]*kcmv1.ServiceTemplate {
	out := map[string]*kcmv1.ServiceTemplate{}
	for _, o := range c.mgmtObjs {
		if isKCM(o, "ServiceTemplate") {
			st := &kcmv1.ServiceTemplate{}
			if fromUnstructured(o, st) == nil {
				out[o.GetNamespace()+"/"+o.GetName()] = st
			}
		}
	}
	return out
}

// serviceNamespace is the namespace of a KCM service or dependsOn entry that names none.
func serviceNamespace(ns string) string {
	if ns == "" {
		return defaultServiceNamespace
	}
	return ns
}

// waits reports every Helm service of every MultiClusterService without helmOptions.wait (unless WaitAllowList
// names it), every service dependsOn naming no service of the same MCS, and every MCS dependsOn naming no MCS.
// A service whose ServiceTemplate deploys plain resources has no Helm release to wait for.
// Source: k0rdent/kcm v1.10.0 api/v1beta1 (Service.HelmOptions, ServiceDependsOn, MultiClusterServiceSpec.DependsOn).
func (c *checker) waits() []Finding {
	tpls := c.templates()
	ns := c.templateNamespace()
	allow := WaitAllowList()
	mcss := c.mcsObjects()
	exists := map[string]bool{}
	for _, o := range mcss {
		exists[o.GetName()] = true
	}
	for _, o := range c.f.inputs {
		if isKCM(o, "MultiClusterService") {
			exists[o.GetName()] = true
		}
	}
	var out []Finding
	for _, o := range mcss {
		var mcs kcmv1.MultiClusterService
		if err := fromUnstructured(o, &mcs); err != nil {
			out = append(out, Finding{Check: CheckWaits, Object: "MultiClusterService " + o.GetName(),
				Message: err.Error(), Fix: "render a valid KCM v1beta1 MultiClusterService"})
			continue
		}
		obj := "MultiClusterService " + o.GetName()
		names := map[string]bool{}
		for _, s := range mcs.Spec.ServiceSpec.Services {
			names[serviceNamespace(s.Namespace)+"/"+s.Name] = true
		}
		for _, d := range mcs.Spec.DependsOn {
			if !exists[d] {
				out = append(out, Finding{Check: CheckWaits, Object: obj,
					Message: fmt.Sprintf("spec.dependsOn names MultiClusterService %s, which does not exist", d),
					Fix:     "name an existing MultiClusterService, or render the one it waits for"})
			}
		}
		for _, s := range mcs.Spec.ServiceSpec.Services {
			key := serviceNamespace(s.Namespace) + "/" + s.Name
			for _, d := range s.DependsOn {
				if !names[serviceNamespace(d.Namespace)+"/"+d.Name] {
					out = append(out, Finding{Check: CheckWaits, Service: s.Name, Object: obj,
						Message: fmt.Sprintf("service %s dependsOn %s/%s, which is no service of this MultiClusterService",
							key, serviceNamespace(d.Namespace), d.Name),
						Fix: "name a service of the same MultiClusterService (name and namespace), or drop the entry"})
				}
			}
			if st := tpls[ns+"/"+s.Template]; st != nil && st.Spec.Resources != nil {
				continue // plain resources: no Helm release to wait for
			}
			if s.HelmOptions != nil && s.HelmOptions.Wait != nil && *s.HelmOptions.Wait {
				continue
			}
			if _, ok := allow[o.GetName()+"/"+s.Name]; ok {
				continue
			}
			out = append(out, Finding{Check: CheckWaits, Service: s.Name, Object: obj,
				Message: fmt.Sprintf("service %s has no helmOptions.wait: its release counts as ready before its "+
					"workloads are, so the services that depend on it start too early", key),
				Fix: "set helmOptions.wait: true on the service (or add it to fleet.WaitAllowList with the reason)"})
		}
	}
	return out
}

// templateNamespace is the namespace of KCM's ServiceTemplates: that of the first ServiceTemplate of the
// management cluster, KCM's system namespace.
func (c *checker) templateNamespace() string {
	for _, o := range c.mgmtObjs {
		if isKCM(o, "ServiceTemplate") {
			return o.GetNamespace()
		}
	}
	return ""
}

// upgrades reports every ServiceTemplateChain that KCM would find invalid (kcmv1 TemplateChainSpec.IsValid), every
// available upgrade without a version, every chain entry naming a ServiceTemplate that does not exist, and every
// MultiClusterService service naming a ServiceTemplate or chain that does not exist.
// Source: k0rdent/kcm v1.10.0 api/v1beta1 (templatechain_common.go: SupportedTemplate, AvailableUpgrade).
func (c *checker) upgrades() []Finding {
	tpls := c.templates()
	chains := map[string]bool{}
	var out []Finding
	for _, o := range c.rendered {
		if !isKCM(o, "ServiceTemplateChain") {
			continue
		}
		chains[o.GetNamespace()+"/"+o.GetName()] = true
		var chain kcmv1.ServiceTemplateChain
		obj := "ServiceTemplateChain " + o.GetNamespace() + "/" + o.GetName()
		if err := fromUnstructured(o, &chain); err != nil {
			out = append(out, Finding{Check: CheckUpgrades, Object: obj, Message: err.Error(),
				Fix: "render a valid KCM v1beta1 ServiceTemplateChain"})
			continue
		}
		if warnings, ok := chain.Spec.IsValid(); !ok {
			for _, w := range warnings {
				out = append(out, Finding{Check: CheckUpgrades, Object: obj, Message: "KCM rejects the chain: " + w,
					Fix: "list every upgrade target among spec.supportedTemplates, each with its version"})
			}
		}
		for i, st := range chain.Spec.SupportedTemplates {
			if tpls[o.GetNamespace()+"/"+st.Name] == nil {
				out = append(out, Finding{Check: CheckUpgrades, Object: obj,
					Message: fmt.Sprintf("spec.supportedTemplates[%d] names ServiceTemplate %s, which does not exist", i, st.Name),
					Fix:     "name an existing ServiceTemplate of the chain's namespace"})
			}
			for j, u := range st.AvailableUpgrades {
				where := fmt.Sprintf("spec.supportedTemplates[%d].availableUpgrades[%d]", i, j)
				if u.Name == "" || u.Version == "" {
					out = append(out, Finding{Check: CheckUpgrades, Object: obj,
						Message: fmt.Sprintf("%s is {name: %q, version: %q}: an upgrade needs both", where, u.Name, u.Version),
						Fix:     "give every available upgrade the target template's name and chart version"})
				}
				if u.Name != "" && tpls[o.GetNamespace()+"/"+u.Name] == nil {
					out = append(out, Finding{Check: CheckUpgrades, Object: obj,
						Message: fmt.Sprintf("%s names ServiceTemplate %s, which does not exist", where, u.Name),
						Fix:     "name an existing ServiceTemplate of the chain's namespace"})
				}
				if msg := notHigher(tpls[o.GetNamespace()+"/"+st.Name], st.Name, u.Version); msg != "" {
					out = append(out, Finding{Check: CheckUpgrades, Object: obj, Message: where + ": " + msg,
						Fix: "offer only templates of a higher chart version as upgrades (kof-mothership lists earlier " +
							"versions only)"})
				}
			}
		}
	}
	ns := c.templateNamespace()
	for _, o := range c.mcsObjects() {
		var mcs kcmv1.MultiClusterService
		if fromUnstructured(o, &mcs) != nil {
			continue // reported by the waits check
		}
		for _, s := range mcs.Spec.ServiceSpec.Services {
			if tpls[ns+"/"+s.Template] == nil {
				out = append(out, Finding{Check: CheckUpgrades, Service: s.Name, Object: "MultiClusterService " + o.GetName(),
					Message: fmt.Sprintf("service %s names ServiceTemplate %s, which does not exist in %s", s.Name, s.Template, ns),
					Fix:     "render the ServiceTemplate (kof-mothership serviceTemplates) or name an existing one"})
			}
			if s.TemplateChain != "" && !chains[ns+"/"+s.TemplateChain] {
				out = append(out, Finding{Check: CheckUpgrades, Service: s.Name, Object: "MultiClusterService " + o.GetName(),
					Message: fmt.Sprintf("service %s names ServiceTemplateChain %s, which does not exist in %s", s.Name, s.TemplateChain, ns),
					Fix:     "render the chain or drop templateChain"})
			}
		}
	}
	return out
}

// notHigher returns why the upgrade of ServiceTemplate from (named name) to a chart version to is not an upgrade:
// to is not higher than from's chart version by semver (github.com/Masterminds/semver, as Helm compares chart
// versions). It returns "" for a true upgrade, when one version is no semver (nothing to order), and when from is
// unknown (reported by the existence check).
func notHigher(from *kcmv1.ServiceTemplate, name, to string) string {
	if from == nil || from.Spec.Helm == nil || from.Spec.Helm.ChartSpec == nil || to == "" {
		return ""
	}
	fv := from.Spec.Helm.ChartSpec.Version
	a, errA := semver.NewVersion(fv)
	b, errB := semver.NewVersion(to)
	if errA != nil || errB != nil {
		return "" // no order to check, as kof-mothership.previousTemplates keeps such templates
	}
	if !b.GreaterThan(a) {
		return fmt.Sprintf("upgrade from ServiceTemplate %s (chart version %s) to version %s is not an upgrade: the "+
			"target is not a higher version", name, fv, to)
	}
	return ""
}
