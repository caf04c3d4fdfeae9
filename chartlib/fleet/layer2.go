package fleet

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/endpoints"
)

// ManagementClusterLabel selects the management cluster itself (docs/contract.md, "Cluster roles and labels").
const ManagementClusterLabel = "k0rdent.mirantis.com/management-cluster"

// defaultServiceNamespace is the namespace of a service that names none (KCM api/v1beta1 Service.Namespace).
const defaultServiceNamespace = "default"

// layer2 holds what every cluster's layer-2 evaluation reads; it is read-only once built.
type layer2 struct {
	opts   Options
	mgmt   *management
	mcss   []multiClusterService
	stpls  []*unstructured.Unstructured
	repos  []*unstructured.Unstructured
	refObj []*unstructured.Unstructured
	ops    []*unstructured.Unstructured
}

// multiClusterService is the part of a KCM MultiClusterService layer 2 needs.
type multiClusterService struct {
	name     string
	selector labels.Selector
	self     bool
	services []kcmv1.Service
	refs     []sveltos.TemplateResourceRef
}

// target is one cluster layer 2 evaluates services for.
type target struct {
	cluster *Cluster
	obj     *unstructured.Unstructured
	labels  map[string]string
	// annotations are the ClusterDeployment's (metadata over spec.config.clusterAnnotations); nil for the
	// management cluster.
	annotations map[string]string
	self        bool
}

// newLayer2 reads the MultiClusterServices and ServiceTemplates of the management cluster and gathers the objects
// templateResourceRefs may read: the given inputs, every cluster's CAPI Cluster or SveltosCluster, the management
// cluster's rendered objects and the operator's outputs. A MultiClusterService that cannot be read is an error.
func newLayer2(_ context.Context, opts Options, m *management, in *inputs, ops []*unstructured.Unstructured) (*layer2, error) {
	p := &layer2{opts: opts, mgmt: m, ops: ops}
	all := append(append([]*unstructured.Unstructured{}, m.objects...), in.objects...)
	for _, o := range all {
		switch {
		case isKCM(o, "MultiClusterService"):
			mcs, err := readMCS(o)
			if err != nil {
				return nil, err
			}
			p.mcss = append(p.mcss, mcs)
		case isKCM(o, "ServiceTemplate"):
			p.stpls = append(p.stpls, o)
		case o.GetKind() == "HelmRepository":
			p.repos = append(p.repos, o)
		}
	}
	p.refObj = append(p.refObj, in.objects...)
	for _, d := range in.deployments {
		if d.cluster != nil {
			p.refObj = append(p.refObj, d.cluster)
		}
	}
	p.refObj = append(p.refObj, managementSveltosCluster())
	p.refObj = append(p.refObj, m.objects...)
	p.refObj = append(p.refObj, ops...)
	return p, nil
}

// readMCS decodes a MultiClusterService into its kcm v1beta1 type.
func readMCS(o *unstructured.Unstructured) (multiClusterService, error) {
	var typed kcmv1.MultiClusterService
	if err := fromUnstructured(o, &typed); err != nil {
		return multiClusterService{}, err
	}
	sel, err := metav1.LabelSelectorAsSelector(&typed.Spec.ClusterSelector)
	if err != nil {
		return multiClusterService{}, fmt.Errorf("MultiClusterService %s: spec.clusterSelector: %w", o.GetName(), err)
	}
	mcs := multiClusterService{name: o.GetName(), selector: sel, self: typed.Spec.ServiceSpec.Provider.SelfManagement}
	for _, s := range typed.Spec.ServiceSpec.Services {
		if !s.Disable {
			mcs.services = append(mcs.services, s)
		}
	}
	for _, r := range typed.Spec.ServiceSpec.TemplateResourceRefs {
		mcs.refs = append(mcs.refs, sveltos.TemplateResourceRef{
			Resource: r.Resource, Identifier: r.Identifier, Optional: r.Optional,
			IgnoreStatusChanges: r.IgnoreStatusChanges, WatchFields: r.WatchFields,
		})
	}
	return mcs, nil
}

// lint returns the hazards of every MCS service's values text, in MCS and service order.
func (p *layer2) lint() []LintFinding {
	var out []LintFinding
	for _, mcs := range p.mcss {
		for _, svc := range mcs.services {
			for _, f := range sveltos.Lint(svc.Values) {
				out = append(out, LintFinding{MCS: mcs.name, Service: svc.Name, Finding: f})
			}
		}
	}
	return out
}

// managementLabels are the labels of the management cluster's SveltosCluster.
func managementLabels() map[string]string { return map[string]string{ManagementClusterLabel: "true"} }

// managementSveltosCluster returns the SveltosCluster mgmt/mgmt.
func managementSveltosCluster() *unstructured.Unstructured {
	return sveltos.ManagementCluster(managementLabels())
}

// managementCluster returns the management cluster with what layer 1 installs on it: the umbrella release, every
// component release and, when computed, the operator's outputs.
func (p *layer2) managementCluster(m *management) *Cluster {
	c := &Cluster{Name: sveltos.ManagementClusterName, Namespace: sveltos.ManagementClusterNamespace, Role: RoleManagement}
	user, err := render.UserValues(render.Options{ValuesFiles: p.opts.ValuesFiles, Values: p.opts.Values})
	if err != nil {
		c.Errors = append(c.Errors, err)
	}
	c.Services = append(c.Services, &Service{
		Via: "helm install", Name: p.opts.ReleaseName, Namespace: p.opts.Namespace, Chart: UmbrellaChart,
		Local: true, Objects: m.umbrella, Values: user,
	})
	for _, r := range m.releases {
		c.Services = append(c.Services, &Service{
			Via: "HelmRelease " + r.hr, Name: r.Name, Namespace: r.Namespace,
			Chart: r.Chart, Version: r.Version, Repository: r.Repository, Local: r.Local, Objects: r.Objects,
			Values: r.Values, DependsOn: r.DependsOn, hr: r.hr,
		})
	}
	if p.opts.ManagementObjects == nil && len(p.ops) > 0 {
		objs := make([]manifest.Object, 0, len(p.ops))
		for _, o := range p.ops {
			objs = append(objs, manifest.Object{Unstructured: o, Source: "kof-operator (computed offline)"})
		}
		c.Services = append(c.Services, &Service{
			Via: "kof-operator (computed offline)", Name: OperatorOutputs, Local: true, Objects: manifest.New(objs...),
		})
	}
	if p.opts.Validator != nil {
		for _, s := range c.Services {
			if s.Objects != nil {
				s.Findings = p.opts.Validator.Set(s.Objects)
			}
		}
	}
	return c
}

// OperatorOutputs is the service name under which the management cluster shows the operator's computed outputs.
const OperatorOutputs = "kof-operator-outputs"

// run evaluates every MultiClusterService for every cluster, at most n clusters at once. clusters[0] is the
// management cluster and clusters[1:] are in.deployments in order. It returns ctx's error when cancelled.
func (p *layer2) run(ctx context.Context, clusters []*Cluster, in *inputs, n int) error {
	targets := []target{{cluster: clusters[0], obj: managementSveltosCluster(), labels: managementLabels(), self: true}}
	for i, d := range in.deployments {
		if d.cluster != nil {
			cd, _ := readClusterAnnotations(d.obj)
			targets = append(targets, target{cluster: clusters[i+1], obj: d.cluster, labels: d.obj.GetLabels(),
				annotations: endpoints.Merge(d.obj.GetAnnotations(), cd)})
		}
	}
	jobs := make(chan target)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				p.evaluate(ctx, t)
			}
		}()
	}
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		jobs <- t
	}
	close(jobs)
	wg.Wait()
	return ctx.Err()
}

// evaluate adds to t.cluster the services of every MultiClusterService whose selector matches it: every
// ClusterDeployment is a candidate of every MCS; the management cluster only of those with self-management
// (KCM: MultiClusterService clusterSelector and provider.selfManagement).
func (p *layer2) evaluate(ctx context.Context, t target) {
	for _, mcs := range p.mcss {
		if (t.self && !mcs.self) || !mcs.selector.Matches(labels.Set(t.labels)) {
			continue
		}
		for _, svc := range mcs.services {
			if ctx.Err() != nil {
				return
			}
			s := p.service(ctx, mcs, svc, t)
			if prev := t.cluster.Service(s.Name); prev != nil && prev.Namespace == s.Namespace {
				t.cluster.Errors = append(t.cluster.Errors, fmt.Errorf("release %s/%s is delivered twice: by %s "+
					"and by %s; keep one", s.Namespace, s.Name, prev.Via, s.Via))
			}
			t.cluster.Services = append(t.cluster.Services, s)
		}
	}
}

// service instantiates one service's values for t (layer 2), then renders its chart when it is a local KOF chart.
func (p *layer2) service(ctx context.Context, mcs multiClusterService, svc kcmv1.Service, t target) *Service {
	ns := svc.Namespace
	if ns == "" {
		ns = defaultServiceNamespace
	}
	s := &Service{Via: "MultiClusterService " + mcs.name, Name: svc.Name, Namespace: ns, Template: svc.Template}
	for _, d := range svc.DependsOn {
		dns := d.Namespace
		if dns == "" {
			dns = defaultServiceNamespace
		}
		s.DependsOn = append(s.DependsOn, dns+"/"+d.Name)
	}
	source, err := p.chartOf(s)
	if err != nil {
		s.Err = err
		return s
	}
	if s.Resources {
		p.resources(s, mcs, t, source)
		return s
	}
	read := readAnnotations(svc.Values)
	where := t.cluster.Namespace + "/" + t.cluster.Name
	if errs := checkAnnotations(where, read, t.annotations); len(errs) > 0 {
		s.Err = errors.Join(errs...)
		return s
	}
	var from []sveltos.ValuesFrom
	for _, v := range svc.ValuesFrom {
		from = append(from, sveltos.ValuesFrom{Kind: v.Kind, Name: v.Name})
	}
	res, err := sveltos.Instantiate(sveltos.Input{
		Profile: mcs.name, Service: svc.Name, ServiceNamespace: ns, Cluster: t.obj, Values: svc.Values,
		ValuesFrom: from, TemplateResourceRefs: mcs.refs, Objects: p.refObj, Mode: p.opts.Mode, Env: p.opts.Env,
	})
	if err != nil {
		s.Err = blameOperator(err, t.cluster)
		return s
	}
	s.Values = res.Values
	if !s.Local {
		return s
	}
	ch, err := p.mgmt.charts.get(s.Chart)
	if err != nil {
		s.Err = err
		return s
	}
	if errs := checkValuesAnnotations(where, s.Chart, ch.Schema, read, t.annotations); len(errs) > 0 {
		s.Err = errors.Join(errs...)
		return s
	}
	if res.ReleaseName != "" {
		s.Name = res.ReleaseName
	}
	if res.ReleaseNamespace != "" {
		s.Namespace = res.ReleaseNamespace
	}
	set, err := p.opts.Memo.render(ctx, ch, p.mgmt.charts.digest(s.Chart), s.Name, s.Namespace, res.Values)
	if err != nil {
		s.Err = fmt.Errorf("render chart %s with the instantiated values: %w", s.Chart, err)
		return s
	}
	s.Objects = set
	if p.opts.Validator != nil {
		s.Findings = p.opts.Validator.Set(set)
	}
	return s
}

// resources fills s.Objects with the objects Sveltos deploys from source (the local ConfigMap or Secret of a
// resources ServiceTemplate) for t, instantiated when it is a template, and validates them.
func (p *layer2) resources(s *Service, mcs multiClusterService, t target, source *unstructured.Unstructured) {
	data, err := contentData(source)
	if err != nil {
		s.Err = err
		return
	}
	_, tmpl := source.GetAnnotations()[sveltos.TemplateAnnotation]
	where := source.GetKind() + " " + source.GetNamespace() + "/" + source.GetName()
	objs, err := sveltos.InstantiateContent(sveltos.Profile{
		Name: mcs.name, Cluster: t.obj, TemplateResourceRefs: mcs.refs, Objects: p.refObj, Mode: p.opts.Mode,
		Env: p.opts.Env,
	}, sveltos.Content{Service: s.Name, Source: where, Data: data, Template: tmpl})
	if err != nil {
		s.Err = blameOperator(err, t.cluster)
		return
	}
	list := make([]manifest.Object, 0, len(objs))
	for _, o := range objs {
		list = append(list, manifest.Object{Unstructured: o, Source: "ServiceTemplate " + s.Template + " (" + where + ")"})
	}
	s.Objects = manifest.New(list...)
	if p.opts.Validator != nil {
		s.Findings = p.opts.Validator.Set(s.Objects)
	}
}

// contentData returns the data of a ConfigMap, or the base64-decoded data of a Secret, as text per key.
func contentData(o *unstructured.Unstructured) (map[string]string, error) {
	raw, _, _ := unstructured.NestedMap(o.Object, "data")
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		text, _ := v.(string)
		if o.GetKind() == "Secret" {
			b, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				return nil, fmt.Errorf("Secret %s/%s data.%s: not base64: %w", o.GetNamespace(), o.GetName(), k, err)
			}
			text = string(b)
		}
		out[k] = text
	}
	return out, nil
}

// chartOf fills s.Chart, Version, Repository and Local from the ServiceTemplate s.Template (KCM api/v1beta1
// ServiceTemplateSpec.Helm.ChartSpec), or, for a ServiceTemplate of plain resources (spec.resources with a local
// ConfigMap or Secret source), sets s.Resources and returns that source object. It returns an error naming the
// template when it is missing, has neither a chart nor a local source, or its source is not on the management
// cluster.
func (p *layer2) chartOf(s *Service) (*unstructured.Unstructured, error) {
	var st *unstructured.Unstructured
	for _, o := range p.stpls {
		if o.GetName() == s.Template {
			st = o
			break
		}
	}
	if st == nil {
		return nil, fmt.Errorf("ServiceTemplate %q not found on the management cluster; check the service's template", s.Template)
	}
	if ref, ok, _ := unstructured.NestedMap(st.Object, "spec", "resources", "localSourceRef"); ok {
		return p.localSource(s, st, ref)
	}
	spec, ok, _ := unstructured.NestedMap(st.Object, "spec", "helm", "chartSpec")
	if !ok {
		return nil, fmt.Errorf("ServiceTemplate %s/%s: neither spec.helm.chartSpec nor spec.resources.localSourceRef is "+
			"set; the fleet renderer reads those two only", st.GetNamespace(), st.GetName())
	}
	s.Chart, s.Version = str(spec, "chart"), str(spec, "version")
	repo := str(spec, "sourceRef", "name")
	s.Repository = repo
	for _, r := range p.repos {
		if r.GetName() == repo && r.GetNamespace() == st.GetNamespace() {
			s.Repository = str(r.Object, "spec", "url")
		}
	}
	s.Local = p.mgmt.charts.local(s.Chart)
	return nil, nil
}

// localSource finds the ConfigMap or Secret a resources ServiceTemplate st names (in st's namespace, as KCM reads
// it) among the management cluster's objects, and marks s as a resources service.
func (p *layer2) localSource(s *Service, st *unstructured.Unstructured, ref map[string]any) (*unstructured.Unstructured, error) {
	kind, name := str(ref, "kind"), str(ref, "name")
	if kind != "ConfigMap" && kind != "Secret" {
		return nil, fmt.Errorf("ServiceTemplate %s/%s: spec.resources.localSourceRef kind %q; the fleet renderer reads "+
			"ConfigMap and Secret sources only", st.GetNamespace(), st.GetName(), kind)
	}
	s.Resources, s.Local, s.Chart = true, true, ""
	for _, o := range p.refObj {
		if o.GetKind() == kind && o.GetAPIVersion() == "v1" && o.GetNamespace() == st.GetNamespace() && o.GetName() == name {
			return o, nil
		}
	}
	return nil, fmt.Errorf("ServiceTemplate %s/%s: spec.resources.localSourceRef %s %s/%s not found on the management "+
		"cluster; render or create it", st.GetNamespace(), st.GetName(), kind, st.GetNamespace(), name)
}

// blameOperator returns err, a service's layer-2 failure on cluster c, as a *BlockedError naming the cause when the
// object it misses is a ConfigMap or Secret and the KOF operator reports a problem for c (an OperatorError among
// c.Errors): the operator makes none of c's objects then, so the fix is the operator's problem, not the object.
// Otherwise err as is.
func blameOperator(err error, c *Cluster) error {
	var missing *sveltos.MissingObjectError
	if !errors.As(err, &missing) || (missing.Kind != "ConfigMap" && missing.Kind != "Secret") {
		return err
	}
	for _, e := range c.Errors {
		var op *OperatorError
		if errors.As(e, &op) {
			return &BlockedError{Err: err, Kind: missing.Kind, Namespace: missing.Namespace, Name: missing.Name,
				Reason: op.Reason}
		}
	}
	return err
}

// BlockedError is a service's layer-2 failure on a cluster for which the KOF operator reports a problem (Reason,
// an OperatorError of the cluster): the service needs the operator's Kind Namespace/Name, which the operator does
// not make while it reports the problem. Every such service of a cluster has the same cause, so Cluster.Problems
// names it once for all of them.
type BlockedError struct {
	// Err is the service's own failure (a *sveltos.MissingObjectError inside).
	Err error
	// Kind, Namespace and Name are the missing object's.
	Kind, Namespace, Name string
	// Reason is the operator's (e.g. RegionalMisconfigured, NoRegionalCluster).
	Reason string
}

// Error returns the service's failure followed by its cause.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("%v (%s)", e.Err, e.cause())
}

// Unwrap returns the service's own failure.
func (e *BlockedError) Unwrap() error { return e.Err }

// cause says why the object is missing and what to fix.
func (e *BlockedError) cause() string {
	return fmt.Sprintf("the kof-operator makes %s %s/%s and makes none of this cluster's objects while it reports %s: "+
		"fix that first", e.Kind, e.Namespace, e.Name, e.Reason)
}
