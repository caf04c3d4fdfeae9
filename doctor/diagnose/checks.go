package diagnose

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"helm.sh/helm/v3/pkg/chart"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/operator/discovery"
)

// predictionProblems reports what kof render itself finds wrong for each cluster with the live inputs: the
// cluster's own errors and every service's render failure and validation finding. Errors that restate a finding
// the diagnosis already made (a child without a regional) are left out.
func (b *builder) predictionProblems() {
	if b.pred == nil {
		b.fleetFinding(newFinding(CodePredictionFailed, "", "", "", "kof render fails with the live inputs, so "+
			"nothing was compared with a prediction: "+b.d.Prediction.Error,
			"run kof render with the same values and clusters to see the failure; fix the values or the charts"))
		return
	}
	for _, c := range b.d.Clusters {
		pc := b.predictedCluster(c)
		if pc == nil {
			continue
		}
		unbound := hasCode(c.Findings, CodeNoRegional, CodeRegionalUnusable, CodeInvalidCluster)
		for _, err := range pc.Errors {
			if unbound && (discovery.IsNoRegional(err) || strings.Contains(err.Error(), "spec.config")) {
				continue
			}
			c.Findings = append(c.Findings, newFinding(CodePredictionFailed, c.Dir, cdRefOrMgmt(c), "",
				"kof render: "+err.Error(), "fix the input the message names"))
		}
		for _, s := range pc.Services {
			if s.Err != nil && !unbound {
				c.Findings = append(c.Findings, newFinding(CodePredictionFailed, c.Dir, s.Via, "",
					fmt.Sprintf("kof render: service %s: %v", s.Name, s.Err), "fix the input the message names"))
			}
			for _, f := range s.Findings {
				c.Findings = append(c.Findings, newFinding(CodePredictionFailed, c.Dir, s.Via, "",
					fmt.Sprintf("kof render: service %s renders an invalid object: %s", s.Name, f),
					"fix the values or annotations that produce the object"))
			}
		}
	}
	for _, l := range b.pred.Lint {
		b.fleetFinding(newFinding(CodeLayerTwoHazard, "", "MultiClusterService "+l.MCS,
			"spec.serviceSpec.services["+l.Service+"].values", l.Finding.String(),
			"keep layer-2 template text in the chart's files/ (docs/sveltos.md)"))
	}
}

// cdRefOrMgmt names the ClusterDeployment of c, or the management cluster.
func cdRefOrMgmt(c *Cluster) string {
	if c.Role == fleet.RoleManagement {
		return "management cluster"
	}
	return cdRef(c)
}

// hasCode reports whether fs holds a finding of one of codes.
func hasCode(fs []Finding, codes ...Code) bool {
	for _, f := range fs {
		for _, c := range codes {
			if f.Code == c {
				return true
			}
		}
	}
	return false
}

// fleetChecks reports what concerns the fleet as a whole: the MultiClusterServices against their prediction and
// their conditions, the KOF charts' versions, whether KCM and Sveltos report anything, and what could not be read.
func (b *builder) fleetChecks() {
	b.compareMCSs()
	b.serviceTemplates()
	for _, mcs := range b.live.MCSs {
		for _, cond := range mcs.Status.Conditions {
			if cond.Status == metav1.ConditionFalse {
				b.fleetFinding(newFinding(CodeMCSConditionFalse, "", "MultiClusterService "+mcs.Name,
					"status.conditions["+cond.Type+"]", fmt.Sprintf("%s is False (%s): %s", cond.Type, cond.Reason,
						cond.Message), "fix what the message names (a missing ServiceTemplate, a dependency cycle...)"))
			}
		}
	}
	b.chartVersions()
	if !b.statusReported() {
		b.fleetFinding(newFinding(CodeStatusNotReported, "", "MultiClusterServices", "status",
			"KCM and Sveltos report no service state (no MultiClusterService status, ServiceSet or ClusterSummary): "+
				"the services' delivery cannot be checked",
			"check that KCM's controller manager and Sveltos' addon-controller run on the management cluster"))
	}
	for _, u := range b.live.Unreadable {
		b.fleetFinding(newFinding(CodeUnreadable, "", u.What, "", "cannot read "+u.What+": "+u.Reason,
			"grant the caller get and list on them, or install the API that serves them; the diagnosis leaves them out"))
	}
}

// partOfLabel and partOfKOF mark the objects of KOF's charts (kof-mothership renders every ServiceTemplate with
// them).
const (
	partOfLabel = "app.kubernetes.io/part-of"
	partOfKOF   = "kof"
)

// serviceTemplates reports every ServiceTemplate KCM judged invalid for its current generation that is KOF's
// (label app.kubernetes.io/part-of: kof) or that a service of a live MultiClusterService names (the template lives
// in KCM's system namespace). Source: KCM v1.10.0 ServiceTemplateReconciler, which writes status.valid and
// status.validationError (a chart that cannot be fetched or validated, a missing source).
func (b *builder) serviceTemplates() {
	users := map[string][]string{}
	for _, mcs := range b.live.MCSs {
		for _, svc := range mcs.Spec.ServiceSpec.Services {
			if !slices.Contains(users[svc.Template], mcs.Name) {
				users[svc.Template] = append(users[svc.Template], mcs.Name)
			}
		}
	}
	for _, st := range b.live.ServiceTemplates {
		s := st.Status
		if s.Valid || s.ValidationError == "" || s.ObservedGeneration != st.Generation {
			continue // valid, or not judged yet for this generation
		}
		var used []string
		if st.Namespace == b.cfg.KCMNamespace {
			used = users[st.Name]
		}
		if st.Labels[partOfLabel] != partOfKOF && len(used) == 0 {
			continue
		}
		msg := "KCM reports the ServiceTemplate invalid: " + s.ValidationError
		if len(used) > 0 {
			msg += "; used by MultiClusterService " + strings.Join(used, ", ")
		}
		b.fleetFinding(newFinding(CodeServiceTemplateInvalid, "", "ServiceTemplate "+st.Namespace+"/"+st.Name,
			"status.validationError", msg, "make its source serve the chart and version of spec.helm.chartSpec "+
				"(or the object spec.resources names), or fix the template; KCM judges it again when it changes"))
	}
}

// statusReported reports whether KCM or Sveltos reported any service state.
func (b *builder) statusReported() bool {
	if len(b.live.ServiceSets) > 0 || len(b.live.Summaries) > 0 {
		return true
	}
	for _, m := range b.live.MCSs {
		if m.Status.ObservedGeneration > 0 || len(m.Status.Services) > 0 {
			return true
		}
	}
	for _, cd := range b.live.Deployments {
		if len(cd.Status.Services) > 0 {
			return true
		}
	}
	return false
}

// compareMCSs checks every MultiClusterService the prediction renders on the management cluster against the live
// one: it must exist, and every field the prediction sets must have the predicted value (fields the API server
// defaults are ignored).
func (b *builder) compareMCSs() {
	if b.pred == nil {
		return
	}
	mgmt := b.pred.Cluster(b.mgmt().Name)
	if mgmt == nil {
		return
	}
	live := map[string]*kcmv1.MultiClusterService{}
	for i := range b.live.MCSs {
		live[b.live.MCSs[i].Name] = &b.live.MCSs[i]
	}
	for _, s := range mgmt.Services {
		if s.Objects == nil {
			continue
		}
		for _, want := range s.Objects.OfKind(kindMultiClusterService) {
			ref := "MultiClusterService " + want.GetName()
			got := live[want.GetName()]
			if got == nil {
				if b.live.readable(listOfKind(kindMultiClusterService)) {
					b.fleetFinding(newFinding(CodeMCSMissing, "", ref, "", fmt.Sprintf("%s, rendered by release %s, "+
						"does not exist", ref, s.Name), "check the HelmRelease "+s.Name+" (it installs the "+
						"MultiClusterServices) and its Ready condition"))
				}
				continue
			}
			gotObj, err := toUnstructured(got, kcmv1.GroupVersion.WithKind(kindMultiClusterService))
			if err != nil {
				continue
			}
			wantSpec, _, _ := unstructured.NestedMap(want.Object, "spec")
			gotSpec, _, _ := unstructured.NestedMap(gotObj.Object, "spec")
			if diffs := subsetDiff("spec", wantSpec, gotSpec); len(diffs) > 0 {
				b.fleetFinding(newFinding(CodeMCSDiffers, "", ref, strings.SplitN(diffs[0], ":", 2)[0],
					fmt.Sprintf("%s differs from what kof render predicts: %s", ref, strings.Join(diffs, "; ")),
					"the live release renders other charts or values than the prediction; upgrade the umbrella "+
						"release, or compare with the values it was installed with (kof doctor -f)"))
			}
		}
	}
}

// subsetDiff returns the paths under path where got lacks a value of want or holds another one.
func subsetDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path + ": live " + describe(got) + ", predicted an object"}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			out = append(out, subsetDiff(path+"."+k, w[k], g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: live %s, predicted %d items", path, describe(got), len(w))}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	default:
		if reflect.DeepEqual(want, got) || fmt.Sprint(want) == fmt.Sprint(got) {
			return nil
		}
		return []string{fmt.Sprintf("%s: live %s, predicted %s", path, describe(got), describe(want))}
	}
}

// describe shows a value for a difference message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "absent"
	case string:
		return short(x)
	case []any:
		return fmt.Sprintf("%d items", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

// chartVersions compares the chart version of every live HelmChart whose chart the prediction renders with that
// chart's Chart.yaml version.
func (b *builder) chartVersions() {
	for _, hc := range b.live.HelmCharts {
		meta, err := b.chartFile(hc.Spec.Chart)
		if err != nil || hc.Spec.Version == "" || hc.Spec.Version == meta.Version {
			continue
		}
		b.fleetFinding(newFinding(CodeChartVersionDiffers, "", "HelmChart "+hc.Namespace+"/"+hc.Name, "spec.version",
			fmt.Sprintf("the management cluster runs %s %s, the prediction renders %s from %s", hc.Spec.Chart,
				hc.Spec.Version, meta.Version, b.d.Prediction.Charts),
			"compare with the charts of the installed version (--charts), or upgrade the umbrella release"))
	}
}

// chartFile reads the Chart.yaml of the prediction's chart name.
func (b *builder) chartFile(name string) (*chart.Metadata, error) {
	if name == "" || path.Base(name) != name {
		return nil, fmt.Errorf("chart %q: not a chart folder name", name)
	}
	var data []byte
	var err error
	switch {
	case b.chartsDir != "":
		data, err = os.ReadFile(filepath.Join(b.chartsDir, name, "Chart.yaml"))
	case b.charts != nil:
		data, err = fs.ReadFile(b.charts, name+"/Chart.yaml")
	default:
		return nil, fmt.Errorf("no charts")
	}
	if err != nil {
		return nil, err
	}
	meta := &chart.Metadata{}
	if err := yaml.Unmarshal(data, meta); err != nil {
		return nil, fmt.Errorf("chart %s: Chart.yaml: %w", name, err)
	}
	return meta, nil
}
