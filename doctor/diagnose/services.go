package diagnose

import (
	"crypto/sha256"
	"fmt"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	libsveltosv1 "github.com/projectsveltos/libsveltos/api/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Labels Sveltos sets on a ClusterSummary (projectsveltos addon-controller v1.9.0 api/v1beta1 ClusterNameLabel,
// lib/clusterops ProfileLabelName and ClusterProfileLabelName).
const (
	summaryClusterLabel        = addonv1.ClusterNameLabel
	summaryProfileLabel        = "projectsveltos.io/profile-name"
	summaryClusterProfileLabel = "projectsveltos.io/cluster-profile-name"
)

// defaultServiceNamespace is the namespace of a service that names none (KCM api/v1beta1 Service.Namespace).
const defaultServiceNamespace = "default"

// Where a service state was read.
const (
	sourceDeployment = "ClusterDeployment status.services"
	sourceServiceSet = "ServiceSet status.services"
	sourceSummary    = "ClusterSummary status"
	sourceHelm       = "HelmRelease status.conditions"
)

// selections checks every live MultiClusterService against every cluster, lists the services of the matching ones
// with their state, and reports KOF clusters nothing selects and matches KCM's status does not list.
func (b *builder) selections() {
	for _, c := range b.d.Clusters {
		cd := b.deployment(c)
		lbls := map[string]string{fleet.ManagementClusterLabel: kofv1.TrueValue}
		if cd != nil {
			lbls = cd.GetLabels()
		}
		if c.Role == fleet.RoleManagement {
			b.helmReleaseServices(c)
		}
		for _, mcs := range b.x.candidates(lbls) {
			b.selectOne(c, cd, mcs, lbls)
		}
		b.notSelected(c)
	}
}

// isOperatorMade reports whether o was made by the kof-operator.
func isOperatorMade(o metav1.Object) bool {
	return o.GetLabels()[kofv1.ManagedByLabel] == kofv1.ManagedBy
}

// selectOne checks mcs against cluster c (cd nil for the management cluster).
func (b *builder) selectOne(c *Cluster, cd *kcmv1.ClusterDeployment, mcs *kcmv1.MultiClusterService,
	lbls map[string]string) {
	sel := Selection{MCS: mcs.Name, Operator: isOperatorMade(mcs)}
	self := mcs.Spec.ServiceSpec.Provider.SelfManagement
	if cd == nil && !self {
		if !sel.Operator {
			sel.Reason = "not a candidate: spec.serviceSpec.provider.selfManagement is false"
			c.Selections = append(c.Selections, sel)
		}
		return
	}
	ok, terms, err := ExplainSelector(mcs.Spec.ClusterSelector, lbls)
	if err != nil {
		b.fleetFinding(newFinding(CodeMCSConditionFalse, "", "MultiClusterService "+mcs.Name, "spec.clusterSelector",
			err.Error(), "fix the selector in the chart values that render it"))
		return
	}
	sel.Matches, sel.Terms = ok, terms
	if !ok && sel.Operator {
		return
	}
	if ok && cd != nil {
		sel.KCM = b.checkListed(c, mcs)
	}
	c.Selections = append(c.Selections, sel)
	if !ok {
		return
	}
	for _, svc := range mcs.Spec.ServiceSpec.Services {
		if svc.Disable {
			continue
		}
		b.addService(c, cd, mcs, svc)
	}
}

// addService adds one service of mcs to cluster c with its predicted render and its live state.
func (b *builder) addService(c *Cluster, cd *kcmv1.ClusterDeployment, mcs *kcmv1.MultiClusterService, svc kcmv1.Service) {
	ns := svc.Namespace
	if ns == "" {
		ns = defaultServiceNamespace
	}
	s := Service{Name: svc.Name, Namespace: ns, MCS: mcs.Name, Via: "MultiClusterService " + mcs.Name,
		Template: svc.Template, State: StateNotReported}
	if p := b.predictedService(c, s.Via, svc.Template); p != nil {
		s.Chart, s.Version, s.Objects = p.Chart, p.Version, objectCount(p)
		if p.Err != nil {
			s.PredictionError = p.Err.Error()
		}
	}
	b.liveState(c, cd, mcs, &s)
	c.Services = append(c.Services, s)
	object, field := cdRef(c), "status.services"
	if cd == nil {
		object, field = "ServiceSet "+serviceSetKey(b.cfg.KCMNamespace, nil, mcs.Name), "status.services"
	}
	switch s.State {
	case kcmv1.ServiceStateFailed:
		c.Findings = append(c.Findings, newFinding(CodeServiceFailed, c.Dir, object, field,
			fmt.Sprintf("service %s/%s of MultiClusterService %s failed: %s", ns, svc.Name, mcs.Name, s.Message),
			"fix what the message names; Sveltos retries on its own (its ClusterSummary has the details)"))
	case kcmv1.ServiceStateProvisioning, kcmv1.ServiceStateNotDeployed, kcmv1.ServiceStateDeleting:
		c.Findings = append(c.Findings, newFinding(CodeServiceInProgress, c.Dir, object, field,
			fmt.Sprintf("service %s/%s of MultiClusterService %s is %s", ns, svc.Name, mcs.Name, s.State),
			"wait; a service that stays so names its blocker in its ClusterSummary"))
	case StateNotReported:
		if b.reportsServices(c, cd) {
			c.Findings = append(c.Findings, newFinding(CodeServiceNotDelivered, c.Dir, object, field,
				fmt.Sprintf("KCM reports the cluster's services but not %s/%s of MultiClusterService %s", ns,
					svc.Name, mcs.Name),
				"check the MultiClusterService's status.conditions and that KCM's ServiceSet for the cluster exists"))
		}
	}
}

// predictedService returns the predicted service of c delivered via with template, nil when there is none.
func (b *builder) predictedService(c *Cluster, via, template string) *fleet.Service {
	pc := b.predictedCluster(c)
	if pc == nil {
		return nil
	}
	for _, s := range pc.Services {
		if s.Via == via && (template == "" || s.Template == template) {
			return s
		}
	}
	return nil
}

// predictedCluster returns the prediction's cluster of c, nil without a prediction.
func (b *builder) predictedCluster(c *Cluster) *fleet.Cluster {
	return b.x.clusters[c.Key()]
}

// liveState fills s.State from, in order, the ClusterDeployment's status.services, the ServiceSet KCM made for the
// cluster and mcs, and the cluster's Sveltos ClusterSummary of that ServiceSet.
func (b *builder) liveState(c *Cluster, cd *kcmv1.ClusterDeployment, mcs *kcmv1.MultiClusterService, s *Service) {
	if cd != nil {
		if st := findState(cd.Status.Services, s.Name, s.Namespace); st != nil {
			s.State, s.Message, s.StateSource = st.State, st.FailureMessage, sourceDeployment
			return
		}
	}
	key := serviceSetKey(b.cfg.KCMNamespace, cd, mcs.Name)
	if ss := b.x.serviceSets[key]; ss != nil {
		if st := findState(ss.Status.Services, s.Name, s.Namespace); st != nil {
			s.State, s.Message, s.StateSource = st.State, st.FailureMessage, sourceServiceSet
			return
		}
	}
	for _, sum := range b.x.summaries[c.Key()] {
		if !summaryOf(sum, c, key) {
			continue
		}
		if state, msg, ok := summaryState(sum, s.Name, s.Namespace); ok {
			s.State, s.Message, s.StateSource = state, msg, sourceSummary
			return
		}
	}
}

// serviceSetKey returns `namespace/name` of the ServiceSet KCM makes for cd (nil: the management cluster) and the
// MultiClusterService mcs: `<cd>-<first 4 bytes of sha256(mcs) in hex>` in cd's namespace, or `management-<hash>`
// in the KCM system namespace (k0rdent/kcm v1.10.0 internal/serviceset ObjectKey).
func serviceSetKey(systemNamespace string, cd *kcmv1.ClusterDeployment, mcs string) string {
	h := sha256.Sum256([]byte(mcs))
	if cd == nil {
		return fmt.Sprintf("%s/management-%x", systemNamespace, h[:4])
	}
	return fmt.Sprintf("%s/%s-%x", cd.Namespace, cd.Name, h[:4])
}

// summaryOf reports whether sum is the ClusterSummary of cluster c for the Sveltos profile KCM made from the
// ServiceSet serviceSet (`namespace/name`): Sveltos labels it with the cluster's name and the profile's name, the
// profile being named after the ServiceSet.
func summaryOf(sum *addonv1.ClusterSummary, c *Cluster, serviceSet string) bool {
	_, ssName, _ := strings.Cut(serviceSet, "/")
	l := sum.GetLabels()
	if l[summaryClusterLabel] != c.Name || sum.Namespace != c.Namespace {
		return false
	}
	return l[summaryProfileLabel] == ssName || l[summaryClusterProfileLabel] == ssName
}

// findState returns the state of service name/namespace among states, nil when absent.
func findState(states []kcmv1.ServiceState, name, namespace string) *kcmv1.ServiceState {
	for i := range states {
		if states[i].Name == name && (states[i].Namespace == namespace || states[i].Namespace == "") {
			return &states[i]
		}
	}
	return nil
}

// summaryState derives a KCM service state from a ClusterSummary: a conflicting or failing Helm release is Failed;
// otherwise the Helm feature's status (Provisioned → Deployed, Provisioning, Failed, Removing → Deleting) decides.
// Source: projectsveltos addon-controller v1.9.0 api/v1beta1 ClusterSummaryStatus, HelmChartSummary.
func summaryState(sum *addonv1.ClusterSummary, name, namespace string) (string, string, bool) {
	found := false
	for _, h := range sum.Status.HelmReleaseSummaries {
		if h.ReleaseName != name || h.ReleaseNamespace != namespace {
			continue
		}
		found = true
		if h.Status == addonv1.HelmChartStatusConflict {
			return kcmv1.ServiceStateFailed, h.ConflictMessage, true
		}
		if h.FailureMessage != nil && *h.FailureMessage != "" {
			return kcmv1.ServiceStateFailed, *h.FailureMessage, true
		}
	}
	if !found {
		return "", "", false
	}
	for _, f := range sum.Status.FeatureSummaries {
		if f.FeatureID != libsveltosv1.FeatureHelm {
			continue
		}
		msg := ""
		if f.FailureMessage != nil {
			msg = *f.FailureMessage
		}
		switch f.Status {
		case libsveltosv1.FeatureStatusProvisioned:
			return kcmv1.ServiceStateDeployed, msg, true
		case libsveltosv1.FeatureStatusFailed, libsveltosv1.FeatureStatusFailedNonRetriable:
			return kcmv1.ServiceStateFailed, msg, true
		case libsveltosv1.FeatureStatusRemoving:
			return kcmv1.ServiceStateDeleting, msg, true
		default:
			return kcmv1.ServiceStateProvisioning, msg, true
		}
	}
	return kcmv1.ServiceStateProvisioning, "", true
}

// reportsServices reports whether KCM or Sveltos report any service state for the cluster.
func (b *builder) reportsServices(c *Cluster, cd *kcmv1.ClusterDeployment) bool {
	if cd != nil && len(cd.Status.Services) > 0 {
		return true
	}
	return len(b.x.summaries[c.Key()]) > 0
}

// checkListed returns what the MultiClusterService's current status says of matching cluster c, and reports a
// cluster the status does not list. A status that is not current (or empty) says nothing.
func (b *builder) checkListed(c *Cluster, mcs *kcmv1.MultiClusterService) string {
	st := mcs.Status
	if mcs.Generation == 0 || st.ObservedGeneration != mcs.Generation || len(st.MatchingClusters) == 0 {
		return ""
	}
	for _, m := range st.MatchingClusters {
		if m.ObjectReference != nil && m.Name == c.Name && m.Namespace == c.Namespace {
			if m.Deployed {
				return KCMDeployed
			}
			return KCMNotDeployed
		}
	}
	c.Findings = append(c.Findings, newFinding(CodeNotListed, c.Dir, "MultiClusterService "+mcs.Name,
		"status.matchingClusters", fmt.Sprintf("spec.clusterSelector of MultiClusterService %s matches the cluster, "+
			"but KCM does not list it among the matching clusters", mcs.Name),
		"check KCM's controller logs and the ClusterDeployment's status.conditions (KCM matches ready clusters)"))
	return KCMNotListed
}

// notSelected reports a KOF cluster that no MultiClusterService selects (in regionless mode regional clusters are
// expected to receive nothing), with the failing terms of the closest KOF MultiClusterService.
func (b *builder) notSelected(c *Cluster) {
	if c.Role != fleet.RoleChild && (c.Role != fleet.RoleRegional || b.cfg.Regionless) {
		return
	}
	var closest *Selection
	for i := range c.Selections {
		s := &c.Selections[i]
		if s.Matches && !s.Operator {
			return
		}
		if !s.Operator && s.Reason == "" && (closest == nil || len(Failing(s.Terms)) < len(Failing(closest.Terms))) {
			closest = s
		}
	}
	msg := "no MultiClusterService selects it, so it receives no KOF service"
	fix := "install kof-" + c.Role + " (umbrella value kof-" + c.Role + ".enabled) so that its MultiClusterServices exist"
	field := "metadata.labels"
	if closest != nil {
		var whys, fixes []string
		for _, t := range Failing(closest.Terms) {
			whys = append(whys, t.Why)
			fixes = append(fixes, termFix(t, b.live.MCSs, closest.MCS))
			field = "metadata.labels[" + t.Key + "]"
		}
		msg += fmt.Sprintf("; the closest, %s, fails: %s", closest.MCS, strings.Join(whys, ", "))
		fix = strings.Join(fixes, ", and ")
	}
	c.Findings = append(c.Findings, newFinding(CodeNotSelected, c.Dir, cdRef(c), field, msg, fix))
}

// termFix says how to satisfy the failing term t of the MultiClusterService named mcs.
func termFix(t Term, mcss []kcmv1.MultiClusterService, mcs string) string {
	for _, m := range mcss {
		if m.Name != mcs {
			continue
		}
		if v, ok := m.Spec.ClusterSelector.MatchLabels[t.Key]; ok {
			return fmt.Sprintf("set label %s: %q", t.Key, v)
		}
		for _, e := range m.Spec.ClusterSelector.MatchExpressions {
			if e.Key != t.Key {
				continue
			}
			switch selection.Operator(strings.ToLower(string(e.Operator))) {
			case selection.In:
				return fmt.Sprintf("set label %s to one of %s", t.Key, strings.Join(e.Values, ", "))
			case selection.NotIn:
				return fmt.Sprintf("set label %s to a value other than %s", t.Key, strings.Join(e.Values, ", "))
			case selection.Exists:
				return "set label " + t.Key
			default:
				return "remove label " + t.Key
			}
		}
	}
	return "satisfy " + t.Requirement
}

// helmReleaseServices adds the umbrella's HelmReleases as the management cluster's services, with their Ready
// condition as state.
func (b *builder) helmReleaseServices(c *Cluster) {
	for _, hr := range b.live.HelmReleases {
		s := Service{Name: hr.Spec.ReleaseName, Namespace: hr.Spec.TargetNamespace,
			Via: "HelmRelease " + hr.Namespace + "/" + hr.Name, StateSource: sourceHelm}
		if s.Name == "" {
			s.Name = hr.Name
		}
		if s.Namespace == "" {
			s.Namespace = hr.Namespace
		}
		if p := b.predictedService(c, s.Via, ""); p != nil {
			s.Chart, s.Version, s.Objects = p.Chart, p.Version, objectCount(p)
			if p.Err != nil {
				s.PredictionError = p.Err.Error()
			}
		}
		ready := apimeta.FindStatusCondition(hr.Status.Conditions, kofv1.ConditionReady)
		object, field := "HelmRelease "+hr.Namespace+"/"+hr.Name, "status.conditions[Ready]"
		switch {
		case ready == nil || ready.ObservedGeneration < hr.Generation && ready.Status != metav1.ConditionFalse:
			s.State = kcmv1.ServiceStateProvisioning
			c.Findings = append(c.Findings, newFinding(CodeHelmReleaseInProgress, c.Dir, object, field,
				"HelmRelease "+hr.Name+" has not finished reconciling", "wait for helm-controller"))
		case ready.Status == metav1.ConditionTrue:
			s.State, s.Message = kcmv1.ServiceStateDeployed, ready.Message
		case ready.Status == metav1.ConditionFalse:
			s.State, s.Message = kcmv1.ServiceStateFailed, ready.Message
			c.Findings = append(c.Findings, newFinding(CodeHelmReleaseFailed, c.Dir, object, field,
				fmt.Sprintf("HelmRelease %s is not Ready (%s): %s", hr.Name, ready.Reason, ready.Message),
				"fix what the message names (helm-controller retries), e.g. the chart source or the values"))
		default:
			s.State, s.Message = kcmv1.ServiceStateProvisioning, ready.Message
			c.Findings = append(c.Findings, newFinding(CodeHelmReleaseInProgress, c.Dir, object, field,
				fmt.Sprintf("HelmRelease %s is reconciling (%s): %s", hr.Name, ready.Reason, ready.Message),
				"wait for helm-controller"))
		}
		c.Services = append(c.Services, s)
	}
}

// objectCount returns the number of objects the prediction rendered for s.
func objectCount(s *fleet.Service) int {
	if s.Objects == nil {
		return 0
	}
	return s.Objects.Len()
}
