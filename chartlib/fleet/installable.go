package fleet

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// graph is the install order of one cluster's services: who waits for whom, and which API groups each installs.
type graph struct {
	services []*Service
	// deps[i] are the indexes of the services service i waits for (directly).
	deps [][]int
	// crds[i] are the groups of service i's own chart crds/ (installed before its templates); provides[i] every
	// group service i installs for the services that wait for it.
	crds, provides []map[string]bool
}

// newGraph builds the graph of cl: HelmRelease dependsOn (Flux), MultiClusterService service dependsOn (KCM), every
// service of an MCS after every service of the MCSs its spec.dependsOn names, the umbrella release before
// everything on the management cluster, and each management cluster MCS's services after the release that renders
// the MCS (and what that release waits for).
func (c *checker) newGraph(cl *Cluster) *graph {
	g := &graph{services: cl.Services, deps: make([][]int, len(cl.Services)),
		crds: make([]map[string]bool, len(cl.Services)), provides: make([]map[string]bool, len(cl.Services))}
	byKey := map[string]int{}
	mcsOwner := map[string]int{}
	umbrella := -1
	for i, s := range cl.Services {
		byKey[serviceKey(s, s.Namespace+"/"+s.Name)] = i
		if s.Via == "helm install" {
			umbrella = i
		}
		if s.hr != "" {
			byKey["hr:"+s.hr] = i
		}
		if s.Objects != nil && cl.Role == RoleManagement {
			for _, o := range s.Objects.OfKind("MultiClusterService") {
				mcsOwner[o.GetName()] = i
			}
		}
		g.crds[i], g.provides[i] = c.groupsOf(s)
	}
	mcsDeps := map[string][]string{}
	for _, o := range c.mcsObjects() {
		mcsDeps[o.GetName()], _, _ = unstructured.NestedStringSlice(o.Object, "spec", "dependsOn")
	}
	for i, s := range cl.Services {
		for _, d := range s.DependsOn {
			if j, ok := byKey[serviceKey(s, d)]; ok {
				g.deps[i] = append(g.deps[i], j)
			}
		}
		if mcs, ok := strings.CutPrefix(s.Via, "MultiClusterService "); ok {
			for _, dep := range mcsDeps[mcs] {
				for j, o := range cl.Services {
					if o.Via == "MultiClusterService "+dep {
						g.deps[i] = append(g.deps[i], j)
					}
				}
			}
		}
		if umbrella >= 0 && i != umbrella {
			g.deps[i] = append(g.deps[i], umbrella)
		}
		if mcs, ok := strings.CutPrefix(s.Via, "MultiClusterService "); ok {
			if j, ok := mcsOwner[mcs]; ok {
				g.deps[i] = append(g.deps[i], j)
			}
		}
		if s.Name == OperatorOutputs {
			for j, o := range cl.Services {
				if strings.HasPrefix(o.Via, "HelmRelease ") {
					g.deps[i] = append(g.deps[i], j)
				}
			}
		}
	}
	return g
}

// serviceKey returns the key under which s names the service ref (`namespace/name`) in its dependsOn: HelmReleases
// name HelmReleases, MCS services name services of the same MCS.
func serviceKey(s *Service, ref string) string {
	if strings.HasPrefix(s.Via, "HelmRelease ") {
		return "hr:" + ref
	}
	return s.Via + ":" + ref
}

// before returns the indexes of every service i waits for, directly or not.
func (g *graph) before(i int) map[int]bool {
	seen := map[int]bool{}
	var walk func(int)
	walk = func(j int) {
		for _, d := range g.deps[j] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(i)
	return seen
}

// groupsOf returns the groups of s's own chart crds/ and every group s installs for later services: its crds/, the
// CRDs its templates render, the CRDs of a third-party chart (chartAPIs), and those of the charts of the Flux
// HelmReleases it renders (kof-operators' operators; the umbrella's releases are services of their own).
func (c *checker) groupsOf(s *Service) (crds, provides map[string]bool) {
	crds, provides = map[string]bool{}, map[string]bool{}
	if s.Local && s.Chart != "" && c.f.charts != nil && c.f.charts.local(s.Chart) {
		if ch, err := c.f.charts.get(s.Chart); err == nil {
			for _, crd := range ch.CRDObjects() {
				var obj map[string]any
				if yaml.Unmarshal(crd.File.Data, &obj) == nil {
					crds[str(obj, "spec", "group")] = true
				}
			}
		}
	}
	if !s.Local && !s.Resources {
		for _, g := range chartAPIs()[s.Chart] {
			provides[g] = true
		}
	}
	if s.Objects != nil {
		for _, o := range s.Objects.OfKind("CustomResourceDefinition") {
			provides[str(o.Object, "spec", "group")] = true
		}
		if s.Via != "helm install" {
			for _, hr := range s.Objects.OfKind("HelmRelease") {
				for _, g := range chartAPIs()[str(hr.Object, "spec", "chart", "spec", "chart")] {
					provides[g] = true
				}
			}
		}
	}
	for g := range crds {
		provides[g] = true
	}
	return crds, provides
}

// installable reports every object of cl whose kind nothing serves before it (on the management cluster, the base
// APIs and the CRDs given as inputs count as served), and every class, issuer or parent Gateway an object names that
// is not present on cl.
func (c *checker) installable(cl *Cluster) []Finding {
	g := c.newGraph(cl)
	base := map[string]bool{}
	if cl.Role == RoleManagement {
		for _, grp := range managementAPIs() {
			base[grp] = true
		}
		for _, o := range c.f.inputs {
			if o.GetKind() == "CustomResourceDefinition" {
				base[str(o.Object, "spec", "group")] = true // installed on the management cluster already
			}
		}
	}
	var out []Finding
	for i, s := range cl.Services {
		if s.Objects == nil {
			continue
		}
		served := map[string]bool{}
		for grp := range g.crds[i] {
			served[grp] = true
		}
		for j := range g.before(i) {
			for grp := range g.provides[j] {
				served[grp] = true
			}
		}
		reported := map[schema.GroupKind]bool{}
		for _, o := range s.Objects.Objects() {
			gk := o.GroupVersionKind().GroupKind()
			if c.builtins[gk] || base[gk.Group] || served[gk.Group] || reported[gk] {
				continue
			}
			reported[gk] = true
			out = append(out, c.unserved(g, i, o, gk))
		}
	}
	return append(out, c.references(cl)...)
}

// unserved explains why object o of service i has no CRD before it.
func (c *checker) unserved(g *graph, i int, o *unstructured.Unstructured, gk schema.GroupKind) Finding {
	s := g.services[i]
	f := Finding{Check: CheckInstallable, Service: s.Name, Object: keyOf(o, s).String()}
	var by []string
	for j, p := range g.provides {
		if p[gk.Group] && j != i {
			by = append(by, serviceLabel(g.services[j]))
		}
	}
	if len(by) > 0 {
		f.Message = fmt.Sprintf("kind %s.%s is installed by %s, which %s does not wait for; it may be applied "+
			"before its CRD exists", gk.Kind, gk.Group, strings.Join(by, ", "), serviceLabel(s))
		f.Fix = "make the service depend on the service that installs the CRD (dependsOn)"
		return f
	}
	f.Message = fmt.Sprintf("kind %s.%s is served by no CRD on this cluster: nothing installs group %s here",
		gk.Kind, gk.Group, gk.Group)
	f.Fix = "install the chart that brings the CRD on this cluster before " + s.Name + ", or stop rendering the object here"
	return f
}

// present is what a cluster has of the things objects name: classes, issuers and Gateways.
type present struct {
	gatewayClasses, ingressClasses, clusterIssuers, issuers, gateways map[string]bool
}

// presentOn collects the GatewayClasses, IngressClasses, ClusterIssuers, Issuers and Gateways of cl (rendered, made
// by a third-party chart, or, on the management cluster, given as inputs).
func (c *checker) presentOn(cl *Cluster) present {
	p := present{map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}}
	var objs []*unstructured.Unstructured
	for _, s := range cl.Services {
		if s.Objects != nil {
			objs = append(objs, s.Objects.Objects()...)
		}
		if class := chartIngressClass(s.Chart, s.Values); class != "" && !s.Local {
			p.ingressClasses[class] = true
		}
	}
	if cl.Role == RoleManagement {
		objs = append(objs, c.f.inputs...)
	}
	for _, o := range objs {
		switch o.GroupVersionKind().GroupKind() {
		case schema.GroupKind{Group: groupGatewayAPI, Kind: "GatewayClass"}:
			p.gatewayClasses[o.GetName()] = true
		case schema.GroupKind{Group: "networking.k8s.io", Kind: "IngressClass"}:
			p.ingressClasses[o.GetName()] = true
		case schema.GroupKind{Group: groupCertManager, Kind: "ClusterIssuer"}:
			p.clusterIssuers[o.GetName()] = true
		case schema.GroupKind{Group: groupCertManager, Kind: "Issuer"}:
			p.issuers[o.GetNamespace()+"/"+o.GetName()] = true
		case schema.GroupKind{Group: groupGatewayAPI, Kind: "Gateway"}:
			p.gateways[o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	return p
}

// reference is one name an object gives of something that must be present on the cluster.
type reference struct {
	what, name, field string
	set               map[string]bool
}

// references reports every reference of cl's objects to a missing class, issuer or Gateway.
func (c *checker) references(cl *Cluster) []Finding {
	p := c.presentOn(cl)
	var out []Finding
	for _, s := range cl.Services {
		if s.Objects == nil {
			continue
		}
		for _, o := range s.Objects.Objects() {
			for _, r := range referencesOf(o, s, p) {
				if r.name == "" || r.set[r.name] {
					continue
				}
				out = append(out, Finding{Check: CheckInstallable, Service: s.Name, Object: keyOf(o, s).String(),
					Message: fmt.Sprintf("%s names %s %s, which nothing creates on this cluster", r.field, r.what, r.name),
					Fix:     fmt.Sprintf("create %s %s on this cluster (render it, or install the chart that makes it), or name one that exists", r.what, r.name)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Service < out[j].Service })
	return out
}

// referencesOf returns the classes, issuers and Gateways object o names: Gateway gatewayClassName, Ingress
// ingressClassName, HTTPRoute parentRefs, Certificate issuerRef, (Cluster)Issuer ACME HTTP-01 solvers, and the
// cert-manager issuer annotations. Sources: Gateway API v1, networking.k8s.io/v1, cert-manager v1.
func referencesOf(o *unstructured.Unstructured, s *Service, p present) []reference {
	ns := keyOf(o, s).namespace
	var out []reference
	switch o.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: groupGatewayAPI, Kind: "Gateway"}:
		out = append(out, reference{"GatewayClass", str(o.Object, "spec", "gatewayClassName"), "spec.gatewayClassName", p.gatewayClasses})
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}:
		out = append(out, reference{"IngressClass", str(o.Object, "spec", "ingressClassName"), "spec.ingressClassName", p.ingressClasses})
	case schema.GroupKind{Group: groupGatewayAPI, Kind: "HTTPRoute"}:
		spec, _, _ := unstructured.NestedMap(o.Object, "spec")
		out = append(out, parentGateways(spec, "spec.parentRefs", ns, p)...)
	case schema.GroupKind{Group: groupCertManager, Kind: "Certificate"}:
		name, kind := str(o.Object, "spec", "issuerRef", "name"), str(o.Object, "spec", "issuerRef", "kind")
		if kind == "ClusterIssuer" {
			out = append(out, reference{"ClusterIssuer", name, "spec.issuerRef", p.clusterIssuers})
		} else {
			out = append(out, reference{"Issuer", ns + "/" + name, "spec.issuerRef", p.issuers})
		}
	case schema.GroupKind{Group: groupCertManager, Kind: "ClusterIssuer"}, schema.GroupKind{Group: groupCertManager, Kind: "Issuer"}:
		solvers, _, _ := unstructured.NestedSlice(o.Object, "spec", "acme", "solvers")
		for i, sv := range solvers {
			m, _ := sv.(map[string]any)
			field := fmt.Sprintf("spec.acme.solvers[%d].http01", i)
			if class := str(m, "http01", "ingress", "ingressClassName"); class != "" {
				out = append(out, reference{"IngressClass", class, field + ".ingress.ingressClassName", p.ingressClasses})
			}
			if class := str(m, "http01", "ingress", "class"); class != "" {
				out = append(out, reference{"IngressClass", class, field + ".ingress.class", p.ingressClasses})
			}
			route, _, _ := unstructured.NestedMap(m, "http01", "gatewayHTTPRoute")
			out = append(out, parentGateways(route, field+".gatewayHTTPRoute.parentRefs", ns, p)...)
		}
	}
	ann := o.GetAnnotations()
	if name := ann["cert-manager.io/cluster-issuer"]; name != "" {
		out = append(out, reference{"ClusterIssuer", name, "annotation cert-manager.io/cluster-issuer", p.clusterIssuers})
	}
	if name := ann["cert-manager.io/issuer"]; name != "" {
		out = append(out, reference{"Issuer", ns + "/" + name, "annotation cert-manager.io/issuer", p.issuers})
	}
	return out
}

// parentGateways returns the Gateways the parentRefs of obj name (kind Gateway by default; namespace defaults to
// ns).
func parentGateways(obj map[string]any, field, ns string, p present) []reference {
	refs, _, _ := unstructured.NestedSlice(obj, "parentRefs")
	var out []reference
	for i, r := range refs {
		m, _ := r.(map[string]any)
		if kind := str(m, "kind"); kind != "" && kind != "Gateway" {
			continue
		}
		gns := str(m, "namespace")
		if gns == "" {
			gns = ns
		}
		out = append(out, reference{"Gateway", gns + "/" + str(m, "name"), fmt.Sprintf("%s[%d]", field, i), p.gateways})
	}
	return out
}
