package sveltos

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// pass1Requestor is the requestor name Sveltos gives the template of every chart entry field in pass 1.
// Source: addon-controller controllers/template_instantiation.go (instantiateGenericField).
const pass1Requestor = "chart-name"

// engine holds the instantiation of one profile for one cluster: the pinned functions, the cluster objects
// and the .MgmtResources shared by all its services, and the service being instantiated.
type engine struct {
	p         Profile
	svc       Service
	mode      Mode
	base      template.FuncMap
	funcs     template.FuncMap
	ix        index
	cluster   map[string]any
	infra     map[string]any
	kcp       map[string]any
	resources map[string]map[string]any
	// pass1 is shared by every chart entry field of every service in pass 1; pass2 by one service's values in
	// pass 2 and its templated valuesFrom documents (Sveltos fetches the cluster objects once for each).
	pass1, pass2 Data
}

// Instantiate evaluates in.Values for in.Cluster the way Sveltos' addon-controller does for one helm chart
// entry: templateResourceRefs resolved from in.Objects into .MgmtResources; in DoublePass mode (the default)
// every chart entry field YAML-marshalled, executed and unmarshalled, then values executed again; in
// SinglePass mode values executed once; the text parsed as a YAML mapping; then valuesFrom documents merged
// over it (maps merged, lists replaced). Templates use text/template with missingkey=error, libsveltos' function
// map with pinned env, DNS, time and randomness (in.Env), and Sveltos' resource functions.
// It returns the instantiated text and values, or an *Error naming the MCS, service, cluster, stage and line.
// Source: addon-controller v1.9.0 controllers/template_instantiation.go, handlers_helm.go
// (getInstantiatedChart, getHelmChartInstantiatedValues), templateresourcedef_utils.go.
func Instantiate(in Input) (Result, error) {
	results, err := InstantiateProfile(Profile{
		Name: in.Profile, Cluster: in.Cluster, TemplateResourceRefs: in.TemplateResourceRefs,
		Objects: in.Objects, Mode: in.Mode, Env: in.Env,
		Services: []Service{{Name: in.Service, Namespace: in.ServiceNamespace, Values: in.Values, ValuesFrom: in.ValuesFrom}},
	})
	if err != nil {
		return Result{}, err
	}
	return results[0], nil
}

// InstantiateProfile instantiates every service of p, in order, for p.Cluster as Instantiate does for one,
// sharing what Sveltos shares between the helm charts of one profile: the resolved .MgmtResources (a
// resource function that mutates an object in one service is seen by the next) and the pass-1 cluster
// objects. It returns one Result per service; on the first failure it returns the results so far and an
// *Error (failures before any service runs, such as a missing required templateResourceRef, name the first
// service). Source: addon-controller v1.9.0 controllers/handlers_helm.go (walkChartsAndDeploy and the
// deploymentContext shared by its charts).
func InstantiateProfile(p Profile) ([]Result, error) {
	e, err := newEngine(p)
	if err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(p.Services))
	for _, svc := range p.Services {
		e.svc = svc
		res, err := e.service()
		if err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

// service instantiates e.svc.
func (e *engine) service() (Result, error) {
	e.pass2 = e.data()
	entry, err := e.passOne()
	if err != nil {
		return Result{}, err
	}
	text, err := e.execute(entry.Values, e.templateName(e.svc.Name), e.pass2)
	if err != nil {
		line := errorLine(err, templateLine)
		stage := "values"
		if e.mode == DoublePass {
			stage = "pass 2 of 2 (values)"
		}
		return Result{}, e.fail(stage, line, lineOf(entry.Values, line), "", err)
	}
	values, err := parseValues(text)
	if err != nil {
		line := errorLine(err, yamlLine)
		return Result{}, e.fail("parse instantiated values", line, lineOf(text, line),
			"the instantiated values must be a YAML mapping", err)
	}
	values, err = e.mergeValuesFrom(entry.ValuesFrom, values)
	if err != nil {
		return Result{}, err
	}
	return Result{
		ReleaseName: entry.ReleaseName, ReleaseNamespace: entry.ReleaseNamespace,
		Text: text, Values: values, Data: e.pass2,
	}, nil
}

// newEngine validates p, normalises the cluster, resolves the referenced objects and builds the functions.
func newEngine(p Profile) (*engine, error) {
	e := &engine{p: p, ix: newIndex(p.Objects)}
	if len(p.Services) > 0 {
		e.svc = p.Services[0]
	}
	mode, err := ParseMode(string(p.Mode))
	if err != nil {
		return nil, e.fail("input", 0, "", "", err)
	}
	e.mode = mode
	if p.Cluster == nil {
		return nil, e.fail("input", 0, "", "", errors.New("cluster: required; pass the CAPI Cluster or SveltosCluster"))
	}
	if e.cluster, err = normalize(p.Cluster.Object); err != nil {
		return nil, e.fail("input", 0, "", "", fmt.Errorf("cluster: %w", err))
	}
	if e.infra, e.kcp, err = e.clusterRefs(); err != nil {
		return nil, e.fail("input", 0, "", "", err)
	}
	e.base = baseFuncs(p.Env, rand.New(rand.NewSource(p.Env.Seed))) //nolint:gosec // determinism is the point
	cc := clusterContext{Cluster: e.cluster, ClusterNamespace: p.Cluster.GetNamespace(), ClusterName: p.Cluster.GetName()}
	if e.resources, err = resolveRefs(p.TemplateResourceRefs, e.ix, cc, e.base); err != nil {
		return nil, e.fail("resolve templateResourceRefs", 0, "", "", err)
	}
	e.funcs = withResources(e.base, e.resources)
	e.pass1 = e.data()
	return e, nil
}

// withResources returns base plus the resource functions bound to res.
func withResources(base template.FuncMap, res map[string]map[string]any) template.FuncMap {
	funcs := maps.Clone(base)
	maps.Copy(funcs, resourceFuncs(res))
	return funcs
}

// clusterRefs finds the infrastructure and control-plane objects a CAPI Cluster references in the objects
// given. Sveltos fails when a referenced object is missing; offline, the objects are rarely available, so a
// missing one leaves the field nil. SveltosClusters reference none.
func (e *engine) clusterRefs() (infra, kcp map[string]any, err error) {
	gv, _ := schema.ParseGroupVersion(e.p.Cluster.GetAPIVersion())
	if gv.Group != "cluster.x-k8s.io" || e.p.Cluster.GetKind() != "Cluster" {
		return nil, nil, nil
	}
	if infra, err = e.referenced("infrastructureRef"); err != nil {
		return nil, nil, err
	}
	kcp, err = e.referenced("controlPlaneRef")
	return infra, kcp, err
}

// referenced resolves spec.<field> of the cluster (v1beta2 apiGroup or v1beta1 apiVersion form).
func (e *engine) referenced(field string) (map[string]any, error) {
	ref, found, _ := unstructured.NestedStringMap(e.cluster, "spec", field)
	if !found {
		return nil, nil
	}
	group := ref["apiGroup"]
	if group == "" {
		gv, _ := schema.ParseGroupVersion(ref["apiVersion"])
		group = gv.Group
	}
	ns := ref["namespace"]
	if ns == "" {
		ns = e.p.Cluster.GetNamespace()
	}
	if group == "" || ref["kind"] == "" {
		return nil, nil
	}
	obj, ok := e.ix.lookup(group, ref["kind"], ns, ref["name"])
	if !ok {
		return nil, nil
	}
	content, err := normalize(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("cluster spec.%s: %w", field, err)
	}
	return content, nil
}

// data returns what a pass sees: fresh copies of the cluster objects and the .MgmtResources shared by all
// passes.
func (e *engine) data() Data {
	cp := func(m map[string]any) map[string]any {
		if m == nil {
			return nil
		}
		return runtime.DeepCopyJSON(m)
	}
	return Data{Cluster: cp(e.cluster), InfrastructureProvider: cp(e.infra), KubeadmControlPlane: cp(e.kcp),
		MgmtResources: e.resources}
}

// templateName is Sveltos' template name: "<cluster namespace>-<cluster name>-<requestor>".
func (e *engine) templateName(requestor string) string {
	return fmt.Sprintf("%s-%s-%s", e.p.Cluster.GetNamespace(), e.p.Cluster.GetName(), requestor)
}

// execute runs text as a text/template with missingkey=error against data.
func (e *engine) execute(text, name string, data Data) (string, error) {
	return executeWith(text, name, e.funcs, data)
}

// executeWith parses and executes text with funcs against data. A text without "{{" holds no action, so its
// output is the text itself and the template is not built.
func executeWith(text, name string, funcs template.FuncMap, data Data) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	tmpl, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// fail builds an *Error for this instantiation.
func (e *engine) fail(stage string, line int, source, hint string, err error) *Error {
	cluster := ""
	if e.p.Cluster != nil {
		cluster = e.p.Cluster.GetNamespace() + "/" + e.p.Cluster.GetName()
	}
	return &Error{Profile: e.p.Name, Service: e.svc.Name, Cluster: cluster, Stage: stage,
		Line: line, Source: source, Hint: hint, Err: err}
}

// parseValues parses instantiated values as Sveltos does (sigs.k8s.io/yaml, so numbers become float64);
// empty text is an empty map.
func parseValues(text string) (map[string]any, error) {
	values := map[string]any{}
	if text == "" {
		return values, nil
	}
	if err := yaml.Unmarshal([]byte(text), &values); err != nil {
		return nil, err
	}
	if values == nil {
		values = map[string]any{}
	}
	return values, nil
}

// chartEntry is the part of a Sveltos helm chart entry that a KCM service fills.
type chartEntry struct {
	ReleaseName      string
	ReleaseNamespace string
	Values           string
	ValuesFrom       []ValuesFrom
}

// passOne instantiates each chart entry field through YAML as Sveltos' instantiateStructFields does. In
// SinglePass mode only the chart identity fields (release name and namespace) are, as in the upstream fix
// (projectsveltos/addon-controller pull request 1956): values is executed once, later, and valuesFrom names
// only through their own name templates.
func (e *engine) passOne() (chartEntry, error) {
	entry := chartEntry{ReleaseName: e.svc.Name, ReleaseNamespace: e.svc.Namespace,
		Values: e.svc.Values, ValuesFrom: e.svc.ValuesFrom}
	if entry.ReleaseNamespace == "" {
		entry.ReleaseNamespace = e.svc.Name // KCM: adapters/sveltos serviceset_controller.go
	}
	var err error
	if entry.ReleaseName, err = instantiateField(e, "releaseName", entry.ReleaseName); err != nil {
		return entry, err
	}
	if entry.ReleaseNamespace, err = instantiateField(e, "releaseNamespace", entry.ReleaseNamespace); err != nil {
		return entry, err
	}
	if e.mode == SinglePass {
		return entry, nil
	}
	if entry.Values, err = instantiateField(e, "values", entry.Values); err != nil {
		return entry, e.diagnosePassOne(err)
	}
	if entry.ValuesFrom, err = instantiateField(e, "valuesFrom", entry.ValuesFrom); err != nil {
		return entry, err
	}
	return entry, nil
}

// instantiateField marshals v to YAML, executes the YAML text and unmarshals the result into a new T.
func instantiateField[T any](e *engine, field string, v T) (T, error) {
	var out T
	raw, err := yaml.Marshal(v)
	if err != nil {
		return out, e.fail(passOneStage(e.mode, field), 0, "", "", fmt.Errorf("marshal field: %w", err))
	}
	text, err := e.execute(string(raw), e.templateName(pass1Requestor), e.pass1)
	if err != nil {
		line := errorLine(err, templateLine)
		return out, e.fail(passOneStage(e.mode, field), line, lineOf(string(raw), line), "", err)
	}
	if err := yaml.Unmarshal([]byte(text), &out); err != nil {
		line := errorLine(err, yamlLine)
		return out, e.fail(passOneStage(e.mode, field)+" output", line, lineOf(text, line), "",
			fmt.Errorf("unmarshal instantiated field: %w", err))
	}
	return out, nil
}

// passOneStage names the first pass over a field.
func passOneStage(mode Mode, field string) string {
	if mode == DoublePass {
		return "pass 1 of 2 (" + field + ")"
	}
	return "chart entry field " + field
}

// diagnosePassOne explains a pass-1 failure of values. If the text also fails when executed once (on a copy
// of the resources), that error is reported, with lines of the text as written. Otherwise the failure is
// caused by the double pass itself: the pass-1 error is returned with a hint naming the first lint finding.
func (e *engine) diagnosePassOne(pass1 error) error {
	var p1 *Error
	if !errors.As(pass1, &p1) {
		return pass1
	}
	res := make(map[string]map[string]any, len(e.resources))
	for k, v := range e.resources {
		res[k] = runtime.DeepCopyJSON(v)
	}
	d := e.data()
	d.MgmtResources = res
	if _, err := executeWith(e.svc.Values, e.templateName(e.svc.Name), withResources(e.base, res), d); err != nil {
		line := errorLine(err, templateLine)
		return e.fail("values (fails in both modes)", line, lineOf(e.svc.Values, line), "", err)
	}
	if !strings.HasSuffix(p1.Stage, " output") {
		raw, _ := yaml.Marshal(e.svc.Values)
		p1.Line, p1.Source = 0, ""
		if line := errorLine(p1.Err, templateLine); strings.HasPrefix(string(raw), "|") && line > 1 {
			// A literal block scalar starts with its header line: line n of the YAML is line n-1 of the values.
			p1.Line = line - 1
			p1.Source = lineOf(e.svc.Values, p1.Line)
		}
	}
	p1.Hint = "the values text works when executed once but not under Sveltos' double pass (v1.0.1-v1.15)"
	if findings := Lint(e.svc.Values); len(findings) > 0 {
		p1.Hint += "; lint: " + findings[0].String()
	}
	return p1
}
