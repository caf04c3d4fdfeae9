package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/chartlib/validate"
)

// Defaults of Options.
const (
	// DefaultReleaseName is the umbrella's release name.
	DefaultReleaseName = "kof"
	// DefaultNamespace is the umbrella's release namespace (docs/contract.md, "Umbrella defaults").
	DefaultNamespace = "kof"
	// UmbrellaChart is the directory name of the umbrella chart under Options.ChartsDir.
	UmbrellaChart = "kof"
)

// Roles shown for a cluster in the summary.
const (
	RoleManagement = "management"
	RoleRegional   = "regional"
	RoleChild      = "child"
	// RoleNone marks a ClusterDeployment without a KOF role.
	RoleNone = "-"
)

// Options describes one fleet render. ChartsDir or Charts is required; everything else is optional.
type Options struct {
	// ChartsDir holds the KOF charts: `<ChartsDir>/kof` (the umbrella) and `<ChartsDir>/<component>`.
	ChartsDir string
	// Charts holds the KOF charts as folders `kof/`, `<component>/` of a file system (such as the embedded
	// kof.dev/kof/charts.FS()); used when ChartsDir is empty.
	Charts fs.FS
	// ValuesFiles are the user's umbrella values files, applied in order as `helm -f`.
	ValuesFiles []string
	// Values are applied after ValuesFiles (deep merge).
	Values map[string]any
	// ReleaseName and Namespace of the umbrella release; defaults DefaultReleaseName and DefaultNamespace.
	ReleaseName, Namespace string
	// NamespaceObject is the umbrella's namespace as it exists on the management cluster (what `lookup` sees, e.g.
	// its `istio-injection` label); nil when it does not exist yet.
	NamespaceObject *unstructured.Unstructured
	// Clusters are the management cluster's inputs: ClusterDeployments, ClusterTemplates and any other objects the
	// operator or layer 2 read (rule patch ConfigMaps, valuesFrom sources).
	Clusters []*unstructured.Unstructured
	// Layer1, when set, replaces the umbrella render (step 1): the umbrella's HelmRepositories, HelmCharts and
	// HelmReleases as read from a live management cluster. ValuesFiles and Values are then only shown as the
	// umbrella's values; the component releases render with the live HelmReleases' spec.values.
	Layer1 []*unstructured.Unstructured
	// ManagementObjects, when set, replaces the computed operator outputs (step 3): objects read from a live
	// management cluster (its operator-made ConfigMaps and Secrets).
	ManagementObjects []*unstructured.Unstructured
	// SveltosClusters makes every ClusterDeployment a SveltosCluster of its name and namespace for Sveltos (its
	// .Cluster and the objects templateResourceRefs see), whatever its ClusterTemplate: clusters registered with
	// Sveltos directly, as KCM does for adopted clusters. False keeps the rule of the template (CAPI Cluster unless
	// adopted).
	SveltosClusters bool
	// Mode is the layer-2 evaluation mode; sveltos.DoublePass when empty.
	Mode sveltos.Mode
	// Env pins what layer-2 templates could read from the process, the clock or randomness.
	Env sveltos.Environment
	// Validator checks every rendered object; nil skips validation.
	Validator *validate.Validator
	// Workers bounds the clusters rendered at once; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Memo, when set, keeps the layer-2 chart renders for other renders that share it (RenderMemo); nil renders
	// every service.
	Memo *RenderMemo
}

// Fleet is the outcome of Render.
type Fleet struct {
	// Umbrella holds the umbrella's objects (layer 1: Flux HelmRepositories, HelmCharts, HelmReleases).
	Umbrella *manifest.Set
	// Releases are the umbrella's HelmReleases, in the umbrella's order.
	Releases []Release
	// Operator are the objects the KOF operator writes (computed offline, or Options.ManagementObjects).
	Operator []*unstructured.Unstructured
	// Clusters are the management cluster first, then every ClusterDeployment by namespace and name.
	Clusters []*Cluster
	// inputs are the given management-cluster objects and charts the loaded charts, for Check.
	inputs []*unstructured.Unstructured
	charts *chartCache
	// Lint are the layer-2 hazards of every MultiClusterService service's values text (sveltos.Lint), once per
	// service whatever the number of clusters it targets. They are warnings: no cluster fails for them.
	Lint []LintFinding
}

// LintFinding is one hazard of one MultiClusterService service's values text.
type LintFinding struct {
	// MCS and Service name the MultiClusterService and the service (release) name.
	MCS, Service string
	sveltos.Finding
}

// String formats the finding as `MultiClusterService <mcs> service <service>: line N: rule: message`.
func (l LintFinding) String() string {
	return "MultiClusterService " + l.MCS + " service " + l.Service + ": " + l.Finding.String()
}

// Release is one HelmRelease of the umbrella, rendered when its chart is a local KOF chart.
type Release struct {
	// Name is the Helm release name, Namespace the target namespace.
	Name, Namespace string
	// Chart and Version name the chart of the release's HelmChart; Repository is its HelmRepository URL.
	Chart, Version, Repository string
	// DependsOn are the `namespace/name` of the HelmReleases its spec.dependsOn names (and, for a release
	// rendered by another release, that release).
	DependsOn []string
	// Parent is the `namespace/name` of the HelmRelease whose chart renders this one (kof-operators' operators),
	// "" for the umbrella's own releases.
	Parent string
	// Values are the release's spec.values.
	Values map[string]any
	// Local is true when Chart is a KOF chart rendered from ChartsDir; Objects are then its objects.
	Local   bool
	Objects *manifest.Set
	// hr is the HelmRelease's `namespace/name`.
	hr string
}

// Cluster is what one cluster receives.
type Cluster struct {
	// Name and Namespace identify the ClusterDeployment, or mgmt/mgmt for the management cluster.
	Name, Namespace string
	// Dir is the cluster's directory name under the output directory (Name, or `<namespace>.<name>` when two
	// namespaces hold clusters of one name).
	Dir string
	// Role is RoleManagement, RoleRegional, RoleChild or RoleNone.
	Role string
	// Services are the services the cluster receives, in delivery order.
	Services []*Service
	// Errors are failures that concern the cluster as a whole (its ClusterDeployment, its regional binding).
	Errors []error
	// Findings are the violations of the generic checks (Fleet.Check) on the cluster.
	Findings []Finding
}

// Service is one Helm release a cluster receives.
type Service struct {
	// Via says what delivers it: `HelmRelease <ns>/<name>`, `MultiClusterService <name>` or `helm install`.
	Via string
	// Name is the release name, Namespace its namespace, Template the KCM ServiceTemplate ("" for Flux).
	Name, Namespace, Template string
	// Chart, Version and Repository identify the chart.
	Chart, Version, Repository string
	// DependsOn are the `namespace/name` of the releases this one waits for (MCS service or HelmRelease dependsOn).
	DependsOn []string
	// Local is true when Chart is a KOF chart rendered from ChartsDir, or when Resources; Objects are then its objects.
	Local   bool
	Objects *manifest.Set
	// Resources is true for a service whose ServiceTemplate deploys plain resources (spec.resources): Sveltos applies
	// the objects of a local ConfigMap or Secret, instantiated when it is a template; there is no Helm release and
	// no values.
	Resources bool
	// Values are the final values: layer-2 instantiated text parsed, valuesFrom merged over it.
	Values map[string]any
	// Findings are the validation findings of Objects.
	Findings []validate.Finding
	// Err is the failure to instantiate or render this service, nil on success.
	Err error
	// hr is the `namespace/name` of the HelmRelease delivering the service ("" for others), which DependsOn of
	// other HelmRelease services names.
	hr string
}

// Failed reports whether the cluster has any error: its own, a service failure or a validation finding.
func (c *Cluster) Failed() bool { return c.ErrorCount() > 0 }

// ErrorCount returns the number of the cluster's errors, service failures, validation findings and check findings
// as Problems prints them (the services blocked by one operator problem count once).
func (c *Cluster) ErrorCount() int { return len(c.Problems()) }

// ObjectCount returns the number of objects rendered for the cluster.
func (c *Cluster) ObjectCount() int {
	n := 0
	for _, s := range c.Services {
		if s.Objects != nil {
			n += s.Objects.Len()
		}
	}
	return n
}

// Service returns the cluster's service of the given release name, nil when absent.
func (c *Cluster) Service(name string) *Service {
	for _, s := range c.Services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Problems returns every error of the cluster as text, one per line: its own errors, service failures, validation
// findings and the findings of the generic checks (each naming its check, object and fix). The services that fail
// because the operator reports a problem for the cluster (a *BlockedError: the object they need is one the operator
// does not make meanwhile) share one line when there are several, `services a, b (2 of 8): need ConfigMap ns/name,
// which the kof-operator does not make while it reports <reason> (above): fix that first`, in the place of the
// first of them; one alone keeps its own full failure.
func (c *Cluster) Problems() []string {
	var out []string
	for _, err := range c.Errors {
		out = append(out, err.Error())
	}
	type group struct {
		at    int
		names []string
		err   *BlockedError
	}
	var groups []*group
	for _, s := range c.Services {
		var b *BlockedError
		if s.Err != nil && errors.As(s.Err, &b) {
			i := slices.IndexFunc(groups, func(g *group) bool {
				return g.err.Kind == b.Kind && g.err.Namespace == b.Namespace && g.err.Name == b.Name &&
					g.err.Reason == b.Reason
			})
			if i < 0 {
				groups = append(groups, &group{at: len(out), err: b})
				out = append(out, "")
				i = len(groups) - 1
			}
			groups[i].names = append(groups[i].names, s.Name)
		} else if s.Err != nil {
			out = append(out, fmt.Sprintf("service %s: %v", s.Name, s.Err))
		}
		for _, f := range s.Findings {
			out = append(out, fmt.Sprintf("service %s: %s", s.Name, f))
		}
	}
	for _, g := range groups {
		if len(g.names) == 1 {
			out[g.at] = fmt.Sprintf("service %s: %v", g.names[0], g.err)
			continue
		}
		out[g.at] = fmt.Sprintf("services %s (%d of %d): need %s %s/%s, which the kof-operator does not make "+
			"while it reports %s (above): fix that first", strings.Join(g.names, ", "), len(g.names),
			len(c.Services), g.err.Kind, g.err.Namespace, g.err.Name, g.err.Reason)
	}
	for _, f := range c.Findings {
		out = append(out, "check "+f.String())
	}
	return out
}

// Cluster returns the cluster of the given name (any namespace; mgmt for the management cluster), nil when absent.
func (f *Fleet) Cluster(name string) *Cluster {
	for _, c := range f.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Failed reports whether any cluster failed.
func (f *Fleet) Failed() bool {
	for _, c := range f.Clusters {
		if c.Failed() {
			return true
		}
	}
	return false
}

// Render runs the fleet pipeline (see the package documentation) and returns what every cluster receives.
// It returns an error, and no Fleet, when the umbrella or a management-cluster chart fails to render, the inputs
// cannot be read, or the release namespace is no DNS-1123 label (Kubernetes' rule for namespace names, which every
// service URL the charts build from it must follow); failures that concern one cluster are recorded on that Cluster
// instead.
func Render(ctx context.Context, opts Options) (*Fleet, error) {
	if opts.ChartsDir == "" && opts.Charts == nil {
		return nil, errors.New("fleet: Options.ChartsDir or Options.Charts is required; set one to the KOF charts")
	}
	if opts.ReleaseName == "" {
		opts.ReleaseName = DefaultReleaseName
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if errs := validation.IsDNS1123Label(opts.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("release namespace %q is not a valid namespace name: %s; use the namespace the umbrella "+
			"is installed in (default %s)", opts.Namespace, strings.Join(errs, "; "), DefaultNamespace)
	}
	inputs, err := readInputs(opts.Clusters, opts.SveltosClusters)
	if err != nil {
		return nil, err
	}
	mgmt, err := renderManagement(ctx, opts, inputs)
	if err != nil {
		return nil, err
	}
	ops := opts.ManagementObjects
	var bindErrs map[string][]error
	if ops == nil {
		ops, bindErrs, err = operatorOutputs(mgmt, inputs)
		if err != nil {
			return nil, err
		}
	}
	plan, err := newLayer2(ctx, opts, mgmt, inputs, ops)
	if err != nil {
		return nil, err
	}
	f := &Fleet{Umbrella: mgmt.umbrella, Releases: mgmt.releases, Operator: ops, Lint: plan.lint(),
		inputs: inputs.objects, charts: mgmt.charts}
	mc := plan.managementCluster(mgmt)
	f.Clusters = append(f.Clusters, mc)
	for _, cd := range inputs.deployments {
		c := &Cluster{Name: cd.name, Namespace: cd.namespace, Role: cd.role, Errors: bindErrs[cd.key()]}
		delete(bindErrs, cd.key())
		c.Errors = append(c.Errors, cd.errs...)
		f.Clusters = append(f.Clusters, c)
	}
	rest := make([]string, 0, len(bindErrs)) // the regionless management cluster's own
	for key := range bindErrs {
		rest = append(rest, key)
	}
	sort.Strings(rest)
	for _, key := range rest {
		mc.Errors = append(mc.Errors, bindErrs[key]...)
	}
	setDirs(f.Clusters)
	if err := plan.run(ctx, f.Clusters, inputs, workers(opts.Workers)); err != nil {
		return nil, err
	}
	f.Check()
	return f, nil
}

// workers returns n, or GOMAXPROCS when n is not positive.
func workers(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// setDirs names each cluster's output directory: its name, or `<namespace>.<name>` when the name is not unique.
func setDirs(clusters []*Cluster) {
	count := map[string]int{}
	for _, c := range clusters {
		count[c.Name]++
	}
	for _, c := range clusters {
		c.Dir = c.Name
		if count[c.Name] > 1 {
			c.Dir = c.Namespace + "." + c.Name
		}
		c.Dir = filepath.Base(c.Dir)
	}
}
