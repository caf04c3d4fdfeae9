package outputs

import (
	"fmt"
	"sort"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/rules"
)

// Input is what the operator reads on the management cluster.
type Input struct {
	// Config is the operator's environment.
	Config config.Config
	// ClusterDeployments and ClusterTemplates are KCM's objects (any namespace; the operator sees only those
	// inside Config.WatchScope).
	ClusterDeployments []kcmv1.ClusterDeployment
	ClusterTemplates   []kcmv1.ClusterTemplate
	// PrometheusRules are read in the release namespace; ConfigMaps are every ConfigMap of the management cluster
	// (the rule patch ConfigMaps among them are used).
	PrometheusRules []monitoringv1.PrometheusRule
	ConfigMaps      []corev1.ConfigMap
	// Password is the password of every credentials Secret (the live operator draws one per bundle).
	Password string
}

// Object is one object the operator writes and the cluster it writes it for.
type Object struct {
	client.Object
	// Cluster is the ClusterDeployment the object is made for, or the management cluster (Management) in
	// regionless mode.
	Cluster    discovery.Ref
	Management bool
}

// Output is what the operator writes for Input.
type Output struct {
	// Objects are the operator's objects in kind, namespace, name order, each with its kind set and no owner
	// references (the operator adds those).
	Objects []Object
	// Problems are the problems per cluster, keyed `namespace/name` of the ClusterDeployment (the regionless
	// cluster under its KCM namespace and name), in the order found.
	Problems map[string][]Problem
}

// Compute returns everything the operator writes for in, composed of the functions its controllers use: per
// regional ForRegional, RegionPropagation and, from its ConfigMap, the admin Bundle, PromxyServerGroup and
// StorageConnections; per child ForChild and its Bundle; per regional its vmrules ConfigMap merged by
// operator/rules. ClusterDeployments outside the watch scope get nothing and an OutsideWatchScope problem, as the
// operator never sees them.
func Compute(in Input) Output {
	cfg := in.Config
	c := &computation{cfg: cfg, password: in.Password, out: Output{Problems: map[string][]Problem{}}}
	templates := map[string]*kcmv1.ClusterTemplate{}
	for i := range in.ClusterTemplates {
		t := &in.ClusterTemplates[i]
		templates[t.Namespace+"/"+t.Name] = t
	}
	type view struct {
		cluster discovery.Cluster
		err     error
	}
	var regionalViews, childViews []view
	var all []discovery.Cluster
	for i := range in.ClusterDeployments {
		cd := &in.ClusterDeployments[i]
		role := discovery.Role(cd)
		key := cd.Namespace + "/" + cd.Name
		if err := cfg.OutsideWatchScope("ClusterDeployment "+key, cd.Namespace); err != nil {
			if role != "" {
				c.problem(key, Problem{Reason: kofv1.ReasonOutsideWatchScope, Err: err, Fatal: true})
			}
			continue
		}
		v, err := discovery.FromClusterDeployment(cd, templates[cd.Namespace+"/"+cd.Spec.Template])
		all = append(all, v) // any cluster a child's label may name
		switch role {
		case "":
		case kofv1.RoleRegional:
			regionalViews = append(regionalViews, view{v, err})
		default:
			childViews = append(childViews, view{v, err})
		}
	}
	var regionals []Regional
	if cfg.Regionless {
		r := Regionless(cfg)
		regionals = append(regionals, r)
		c.management = true
		c.regional(r, RegionlessConfigMap(cfg))
		c.management = false
	} else {
		for _, v := range regionalViews {
			r := ForRegional(cfg, v.cluster, v.err)
			regionals = append(regionals, r)
			c.regional(r, r.ConfigMap())
		}
		c.vmrules(in, regionals)
	}
	for _, v := range childViews {
		c.child(ForChild(cfg, v.cluster, v.err, regionals, all))
	}
	sort.SliceStable(c.out.Objects, func(i, j int) bool {
		return objectKey(c.out.Objects[i].Object) < objectKey(c.out.Objects[j].Object)
	})
	return c.out
}

// computation accumulates Compute's output.
type computation struct {
	cfg      config.Config
	password string
	out      Output
	// cluster is the cluster the objects added now are for; management marks the regionless one.
	cluster    discovery.Ref
	management bool
}

func (c *computation) problem(key string, p Problem) {
	c.out.Problems[key] = append(c.out.Problems[key], p)
}

func (c *computation) add(objs ...client.Object) {
	for _, o := range objs {
		c.out.Objects = append(c.out.Objects, Object{Object: o, Cluster: c.cluster, Management: c.management})
	}
}

// regional adds regional r's ConfigMap cm (nil when it has none), what the regional controller makes of it and,
// for a KCM region, its propagation MCSs.
func (c *computation) regional(r Regional, cm *corev1.ConfigMap) {
	key := r.Cluster.Key()
	c.cluster = r.Ref()
	for _, p := range r.Problems {
		c.problem(key, p)
	}
	if cm == nil {
		return
	}
	c.add(cm)
	in, ignored, err := ParseRegionalConfigMap(cm)
	for _, e := range ignored {
		c.problem(key, Problem{Reason: kofv1.ReasonInvalidRegionalConfig, Err: e})
	}
	if err != nil {
		c.problem(key, Problem{Reason: kofv1.ReasonInvalidRegionalConfig, Err: err, Fatal: true})
		return
	}
	c.bundle(key, AdminBundle(in))
	if psg, err := PromxyServerGroup(c.cfg, in); err != nil {
		c.problem(key, Problem{Reason: kofv1.ReasonInvalidRegionalConfig, Err: err, Fatal: true})
	} else {
		c.add(psg)
	}
	for _, vc := range StorageConnections(c.cfg, in) {
		c.add(vc)
	}
	mcss, err := RegionPropagation(c.cfg, r)
	if err != nil {
		c.problem(key, Problem{Reason: kofv1.ReasonInvalidAnnotation, Err: err, Fatal: true})
	}
	for _, m := range mcss {
		c.add(m)
	}
}

// child adds child ch's ConfigMap and bundle when it is bound.
func (c *computation) child(ch Child) {
	key := ch.Cluster.Key()
	c.cluster = discovery.Ref{Name: ch.Cluster.Name, Namespace: ch.Cluster.Namespace}
	for _, p := range ch.Problems {
		c.problem(key, p)
	}
	if cm := ch.ConfigMap(); cm != nil {
		c.add(cm)
		c.bundle(key, ChildBundle(c.cfg, ch))
	}
}

// bundle adds the Secret, VMUser and propagation MCS of b.
func (c *computation) bundle(key string, b Bundle) {
	c.add(b.Secret(c.password), b.VMUser(c.cfg))
	m, err := b.Propagation(c.cfg)
	if err != nil {
		c.problem(key, Problem{Reason: kofv1.ReasonInvalidSpec, Err: err, Fatal: true})
		return
	}
	if m != nil {
		c.add(m)
	}
}

// vmrules adds the vmrules ConfigMap of every regional with a ConfigMap, merged from the PrometheusRules of the
// release namespace and the rule patch ConfigMaps (operator/rules.Merge, nothing kept from before); a problem of
// the merge is recorded on every regional whose rules it touches.
func (c *computation) vmrules(in Input, regionals []Regional) {
	input := RulesInput(c.cfg, in.PrometheusRules, in.ConfigMaps)
	for _, r := range regionals {
		if r.Data != nil {
			input.Clusters = append(input.Clusters, r.Cluster.Name)
		}
	}
	merged, problems := rules.Merge(input, rules.Output{})
	for _, r := range regionals {
		if r.Data == nil {
			continue
		}
		for _, p := range problems {
			if p.Cluster == "" || p.Cluster == r.Cluster.Name {
				c.problem(r.Cluster.Key(), Problem{Reason: kofv1.ReasonInvalidSpec,
					Err: fmt.Errorf("vmrules %s: %w", names.VMRulesConfigMap(r.Cluster.Name), p)})
			}
		}
		c.cluster = r.Ref()
		c.add(VMRulesConfigMap(r.Cluster.Namespace, r.Cluster.Name, VMRulesValues(merged, r.Cluster.Name)))
	}
}

// RulesInput returns the input of operator/rules.Merge: the groups of the PrometheusRules in the release namespace
// and the rule patch ConfigMaps among cms (RuleSource). Clusters is left for the caller.
func RulesInput(cfg config.Config, prs []monitoringv1.PrometheusRule, cms []corev1.ConfigMap) rules.Input {
	var own []monitoringv1.PrometheusRule
	for _, pr := range prs {
		if pr.Namespace == cfg.ReleaseNamespace {
			own = append(own, pr)
		}
	}
	in := rules.Input{Groups: rules.FromPrometheusRules(own)}
	for i := range cms {
		if s, ok := RuleSource(&cms[i]); ok {
			in.Sources = append(in.Sources, s)
		}
	}
	return in
}

// RuleSource returns the rule patch of ConfigMap cm: an alert patch when it carries
// `k0rdent.mirantis.com/kof-alert-rules-cluster-name`, a record patch with
// `k0rdent.mirantis.com/kof-record-rules-cluster-name` (value "" = defaults, else a cluster); false otherwise.
func RuleSource(cm *corev1.ConfigMap) (rules.Source, bool) {
	s := rules.Source{Namespace: cm.Namespace, Name: cm.Name, Data: cm.Data}
	if v, ok := cm.Labels[kofv1.AlertRulesClusterLabel]; ok {
		s.Kind, s.Cluster = rules.Alert, v
		return s, true
	}
	if v, ok := cm.Labels[kofv1.RecordRulesClusterLabel]; ok {
		s.Kind, s.Cluster = rules.Record, v
		return s, true
	}
	return s, false
}

// VMRulesValues returns the `values` of cluster's vmrules ConfigMap in merged: its merged rules, or EmptyVMRules
// when the merge has none for it (a faulty input and nothing kept).
func VMRulesValues(merged rules.Output, cluster string) string {
	if v, ok := merged.VMRules[cluster]; ok {
		return v
	}
	return EmptyVMRules
}

// objectKey orders objects by kind, namespace and name.
func objectKey(o client.Object) string {
	return o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetNamespace() + "/" + o.GetName()
}
