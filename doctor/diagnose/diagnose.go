package diagnose

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/sveltos"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/outputs"
)

// Defaults of the umbrella release (docs/contract.md, "Umbrella defaults").
const (
	defaultNamespace = fleet.DefaultNamespace
	defaultRelease   = fleet.DefaultReleaseName
)

// Input is what Diagnose compares: the live snapshot and the offline prediction for the same inputs.
type Input struct {
	// Live is what Read found.
	Live *Snapshot
	// Predicted is kof render's fleet for the live inputs (Predict); nil when the render failed as a whole.
	Predicted *fleet.Fleet
	// Prediction describes the render (and its failure).
	Prediction PredictionInfo
	// ChartsDir or Charts are the charts the prediction rendered (PredictOptions), for the chart version check.
	ChartsDir string
	Charts    fs.FS
}

// builder accumulates one diagnosis.
type builder struct {
	live *Snapshot
	pred *fleet.Fleet
	d    *Diagnosis
	cfg  config.Config
	// byKey indexes d.Clusters by `namespace/name`; views are the operator's view of each KOF ClusterDeployment.
	byKey map[string]*Cluster
	views map[string]discovery.Cluster
	// broken marks regional clusters whose data the operator cannot build.
	broken map[string]bool
	// x indexes live and pred.
	x *index
	// chartsDir or charts hold the charts the prediction rendered.
	chartsDir string
	charts    fs.FS
}

// Diagnose compares the live management cluster with the prediction and returns the diagnosis: every cluster with
// its role, regional binding and endpoints, the MultiClusterServices that select it (and the KOF ones that do not,
// with the failing selector terms), its services with their KCM and Sveltos state, the objects the operator made
// for it against the predicted ones, its events, and every finding. It is a pure function of in.
func Diagnose(in Input) *Diagnosis {
	b := &builder{live: in.Live, pred: in.Predicted, d: &Diagnosis{Prediction: in.Prediction},
		byKey: map[string]*Cluster{}, views: map[string]discovery.Cluster{}, broken: map[string]bool{},
		chartsDir: in.ChartsDir, charts: in.Charts, x: newIndex(in.Live, in.Predicted)}
	b.operatorConfig()
	b.clusters()
	b.bind()
	b.selections()
	b.operatorObjects()
	b.events()
	b.predictionProblems()
	b.fleetChecks()
	b.d.Storage = storage(b.live)
	b.d.Rules = ruleSets(b.live, b.cfg)
	b.operatorWarnings()
	b.certManagerGatewayAPI()
	for _, c := range b.d.Clusters {
		sortFindings(c.Findings)
	}
	sortFindings(b.d.Findings)
	return b.d
}

// fleetFinding adds a finding about the fleet as a whole.
func (b *builder) fleetFinding(f Finding) { b.d.Findings = append(b.d.Findings, f) }

// operatorConfig reads the operator's configuration from the live Deployment's environment, else from the predicted
// one, else KCM's defaults; a missing or invalid environment is a finding.
func (b *builder) operatorConfig() {
	env := b.live.OperatorEnv
	if env == nil {
		if b.live.readable(whatOperatorDeployments) {
			b.fleetFinding(newFinding(CodeOperatorMissing, "", "Deployment "+b.live.Namespace+"/"+kofv1.MothershipChart+"-operator",
				"", "no kof-operator Deployment (labels "+kofv1.ChartNameLabel+"="+kofv1.MothershipChart+", "+kofv1.ComponentLabel+"="+
					kofv1.OperatorComponent+") on the management cluster", "install the kof umbrella chart (kof-mothership "+
					"renders the Deployment), or check that its HelmRelease is Ready"))
		}
		env = b.predictedOperatorEnv()
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil && env != nil && b.live.OperatorEnv != nil {
		b.fleetFinding(newFinding(CodeOperatorConfigInvalid, "", "Deployment of the kof-operator", "spec.template.spec."+
			"containers[manager].env", "the kof-operator refuses its environment: "+err.Error(),
			"fix the kof-mothership values that set these variables (docs/contract.md, \"Operator environment\")"))
	}
	if cfg.KCMNamespace == "" {
		cfg.KCMNamespace = config.DefaultKCMNamespace
	}
	if cfg.RegionlessClusterName == "" {
		cfg.RegionlessClusterName = config.DefaultRegionlessClusterName
	}
	if cfg.ReleaseNamespace == "" {
		cfg.ReleaseNamespace = b.live.Namespace
	}
	b.cfg = cfg
}

// whatOperatorDeployments names the list of kof-operator Deployments in Snapshot.Unreadable.
const whatOperatorDeployments = "kof-operator Deployments"

// predictedOperatorEnv returns the environment of the operator container the prediction renders, nil without one.
func (b *builder) predictedOperatorEnv() map[string]string {
	if b.pred == nil {
		return nil
	}
	for _, c := range b.pred.Clusters {
		for _, s := range c.Services {
			if s.Objects == nil {
				continue
			}
			for _, o := range s.Objects.OfKind("Deployment") {
				if kofv1.IsOperatorDeployment(o.GetLabels()) {
					return unstructuredEnv(o)
				}
			}
		}
	}
	return nil
}

// unstructuredEnv returns the literal env of the operator container of a rendered Deployment.
func unstructuredEnv(dep *unstructured.Unstructured) map[string]string {
	env := map[string]string{}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		if cm["name"] != kofv1.OperatorContainer {
			continue
		}
		list, _, _ := unstructured.NestedSlice(cm, "env")
		for _, e := range list {
			kv, _ := e.(map[string]any)
			name, _ := kv["name"].(string)
			value, _ := kv["value"].(string)
			env[name] = value
		}
	}
	return env
}

// clusters lists the management cluster and every live ClusterDeployment, named as the prediction names them.
func (b *builder) clusters() {
	mgmt := &Cluster{Name: sveltos.ManagementClusterName, Namespace: sveltos.ManagementClusterNamespace,
		Role: fleet.RoleManagement}
	b.d.Clusters = append(b.d.Clusters, mgmt)
	for i := range b.live.Deployments {
		cd := &b.live.Deployments[i]
		role := discovery.Role(cd)
		if role == "" {
			role = fleet.RoleNone
		}
		b.d.Clusters = append(b.d.Clusters, &Cluster{Name: cd.Name, Namespace: cd.Namespace, Role: role})
	}
	count := map[string]int{}
	for _, c := range b.d.Clusters {
		count[c.Name]++
	}
	for _, c := range b.d.Clusters {
		c.Dir = c.Name
		if count[c.Name] > 1 {
			c.Dir = c.Namespace + "." + c.Name
		}
		c.Selections, c.Services, c.Objects, c.Events, c.Findings = []Selection{}, []Service{}, []OperatorObject{},
			[]Event{}, []Finding{}
		b.byKey[c.Key()] = c
	}
}

// deployment returns the live ClusterDeployment of c, nil for the management cluster.
func (b *builder) deployment(c *Cluster) *kcmv1.ClusterDeployment {
	return b.x.deployments[c.Key()]
}

// cdRef names a ClusterDeployment for findings.
func cdRef(c *Cluster) string { return kcmv1.ClusterDeploymentKind + " " + c.Key() }

// bind computes the operator's view of every KOF cluster, the regional data of every regional and the binding of
// every child, as the operator does (operator/discovery, operator/outputs.ChildRegional).
func (b *builder) bind() {
	var regionals []discovery.Cluster
	for _, c := range b.d.Clusters {
		cd := b.deployment(c)
		if cd == nil || (c.Role != fleet.RoleRegional && c.Role != fleet.RoleChild) {
			continue
		}
		view, err := discovery.FromClusterDeployment(cd, b.live.template(cd.Namespace, cd.Spec.Template))
		if err != nil {
			c.Findings = append(c.Findings, newFinding(CodeInvalidCluster, c.Dir, cdRef(c), "spec.config",
				"the operator cannot read the ClusterDeployment: "+err.Error(),
				"make spec.config a JSON object and spec.config.clusterAnnotations an object of strings"))
			continue
		}
		b.views[c.Key()] = view
		if c.Role == fleet.RoleRegional {
			regionals = append(regionals, view)
		}
	}
	if b.cfg.Regionless {
		b.mgmt().Binding = "regionless: stores the data of every child"
	}
	for _, r := range regionals {
		c := b.byKey[r.Key()]
		if b.cfg.Regionless {
			c.Binding = "regionless mode: regional clusters get no KOF storage"
			continue
		}
		if _, _, err := discovery.RegionalData(r); err != nil {
			b.broken[r.Key()] = true
			c.Findings = append(c.Findings, newFinding(CodeRegionalInvalid, c.Dir, cdRef(c), "metadata.annotations",
				"the operator cannot build the regional ConfigMap: "+err.Error(),
				"fix the annotation the message names (docs/annotations.md); its children get no endpoints until then"))
		}
	}
	for _, c := range b.d.Clusters {
		view, ok := b.views[c.Key()]
		if !ok || c.Role != fleet.RoleChild {
			continue
		}
		b.bindChild(c, view, regionals)
	}
}

// mgmt returns the management cluster.
func (b *builder) mgmt() *Cluster { return b.d.Clusters[0] }

// bindChild sets the regional of child c, or the finding that says why it has none.
func (b *builder) bindChild(c *Cluster, view discovery.Cluster, regionals []discovery.Cluster) {
	regs := make([]outputs.Regional, len(regionals))
	for i, r := range regionals {
		regs[i] = outputs.ForRegional(b.cfg, r, nil)
	}
	// The operator's own binding (outputs.ForChild); a misconfigured regional still binds (its finding is the
	// regional's), so only a child without a regional gets the no-regional finding.
	ch := outputs.ForChild(b.cfg, view, nil, regs, nil)
	for _, p := range ch.Problems {
		if p.Fatal && (p.Reason == kofv1.ReasonNoRegional || p.Reason == kofv1.ReasonOutsideWatchScope) {
			c.Findings = append(c.Findings, noRegional(c, view, regionals, p.Err))
			return
		}
	}
	ref := ch.Regional
	c.Regional = ref.Namespace + "/" + ref.Name
	switch _, explicit := discovery.ExplicitRegional(view); {
	case b.cfg.Regionless:
		c.Regional = b.mgmt().Key()
		c.Binding = "regionless: the management cluster"
	case explicit:
		c.Binding = "label " + kofv1.RegionalClusterNameLabel
	default:
		c.Binding = "same " + describeLocation(view)
	}
	if b.broken[c.Regional] {
		r := b.byKey[c.Regional]
		c.Findings = append(c.Findings, newFinding(CodeRegionalUnusable, c.Dir, cdRef(r), "metadata.annotations",
			fmt.Sprintf("its regional cluster %s has errors, so it gets no endpoints", c.Regional),
			"fix the regional's findings (kof doctor "+r.Dir+")"))
	}
}

// noRegional explains why child c binds to no regional cluster and how to bind it.
func noRegional(c *Cluster, view discovery.Cluster, regionals []discovery.Cluster, err error) Finding {
	if ref, explicit := discovery.ExplicitRegional(view); explicit {
		return newFinding(CodeNoRegional, c.Dir, cdRef(c), "metadata.labels["+kofv1.RegionalClusterNameLabel+"]",
			"no regional: "+strings.TrimPrefix(err.Error(), "no regional cluster: "),
			fmt.Sprintf("the labels name %s/%s; name an existing regional cluster (%s) in %s (and %s when it is in "+
				"another namespace), or remove the label to bind by cloud location", ref.Namespace, ref.Name,
				known(regionals), kofv1.RegionalClusterNameLabel, kofv1.RegionalClusterNamespaceLabel))
	}
	if view.Cloud == "" {
		return newFinding(CodeNoRegional, c.Dir, cdRef(c), "spec.template",
			"no regional: its cloud is unknown (the ClusterTemplate named by spec.template is missing or lists no "+
				"infrastructure-<cloud> provider in status.providers)",
			"set label "+kofv1.RegionalClusterNameLabel+" (and "+kofv1.RegionalClusterNamespaceLabel+
				" if the regional is in another namespace), or fix spec.template")
	}
	return newFinding(CodeNoRegional, c.Dir, cdRef(c), "metadata.labels",
		fmt.Sprintf("no regional: no regional cluster in the same %s", describeLocation(view)),
		fmt.Sprintf("set %s (and %s if the regional is in another namespace), or use the same %s as a regional (%s)",
			kofv1.RegionalClusterNameLabel, kofv1.RegionalClusterNamespaceLabel, locationKind(view.Cloud),
			regionalLocations(regionals)))
}

// known lists the regional clusters as `namespace/name`, or says there are none.
func known(regionals []discovery.Cluster) string {
	var out []string
	for _, r := range regionals {
		out = append(out, r.Key())
	}
	if len(out) == 0 {
		return "there is none"
	}
	return strings.Join(out, ", ")
}

// regionalLocations lists the regional clusters with their cloud and location, e.g. `regional-1: aws us-east-2`.
func regionalLocations(regionals []discovery.Cluster) string {
	var out []string
	for _, r := range regionals {
		out = append(out, r.Name+": "+r.Cloud+" "+locationValue(r.Location))
	}
	if len(out) == 0 {
		return "there is no regional cluster yet"
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// locationKind names the location field of a cloud (discovery.LocationOf).
func locationKind(cloud string) string {
	switch cloud {
	case discovery.CloudAWS:
		return "aws region"
	case discovery.CloudAzure:
		return "azure location"
	case discovery.CloudOpenStack:
		return "openstack region"
	case discovery.CloudVSphere:
		return "vsphere datacenter"
	}
	return cloud + " location"
}

// locationValue returns the one set field of l, "(none)" when none is.
func locationValue(l discovery.Location) string {
	for _, v := range []string{l.AWSRegion, l.AzureLocation, l.OpenStackRegion, l.VSphereDatacenter} {
		if v != "" {
			return v
		}
	}
	return "(none)"
}

// describeLocation says where view runs, e.g. `aws region us-east-2`.
func describeLocation(view discovery.Cluster) string {
	return locationKind(view.Cloud) + " " + locationValue(view.Location)
}
