package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KCM is the binary of KCM's controller manager in bin/ (ci/tools/kcm.sh).
const KCM = "kcm"

// KCMRelease is the name of the Release the harness's Management refers to (KCMBootstrap).
const KCMRelease = "kof-harness"

// TemplateWait bounds the wait for KCM to judge every ServiceTemplate (WaitServiceTemplates): source-controller
// fetches each chart, KCM downloads and validates it.
const TemplateWait = 2 * time.Minute

// StartKCM starts KCM's controller manager from assetsDir against kubeconfig as a local process, with its log in
// workDir, proxy's environment, and KCMNamespace as its system namespace (POD_NAMESPACE; KCM_NAME names the
// adapter). Its admission webhook server is off (the API server calls no webhook, so KCM's controllers validate
// what the webhooks would have: KCM's IsDisabledValidationWH path), and it creates no Management, AccessManagement,
// Release or templates of its own (those would come from KCM's chart and its template registry). The default
// HelmRepository KCM makes for templates points at templatesRepo (a loopback repository serving KCMStandInCharts:
// the harness's chart repository, or one standing in for KCM's template registry), so nothing reaches for KCM's
// public registry. Metrics, health and pprof listeners are off; leader election (always on in
// KCM) uses KCMNamespace. On error nothing is left running; the error names the binary and the fix.
func StartKCM(assetsDir, kubeconfig, workDir, templatesRepo string, proxy *Proxy) (*Process, error) {
	bin := filepath.Join(assetsDir, KCM)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w; build it with `make tools`", KCM, err)
	}
	args := []string{
		"--enable-webhook=false", "--create-management=false", "--create-access-management=false",
		"--create-release=false", "--create-templates=false", "--enable-sveltos-ctrl=true",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-election-namespace=" + KCMNamespace,
		"--templates-repo-url=" + templatesRepo, "--telemetry-mode=disabled", "--zap-devel=false",
		"--zap-log-level=info",
	}
	env := append([]string{"POD_NAMESPACE=" + KCMNamespace, "KCM_NAME=" + KCM}, proxy.Env()...)
	return StartProcess(KCM, bin, kubeconfig, args, env, filepath.Join(workDir, KCM+".log"))
}

// KCM's names the harness's objects use (KCM v1.10.0: the leader election ID of cmd/main.go, the built-in
// StateManagementProvider and its ServiceSet selector of internal/util/kube, the Sveltos provider's name, the
// default HelmRepository of its templates).
const (
	kcmLeaseName          = "31c555b4.k0rdent.mirantis.com"
	kcmStateProvider      = "ksm-projectsveltos"
	kcmAdapterLabel       = "ksm.k0rdent.mirantis.com/adapter"
	kcmAdapterLabelValue  = "kcm-controller-manager"
	kcmSveltosProvider    = "projectsveltos"
	kcmTemplatesRepo      = "kcm-templates"
	kcmComponentChartPart = "kof-harness-"
)

// KCMVersion is the KCM version the harness runs (ci/tools/kcm.sh, go.mod's KCM API module); the Release and the
// stand-in component charts carry it.
const KCMVersion = "1.10.0"

// kcmComponents are KCM's management components whose charts KCM would install through Flux (its own chart, Cluster
// API, Sveltos), by component name. Here the programs run as processes (KCM, addon-controller; no Cluster API), so
// each is a stand-in chart of the same version that installs nothing: Flux's helm-controller really installs it, and
// KCM sees its component deployed, as it must before it starts its MultiClusterService and ClusterDeployment
// controllers.
var kcmComponents = []string{"kcm", "cluster-api", kcmSveltosProvider}

// KCMStandInCharts returns the stand-in charts of kcmComponents, for the chart repository KCM's templates come
// from (StartKCM's templatesRepo; ServeCharts' extra charts).
func KCMStandInCharts() []*chart.Chart {
	var out []*chart.Chart
	for _, c := range kcmComponents {
		out = append(out, &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2,
			Name: kcmComponentChartPart + c, Version: KCMVersion, Type: "application",
			Description: "Stand-in for KCM's " + c + " component, which the KOF harness runs as a local process " +
				"(or not at all); it installs nothing."}})
	}
	return out
}

// KCMBootstrap creates the objects that KCM's own chart and template registry would create and that KCM's
// controllers need before they look at anything of KOF (docs/sveltos.md, "KCM in the tests and the demo"):
//   - the namespace KCMNamespace;
//   - one ProviderTemplate per component of kcmComponents, whose chart (KCMStandInCharts) comes from KCM's default
//     template HelmRepository, and the Release KCMRelease naming them;
//   - the StateManagementProvider KCM would create for Sveltos, with KCM's ServiceSet selector and Sveltos' CRDs,
//     whose adapter is KCM's leader election Lease (held while the process runs; KCM's own names a Deployment,
//     which no process here has) and with no provisioner object (addon-controller runs without leader election or
//     Deployment);
//   - the Management `kcm` with the Sveltos provider. KCM then installs the component charts through Flux, marks
//     them deployed and starts its MultiClusterService and ClusterDeployment controllers (WaitKCM).
//
// An object that exists already is kept. Errors name the object that could not be created.
func KCMBootstrap(ctx context.Context, c client.Client) error {
	if err := ensureNamespace(ctx, c, KCMNamespace, nil); err != nil {
		return err
	}
	var objs []client.Object
	templates := map[string]string{}
	for _, comp := range kcmComponents {
		name := kcmComponentChartPart + comp + "-" + strings.ReplaceAll(KCMVersion, ".", "-")
		templates[comp] = name
		objs = append(objs, &kcmv1.ProviderTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: kcmv1.ProviderTemplateSpec{Helm: kcmv1.HelmSpec{ChartSpec: &sourcev1.HelmChartSpec{
				Chart: kcmComponentChartPart + comp, Version: KCMVersion, Interval: metav1.Duration{Duration: 10 * time.Minute},
				SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: kcmTemplatesRepo},
			}}}})
	}
	objs = append(objs,
		&kcmv1.Release{ObjectMeta: metav1.ObjectMeta{Name: KCMRelease}, Spec: kcmv1.ReleaseSpec{Version: KCMVersion,
			KCM:  kcmv1.CoreProviderTemplate{Template: templates["kcm"]},
			CAPI: kcmv1.CoreProviderTemplate{Template: templates["cluster-api"]},
			Providers: []kcmv1.NamedProviderTemplate{{Name: kcmSveltosProvider,
				CoreProviderTemplate: kcmv1.CoreProviderTemplate{Template: templates[kcmSveltosProvider]}}}}},
		&kcmv1.StateManagementProvider{ObjectMeta: metav1.ObjectMeta{Name: kcmStateProvider},
			Spec: kcmv1.StateManagementProviderSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{kcmAdapterLabel: kcmAdapterLabelValue}},
				Adapter: kcmv1.ResourceReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease",
					Name: kcmLeaseName, Namespace: KCMNamespace, ReadinessRule: `self.spec.holderIdentity != ""`},
				Provisioner: []kcmv1.ResourceReference{},
				ProvisionerCRDs: []kcmv1.ProvisionerCRD{{Group: addonv1.GroupVersion.Group,
					Version: addonv1.GroupVersion.Version, Resources: []string{"profiles", "clustersummaries"}}},
			}},
		&kcmv1.Management{ObjectMeta: metav1.ObjectMeta{Name: kcmv1.ManagementName},
			Spec: kcmv1.ManagementSpec{Release: KCMRelease, ComponentsCommonSpec: kcmv1.ComponentsCommonSpec{
				Providers: []kcmv1.Provider{{Name: kcmSveltosProvider}}}}},
	)
	for _, o := range objs {
		if err := c.Create(ctx, o, client.FieldValidation(strictValidation)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// WaitKCM waits until KCM reports its Management's Sveltos component deployed (the point where it starts its
// MultiClusterService and ClusterDeployment controllers). Errors: the timeout, with the Management's component
// states and kcm's log; kcm that ended.
func WaitKCM(ctx context.Context, c client.Client, timeout time.Duration, kcm *Process) error {
	deadline := time.Now().Add(timeout)
	for {
		m := &kcmv1.Management{}
		err := c.Get(ctx, client.ObjectKey{Name: kcmv1.ManagementName}, m)
		if err == nil && m.Status.Components[kcmSveltosProvider].Success {
			return nil
		}
		if exitErr, ended := kcm.Exited(); ended {
			return fmt.Errorf("KCM ended: %w; last lines of its log:\n%s", exitErr, tail(kcm.LogPath, 15))
		}
		if time.Now().After(deadline) {
			var states []string
			for name, st := range m.Status.Components {
				states = append(states, fmt.Sprintf("%s: success=%t %s", name, st.Success, st.Error))
			}
			sort.Strings(states)
			return fmt.Errorf("KCM did not deploy its Management's components within %s (get: %v; log: %s):\n%s",
				timeout, err, kcm.LogPath, strings.Join(states, "\n"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// TemplateState is what KCM reports of one ServiceTemplate or ServiceTemplateChain.
type TemplateState struct {
	// Kind is ServiceTemplate or ServiceTemplateChain; Namespace and Name identify the object.
	Kind, Namespace, Name string
	// Judged is true once KCM wrote a status for the object's current generation.
	Judged bool
	// Valid and Error are KCM's status.valid and status.validationError.
	Valid bool
	Error string
}

func (s TemplateState) String() string {
	switch {
	case !s.Judged:
		return fmt.Sprintf("%s %s/%s: not judged by KCM yet", s.Kind, s.Namespace, s.Name)
	case s.Valid:
		return fmt.Sprintf("%s %s/%s: valid", s.Kind, s.Namespace, s.Name)
	}
	return fmt.Sprintf("%s %s/%s: invalid: %s", s.Kind, s.Namespace, s.Name, s.Error)
}

// ReadTemplateStates returns KCM's status of every ServiceTemplate and ServiceTemplateChain in namespace, sorted
// by kind and name. Errors: a list that fails.
func ReadTemplateStates(ctx context.Context, c client.Client, namespace string) ([]TemplateState, error) {
	var out []TemplateState
	sts := &kcmv1.ServiceTemplateList{}
	if err := c.List(ctx, sts, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list ServiceTemplates: %w", err)
	}
	for _, st := range sts.Items {
		s := st.Status
		// KCM writes a status with an empty validation error and valid=false until the chart is judged; a
		// template is judged when it is valid or KCM says why not.
		out = append(out, TemplateState{Kind: kcmv1.ServiceTemplateKind, Namespace: st.Namespace, Name: st.Name,
			Judged: s.ObservedGeneration == st.Generation && (s.Valid || s.ValidationError != ""),
			Valid:  s.Valid, Error: s.ValidationError})
	}
	chains := &kcmv1.ServiceTemplateChainList{}
	if err := c.List(ctx, chains, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list ServiceTemplateChains: %w", err)
	}
	for _, ch := range chains.Items {
		s := ch.Status // no observedGeneration: KCM writes it only when the chain's validity changes
		out = append(out, TemplateState{Kind: kcmv1.ServiceTemplateChainKind, Namespace: ch.Namespace, Name: ch.Name,
			Judged: s.Valid || s.ValidationError != "", Valid: s.Valid, Error: s.ValidationError})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// WaitServiceTemplates waits until KCM has judged every ServiceTemplate and ServiceTemplateChain named in want
// (`Kind/name` in namespace) and returns their states. kcm, when set, is watched: its end stops the wait. Errors:
// the timeout, naming each object not judged yet and kcm's log; a list that fails; kcm that ended.
func WaitServiceTemplates(ctx context.Context, c client.Client, namespace string, want []string, timeout time.Duration,
	kcm *Process) ([]TemplateState, error) {
	deadline := time.Now().Add(timeout)
	for {
		states, err := ReadTemplateStates(ctx, c, namespace)
		if err != nil && !Retryable(err) {
			return nil, err
		}
		byKey := map[string]TemplateState{}
		for _, s := range states {
			byKey[s.Kind+"/"+s.Name] = s
		}
		var pending []string
		var got []TemplateState
		for _, k := range want {
			s, ok := byKey[k]
			switch {
			case !ok:
				pending = append(pending, k+": does not exist")
			case !s.Judged:
				pending = append(pending, s.String())
			default:
				got = append(got, s)
			}
		}
		if err == nil && len(pending) == 0 {
			return got, nil
		}
		if kcm != nil {
			if exitErr, ended := kcm.Exited(); ended {
				return got, fmt.Errorf("KCM ended: %w; last lines of its log:\n%s", exitErr, tail(kcm.LogPath, 15))
			}
		}
		if time.Now().After(deadline) {
			logNote := ""
			if kcm != nil {
				logNote = " (log: " + kcm.LogPath + ")"
			}
			return got, fmt.Errorf("KCM did not judge every template within %s%s:\n%s", timeout, logNote,
				strings.Join(pending, "\n"))
		}
		select {
		case <-ctx.Done():
			return got, errors.Join(ctx.Err(), err)
		case <-time.After(pollInterval):
		}
	}
}

// KCMReport is what KCM reports of an installation: its verdict on every ServiceTemplate and ServiceTemplateChain
// of KCMNamespace, and per cluster the states of the services it reports for it.
type KCMReport struct {
	// Templates are KCM's verdicts (ReadTemplateStates), sorted by kind and name.
	Templates []TemplateState
	// Clusters maps `namespace/name` of each ClusterDeployment, and "" for the management cluster, to what KCM
	// reports of its services (KCMClusterState).
	Clusters map[string]string
}

// TemplateSummary returns one line counting the valid ServiceTemplates and ServiceTemplateChains and naming the
// invalid ones, e.g. `20 of 31 ServiceTemplates valid (invalid: a, b); 15 of 15 ServiceTemplateChains valid`.
func (r *KCMReport) TemplateSummary() string {
	var parts []string
	for _, kind := range []string{kcmv1.ServiceTemplateKind, kcmv1.ServiceTemplateChainKind} {
		total, valid := 0, 0
		var invalid []string
		for _, t := range r.Templates {
			if t.Kind != kind {
				continue
			}
			total++
			if t.Valid {
				valid++
			} else {
				invalid = append(invalid, t.Name)
			}
		}
		p := fmt.Sprintf("%d of %d %ss valid", valid, total, kind)
		if len(invalid) > 0 {
			p += " (invalid: " + strings.Join(invalid, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// KCMClusterState returns what KCM reports of one cluster's services: their states counted (`3 Deployed, 1
// Provisioning`) from services (a ClusterDeployment's status.services and the ServiceSets KCM made for the
// cluster), or, while it reports none, `no services reported` with the number of ServiceSets and the cluster's
// Ready condition when it is not True (`not ready: <message>`, KCM puts services into a ServiceSet only for a
// ready cluster).
func KCMClusterState(services []kcmv1.ServiceState, serviceSets int, ready *metav1.Condition) string {
	if len(services) > 0 {
		counts := map[string]int{}
		var states []string
		for _, s := range services {
			if counts[s.State] == 0 {
				states = append(states, s.State)
			}
			counts[s.State]++
		}
		sort.Strings(states)
		var out []string
		for _, st := range states {
			out = append(out, fmt.Sprintf("%d %s", counts[st], st))
		}
		return strings.Join(out, ", ")
	}
	out := fmt.Sprintf("no services reported (%d ServiceSets)", serviceSets)
	switch {
	case ready == nil:
		out += "; no Ready condition yet"
	case ready.Status != metav1.ConditionTrue:
		out += "; not ready: " + firstLine(ready.Message)
	}
	return out
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// ReadKCMClusters returns KCMReport.Clusters: for each ClusterDeployment, KCMClusterState of its status.services
// (or else of the services of the ServiceSets of the cluster, spec.cluster) and its Ready condition; for "" (the
// management cluster) that of the ServiceSets KCM makes for self-managing MultiClusterServices (`management-*` in
// KCMNamespace). Errors: a list that fails.
func ReadKCMClusters(ctx context.Context, c client.Client) (map[string]string, error) {
	sets := &kcmv1.ServiceSetList{}
	if err := c.List(ctx, sets); err != nil {
		return nil, fmt.Errorf("list ServiceSets: %w", err)
	}
	type collected struct {
		services []kcmv1.ServiceState
		sets     int
	}
	byCluster := map[string]*collected{}
	for _, ss := range sets.Items {
		key := ss.Namespace + "/" + ss.Spec.Cluster
		if ss.Namespace == KCMNamespace && strings.HasPrefix(ss.Name, "management-") {
			key = ""
		}
		if byCluster[key] == nil {
			byCluster[key] = &collected{}
		}
		byCluster[key].sets++
		byCluster[key].services = append(byCluster[key].services, ss.Status.Services...)
	}
	get := func(key string) *collected {
		if byCluster[key] == nil {
			return &collected{}
		}
		return byCluster[key]
	}
	cds := &kcmv1.ClusterDeploymentList{}
	if err := c.List(ctx, cds); err != nil {
		return nil, fmt.Errorf("list ClusterDeployments: %w", err)
	}
	mgmt := get("")
	ready := &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}
	out := map[string]string{"": KCMClusterState(mgmt.services, mgmt.sets, ready)}
	for _, cd := range cds.Items {
		key := cd.Namespace + "/" + cd.Name
		got := get(key)
		services := cd.Status.Services
		if len(services) == 0 {
			services = got.services
		}
		var cond *metav1.Condition
		for i := range cd.Status.Conditions {
			if cd.Status.Conditions[i].Type == "Ready" {
				cond = &cd.Status.Conditions[i]
			}
		}
		out[key] = KCMClusterState(services, got.sets, cond)
	}
	return out, nil
}

// KCMReleaseCheck returns an error naming every HelmRelease of want (`namespace/name`) that does not exist, and
// every ComponentRemoved event KCM recorded on its Management (KCM v1.10.0 deletes the HelmReleases of its system
// namespace it does not own and records that event for each: docs/sveltos.md). nil means KCM removed none of them.
func KCMReleaseCheck(ctx context.Context, c client.Client, want []string) error {
	var errs []error
	for _, key := range want {
		ns, name, _ := strings.Cut(key, "/")
		hr := &unstructured.Unstructured{}
		hr.SetGroupVersionKind(helmReleaseGVK)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, hr); err != nil {
			errs = append(errs, fmt.Errorf("HelmRelease %s: %w", key, err))
		} else if hr.GetDeletionTimestamp() != nil {
			errs = append(errs, fmt.Errorf("HelmRelease %s is being deleted", key))
		}
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events); err != nil {
		return errors.Join(append(errs, fmt.Errorf("list events: %w", err))...)
	}
	for _, e := range events.Items {
		if e.Reason == kcmComponentRemoved && e.InvolvedObject.Kind == kcmv1.ManagementKind {
			errs = append(errs, fmt.Errorf("KCM's Management event %s: %s", e.Reason, e.Message))
		}
	}
	return errors.Join(errs...)
}

// kcmComponentRemoved is the reason of the event KCM records on its Management when it deletes a HelmRelease
// (KCM v1.10.0 internal/controller/components Cleanup).
const kcmComponentRemoved = "ComponentRemoved"

// helmReleaseGVK is the kind of Flux's HelmReleases (helmReleaseAPIVersion).
var helmReleaseGVK = schema.FromAPIVersionAndKind(helmReleaseAPIVersion, "HelmRelease")

// KCMReport waits until KCM runs its MultiClusterService controller (Session.WaitKCM), has judged every
// ServiceTemplate and ServiceTemplateChain of KCMNamespace (WaitServiceTemplates) and has reconciled every
// MultiClusterService (status.observedGeneration is its generation), then reads what it reports (ReadKCMClusters).
// Errors: those waits' and reads'.
func (s *Session) KCMReport(ctx context.Context) (*KCMReport, error) {
	if err := s.WaitKCM(ctx); err != nil {
		return nil, err
	}
	c := s.ControlPlane.Client
	all, err := ReadTemplateStates(ctx, c, KCMNamespace)
	if err != nil {
		return nil, err
	}
	var want []string
	for _, t := range all {
		want = append(want, t.Kind+"/"+t.Name)
	}
	r := &KCMReport{}
	if r.Templates, err = WaitServiceTemplates(ctx, c, KCMNamespace, want, TemplateWait, s.KCM); err != nil {
		return nil, err
	}
	if err := waitMCSsObserved(ctx, c, TemplateWait, s.KCM); err != nil {
		return nil, err
	}
	if r.Clusters, err = ReadKCMClusters(ctx, c); err != nil {
		return nil, err
	}
	return r, nil
}

// waitMCSsObserved waits until KCM has written the status of every MultiClusterService's current generation.
// Errors: the timeout naming those it has not, a list that fails, kcm that ended.
func waitMCSsObserved(ctx context.Context, c client.Client, timeout time.Duration, kcm *Process) error {
	deadline := time.Now().Add(timeout)
	for {
		list := &kcmv1.MultiClusterServiceList{}
		err := c.List(ctx, list)
		if err != nil && !Retryable(err) {
			return fmt.Errorf("list MultiClusterServices: %w", err)
		}
		var pending []string
		for _, m := range list.Items {
			if m.Status.ObservedGeneration != m.Generation {
				pending = append(pending, m.Name)
			}
		}
		if err == nil && len(pending) == 0 {
			return nil
		}
		if exitErr, ended := kcm.Exited(); ended {
			return fmt.Errorf("KCM ended: %w; last lines of its log:\n%s", exitErr, tail(kcm.LogPath, 15))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("KCM did not reconcile MultiClusterServices %s within %s (log: %s)",
				strings.Join(pending, ", "), timeout, kcm.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}
