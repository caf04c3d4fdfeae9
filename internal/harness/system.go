package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/render"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// Names of the umbrella install (docs/contract.md, "Umbrella defaults": namespace `kof`, KCM's system namespace
// `kcm-system`).
const (
	UmbrellaRelease   = "kof"
	UmbrellaNamespace = "kof"
	UmbrellaChart     = "kof"
	KCMNamespace      = "kcm-system"
)

// FluxWait bounds each wait for Flux: every KOF HelmRelease Ready after an install or upgrade, every HelmRelease
// gone after an uninstall.
const FluxWait = 3 * time.Minute

// kcmAPIVersion is the API version of ClusterDeployments and ClusterTemplates (github.com/K0rdent/kcm api/v1beta1).
const kcmAPIVersion = "k0rdent.mirantis.com/v1beta1"

// Session is one running control plane with the CRDs installed and the kof-operator binary built; several
// installations may follow each other on it (one at a time).
type Session struct {
	// Root is the module root: charts/, operator/, bin/.
	Root string
	// WorkDir holds the kubeconfig and the operator binary.
	WorkDir string
	// LogDir holds the logs of the Flux controllers and the kof-operator (SessionOptions.LogDir).
	LogDir string
	// BinDir holds the programs the session starts (SessionOptions.BinDir).
	BinDir string
	// ControlPlane is the running API server.
	ControlPlane *ControlPlane
	// Helm installs releases on it.
	Helm *Helm
	// OperatorBinary is the built kof-operator.
	OperatorBinary string
	// Charts serves the repository's charts; Proxy refuses every outside address; Flux installs the HelmReleases.
	Charts *ChartRepository
	Proxy  *Proxy
	Flux   *FluxControllers
	// KCM is KCM's controller manager (SessionOptions.KCM), nil when it does not run.
	KCM *Process

	progress func(format string, args ...any)
	node     *Node
	kcm      bool
}

// SessionOptions configures StartSession.
type SessionOptions struct {
	// Root is the module root (holding go.mod, charts/, bin/).
	Root string
	// WorkDir must exist; it receives the kubeconfig, the operator binary and, without LogDir, the logs.
	WorkDir string
	// LogDir, when set, receives the logs of the Flux controllers and the kof-operator instead of WorkDir (the demo
	// keeps them in its output folder, since it removes WorkDir at its end); it is created when missing.
	LogDir string
	// BinDir holds kube-apiserver, etcd, source-controller and helm-controller; empty means Root/bin.
	BinDir string
	// Progress receives one line per step; nil discards them.
	Progress func(format string, args ...any)
	// Node, when set, is the real node (StartNode) the session runs on: its API server (with the CRDs the node
	// installed, waited for) instead of a control plane of the session's own, and the kof-operator as the pods of its
	// Deployment, which an installation waits for, instead of a process.
	Node *Node
	// KCM, when set, runs KCM's controller manager from BinDir beside Flux (docs/sveltos.md, "KCM in the tests and
	// the demo"): the chart repository also serves KCMStandInCharts, KCMBootstrap creates the objects KCM waits for
	// and StartKCM starts it, before the kof-operator is built; Session.WaitKCM waits until it runs its
	// MultiClusterService controller.
	KCM bool
}

// StartSession starts the control plane from BinDir with the CRDs of CRDDirs(Root) and builds the kof-operator
// (both at once); once the control plane is up it serves Root/charts as a Helm repository on loopback and starts
// Flux's source-controller and helm-controller (and with opts.KCM, KCM) against it while the build goes on. With opts.Node it starts no control plane and builds no operator: the
// node's API server is the control plane. It returns an error naming the step that failed; nothing is left running
// then.
func StartSession(ctx context.Context, opts SessionOptions) (*Session, error) {
	s := &Session{Root: opts.Root, WorkDir: opts.WorkDir, LogDir: opts.LogDir, BinDir: opts.BinDir,
		progress: opts.Progress, node: opts.Node, kcm: opts.KCM}
	if s.BinDir == "" {
		s.BinDir = filepath.Join(opts.Root, "bin")
	}
	if s.LogDir == "" {
		s.LogDir = s.WorkDir
	}
	if err := os.MkdirAll(s.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log folder: %w", err)
	}
	if s.progress == nil {
		s.progress = func(string, ...any) {}
	}
	if n := opts.Node; n != nil {
		if err := n.WaitCRDs(); err != nil {
			return nil, err
		}
		s.ControlPlane = &ControlPlane{Config: n.Config, Client: n.Client, Kubeconfig: n.Kubeconfig, CRDs: n.CRDs}
		s.Helm = &Helm{Kubeconfig: n.Kubeconfig, Client: n.Client}
		if err := s.startFlux(); err != nil {
			return nil, errors.Join(err, s.Close())
		}
		return s, nil
	}
	dirs, err := CRDDirs(opts.Root)
	if err != nil {
		return nil, err
	}
	type built struct {
		bin string
		err error
	}
	ch := make(chan built, 1)
	go func() {
		bin, err := BuildOperator(ctx, opts.Root, opts.WorkDir)
		ch <- built{bin, err}
	}()
	s.progress("starting kube-apiserver and etcd from %s, installing %d CRD folders", s.BinDir, len(dirs))
	cp, err := StartControlPlane(ControlPlaneOptions{AssetsDir: s.BinDir, CRDDirs: dirs,
		WorkDir: opts.WorkDir})
	if err != nil {
		<-ch
		return nil, err
	}
	s.progress("control plane up at %s with %d CRDs", cp.Config.Host, cp.CRDs)
	s.ControlPlane = cp
	s.Helm = &Helm{Kubeconfig: cp.Kubeconfig, Client: cp.Client}
	// Flux and KCM start while the operator builds: KCM's own start (its components installed through Flux)
	// overlaps the build and the umbrella install.
	flux := s.startFlux()
	b := <-ch
	if err := errors.Join(flux, b.err); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	s.OperatorBinary = b.bin
	s.progress("kof-operator built")
	return s, nil
}

// startFlux serves the charts, starts the proxy and the Flux controllers, and with KCM on, bootstraps and starts
// KCM.
func (s *Session) startFlux() error {
	dir := filepath.Join(s.WorkDir, "chart-repository")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create chart repository folder: %w", err)
	}
	var extra []*chart.Chart
	if s.kcm {
		extra = KCMStandInCharts()
	}
	charts, err := ServeCharts(filepath.Join(s.Root, "charts"), dir, extra...)
	if err != nil {
		return err
	}
	s.Charts = charts
	if s.Proxy, err = StartProxy(); err != nil {
		return err
	}
	s.Flux, err = startFlux(s.BinDir, s.ControlPlane.Kubeconfig, s.WorkDir, s.LogDir, s.Proxy)
	if err != nil {
		return err
	}
	s.progress("chart repository %s serves %d charts; source-controller and helm-controller started (logs in %s)",
		charts.URL, len(charts.Charts), s.LogDir)
	if !s.kcm {
		return nil
	}
	if err := KCMBootstrap(context.Background(), s.ControlPlane.Client); err != nil {
		return err
	}
	if s.KCM, err = StartKCM(s.BinDir, s.ControlPlane.Kubeconfig, s.LogDir, charts.URL, s.Proxy); err != nil {
		return err
	}
	s.progress("KCM %s started with its Management, Release and stand-in components (log %s)", KCMVersion,
		s.KCM.LogPath)
	return nil
}

// KCMWait bounds the wait for KCM to deploy its Management's components (Session.WaitKCM).
const KCMWait = 3 * time.Minute

// WaitKCM waits until the session's KCM reports its Management's components deployed (WaitKCM). Errors: KCM is not
// on (SessionOptions.KCM), and those of WaitKCM.
func (s *Session) WaitKCM(ctx context.Context) error {
	if s.KCM == nil {
		return errors.New("KCM does not run in this session (SessionOptions.KCM is off)")
	}
	return WaitKCM(ctx, s.ControlPlane.Client, KCMWait, s.KCM)
}

// Close stops KCM, the Flux controllers, the proxy, the chart repository and the control plane, whichever run. It
// returns every stop error.
func (s *Session) Close() error {
	var errs []error
	if s.KCM != nil {
		errs = append(errs, s.KCM.Stop())
	}
	if s.Flux != nil {
		errs = append(errs, s.Flux.Stop())
	}
	if s.Proxy != nil {
		errs = append(errs, s.Proxy.Stop())
	}
	if s.Charts != nil {
		errs = append(errs, s.Charts.Stop())
	}
	if s.ControlPlane != nil {
		errs = append(errs, s.ControlPlane.Stop())
	}
	return errors.Join(errs...)
}

// EnvironmentCRDGroups are the API groups whose CRDs the control plane serves in place of a release
// EnvironmentValues turns off (the VictoriaMetrics operator's). LiveClusters returns those CRDs, so the fleet render
// of an installation counts them among the management cluster's APIs, as it would on a cluster where that
// operator was installed beforehand.
func EnvironmentCRDGroups() []string { return []string{"operator.victoriametrics.com"} }

// EnvironmentValues are the umbrella values every demo and e2e install adds to the scenario's (the scenario's own
// values and the caller's extra values win): KOF's HelmRepository points at the session's chart repository,
// Flux's readiness waits are off (no kubelet runs Pods here, so no object would ever become ready), and the
// VictoriaMetrics operator's release is off (its chart needs the internet; the control plane serves its CRDs, and
// kof-mothership would otherwise wait for it forever through dependsOn).
func (s *Session) EnvironmentValues() map[string]any {
	return map[string]any{
		"global":                    map[string]any{"helmRepo": map[string]any{"kofManaged": map[string]any{"url": s.Charts.URL}}},
		"flux":                      map[string]any{"wait": false},
		"victoria-metrics-operator": map[string]any{"enabled": false},
	}
}

// Installation is KOF installed from one scenario on a Session: the umbrella release, the components Flux
// installed, the operator process and the scenario's clusters.
type Installation struct {
	Session  *Session
	Scenario *Scenario
	// Release is the umbrella's current Helm release.
	Release *release.Release
	// Releases are the HelmReleases as Flux last reported them, in install order.
	Releases []FluxRelease
	// Values are the umbrella values last installed beyond the scenario's file (EnvironmentValues and the
	// caller's extra values).
	Values map[string]any
	// Operator is the running kof-operator, nil before it starts and after the Deployment is gone.
	Operator *Operator

	source      Source
	operatorCmd []string
	starts      int
}

// Source says where an installation's charts come from; the zero value means the repository's charts/ folder.
type Source struct {
	// ChartsDir holds the umbrella and component charts (`<ChartsDir>/<chart>`) that the umbrella install and the
	// fleet render read, e.g. charts pulled from a release registry; "" means `<Root>/charts`.
	ChartsDir string
	// Umbrella installs or upgrades the umbrella release `kof` in namespace `kof` with values (the scenario's and
	// the extra values merged) and returns the deployed release, e.g. `helm upgrade --install` of an `oci://`
	// chart; nil means a Helm SDK install of `<ChartsDir>/kof`.
	Umbrella func(ctx context.Context, values map[string]any) (*release.Release, error)
	// OperatorBinary is the kof-operator the installation runs (e.g. an earlier release's, built from its commit);
	// "" means the session's.
	OperatorBinary string
}

// operatorBinary returns the kof-operator binary of the installation's source.
func (in *Installation) operatorBinary() string {
	if in.source.OperatorBinary != "" {
		return in.source.OperatorBinary
	}
	return in.Session.OperatorBinary
}

// UpgradeFrom switches the installation to src (another release's charts, umbrella install and operator) and
// runs Upgrade: the operator process restarts when its binary or its Deployment's command changes, as a rollout of
// a new image would.
func (in *Installation) UpgradeFrom(ctx context.Context, extra map[string]any, src Source) (*release.Release, error) {
	in.source = src
	return in.Upgrade(ctx, extra)
}

// ChartsDir returns the folder of the installation's charts: its Source's, else the repository's charts/.
func (in *Installation) ChartsDir() string { return in.chartsDir() }

func (in *Installation) chartsDir() string {
	if in.source.ChartsDir != "" {
		return in.source.ChartsDir
	}
	return filepath.Join(in.Session.Root, "charts")
}

// Install installs KOF from sc on the session: namespaces `kcm-system` and `kof` (with the labels of the scenario's
// namespace.yaml), `helm install kof charts/kof` with EnvironmentValues, the scenario's values and then extra (deep
// merge), Flux's install of every HelmRelease, the kof-operator started from the live kof-mothership Deployment, and the
// scenario's ClusterTemplates and ClusterDeployments created with strict field validation. On error the
// installation so far is returned with it, so the caller can stop its operator.
func (s *Session) Install(ctx context.Context, sc *Scenario, extra map[string]any) (*Installation, error) {
	return s.InstallFrom(ctx, sc, extra, Source{})
}

// InstallFrom is Install with the umbrella taken from src (see Source). Flux installs the components from the chart
// repository the umbrella values name (global.helmRepo.kofManaged.url: the session's repository unless extra names
// another, such as a release registry).
func (s *Session) InstallFrom(ctx context.Context, sc *Scenario, extra map[string]any, src Source) (*Installation,
	error) {
	in := &Installation{Session: s, Scenario: sc, source: src}
	var nsLabels map[string]string
	if sc.Namespace != nil {
		nsLabels = sc.Namespace.GetLabels()
	}
	if err := ensureNamespace(ctx, s.ControlPlane.Client, KCMNamespace, nil); err != nil {
		return in, err
	}
	if err := ensureNamespace(ctx, s.ControlPlane.Client, UmbrellaNamespace, nsLabels); err != nil {
		return in, err
	}
	s.progress("namespaces %s and %s ready", KCMNamespace, UmbrellaNamespace)
	if _, err := in.Upgrade(ctx, extra); err != nil {
		return in, err
	}
	for _, obj := range sc.Clusters {
		if filled := CompleteClusterTemplate(obj); len(filled) > 0 {
			s.progress("ClusterTemplate %s/%s: filled fields the KCM CRD requires and the scenario leaves out: %s",
				obj.GetNamespace(), obj.GetName(), strings.Join(filled, ", "))
		}
		if err := CreateStrict(ctx, s.ControlPlane.Client, obj); err != nil {
			return in, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	s.progress("applied %d ClusterTemplate(s) and %d ClusterDeployment(s) from %s",
		countKind(sc.Clusters, KindClusterTemplate), countKind(sc.Clusters, KindClusterDeployment), sc.ClustersFile)
	return in, nil
}

// Upgrade runs `helm upgrade --install kof charts/kof` (or the Source's Umbrella) with EnvironmentValues, the
// scenario's values and then extra, waits until Flux reports every KOF HelmRelease Ready for its new generation, and
// (re)starts the kof-operator when its Deployment is new or its command changed, as a rollout would. It returns the
// umbrella release; errors name the step.
func (in *Installation) Upgrade(ctx context.Context, extra map[string]any) (*release.Release, error) {
	s := in.Session
	in.Values = withEnvironment(s.EnvironmentValues(), extra)
	vals, err := render.UserValues(render.Options{ValuesFiles: []string{in.Scenario.ValuesFile}, Values: in.Values})
	if err != nil {
		return nil, fmt.Errorf("scenario %s values: %w", in.Scenario.Name, err)
	}
	var rel *release.Release
	if in.source.Umbrella != nil {
		rel, err = in.source.Umbrella(ctx, vals)
	} else {
		rel, err = s.Helm.Install(ctx, Release{Name: UmbrellaRelease, Namespace: UmbrellaNamespace,
			ChartDir: filepath.Join(in.chartsDir(), UmbrellaChart), Values: vals})
	}
	if err != nil {
		return nil, err
	}
	in.Release = rel
	s.progress("helm: release %s/%s revision %d %s (%s)", rel.Namespace, rel.Name, rel.Version, rel.Info.Status,
		rel.Chart.Metadata.Version)
	kofRepo := s.Charts.URL
	if u, ok, _ := unstructured.NestedString(vals, "global", "helmRepo", "kofManaged", "url"); ok && u != "" {
		kofRepo = u
	}
	in.Releases, err = s.WaitFlux(ctx, FluxWait, kofRepo)
	if err != nil {
		return rel, err
	}
	for _, r := range in.Releases {
		if !r.Local {
			s.progress("flux: %s", r)
			continue
		}
		s.progress("flux: HelmRelease %s: Helm release %s/%s revision %d, Ready", r.HelmRelease, r.Namespace, r.Name,
			r.Revision)
	}
	return rel, in.syncOperator(ctx)
}

// OperatorWait bounds the wait for the kof-operator Deployment's pods on a node after an install or upgrade.
const OperatorWait = 3 * time.Minute

// syncOperator starts, restarts or stops the operator process to match the kof-mothership Deployment; on a node it
// waits until the Deployment's pods are available instead.
func (in *Installation) syncOperator(ctx context.Context) error {
	s := in.Session
	if s.node != nil {
		dep, err := WaitDeploymentAvailable(ctx, s.ControlPlane.Client, UmbrellaNamespace,
			kofv1.OperatorDeploymentLabels(), OperatorWait)
		if err != nil {
			return err
		}
		s.progress("kof-operator Deployment %s/%s: %d pods available on the node", dep.Namespace, dep.Name,
			dep.Status.AvailableReplicas)
		return nil
	}
	dep, err := findOperatorDeployment(ctx, s.ControlPlane.Client)
	if err != nil {
		return err
	}
	if dep == nil {
		if in.Operator != nil {
			s.progress("kof-operator Deployment is gone: stopping the operator process")
			err := in.Operator.Stop()
			in.Operator, in.operatorCmd = nil, nil
			return err
		}
		return errors.New("no kof-operator Deployment (labels app.kubernetes.io/name=kof-mothership, " +
			"app.kubernetes.io/component=operator) after installing kof-mothership")
	}
	env, args, err := OperatorCommand(dep)
	if err != nil {
		return err
	}
	cmd := append(append([]string{in.operatorBinary()}, env...), args...)
	if in.Operator != nil && reflect.DeepEqual(cmd, in.operatorCmd) {
		return nil
	}
	if in.Operator != nil {
		s.progress("kof-operator Deployment changed: restarting the operator process")
		if err := in.Operator.Stop(); err != nil {
			return err
		}
	}
	in.starts++
	log := filepath.Join(s.LogDir, fmt.Sprintf("kof-operator-%s-%d.log", in.Scenario.Name, in.starts))
	op, err := StartOperator(in.operatorBinary(), s.ControlPlane.Kubeconfig, dep, log)
	if err != nil {
		return err
	}
	in.Operator, in.operatorCmd = op, cmd
	s.progress("kof-operator started with the environment of Deployment %s/%s (%d variables; log %s)",
		dep.Namespace, dep.Name, len(env), log)
	return nil
}

// findOperatorDeployment returns the kof-operator Deployment rendered by kof-mothership, nil when there is none.
func findOperatorDeployment(ctx context.Context, c client.Client) (*appsv1.Deployment, error) {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.MatchingLabels(kofv1.OperatorDeploymentLabels())); err != nil {
		return nil, fmt.Errorf("list kof-operator Deployments: %w", err)
	}
	switch len(list.Items) {
	case 0:
		return nil, nil
	case 1:
		return &list.Items[0], nil
	}
	return nil, fmt.Errorf("%d kof-operator Deployments; install KOF once per management cluster", len(list.Items))
}

// Uninstall runs `helm uninstall kof`, waits until helm-controller has uninstalled the release of every HelmRelease
// that went with it, and stops the operator process once its Deployment is gone. It returns every error met.
func (in *Installation) Uninstall(ctx context.Context) error {
	s := in.Session
	if err := s.Helm.Uninstall(UmbrellaRelease, UmbrellaNamespace); err != nil {
		return err
	}
	s.progress("helm: release %s/%s uninstalled", UmbrellaNamespace, UmbrellaRelease)
	var errs []error
	// Its HelmRelease went with the umbrella, so the operator's Deployment is deleted first of the kof-mothership
	// release (Helm's uninstall order): stop the process before helm-controller removes the rest, as its Pods would
	// go.
	if in.Operator != nil {
		s.progress("kof-operator's HelmRelease is gone: stopping the operator process before its release is removed")
		errs = append(errs, in.Operator.Stop())
		in.Operator, in.operatorCmd = nil, nil
	}
	errs = append(errs, s.WaitFluxGone(ctx, FluxWait))
	errs = append(errs, in.syncOperatorGone(ctx))
	return errors.Join(errs...)
}

func (in *Installation) syncOperatorGone(ctx context.Context) error {
	dep, err := findOperatorDeployment(ctx, in.Session.ControlPlane.Client)
	if err != nil {
		return err
	}
	if dep != nil {
		return fmt.Errorf("kof-operator Deployment %s/%s still exists after uninstall", dep.Namespace, dep.Name)
	}
	return in.Stop()
}

// Stop stops the operator process, if it runs. It returns the process's stop error.
func (in *Installation) Stop() error {
	if in.Operator == nil {
		return nil
	}
	err := in.Operator.Stop()
	in.Operator = nil
	return err
}

// OperatorObjects returns the ConfigMaps and Secrets the kof-operator made (label app.kubernetes.io/managed-by:
// kof-operator), server-side fields removed, in namespace/name order within each kind: the live operator outputs
// the fleet render reads as templateResourceRefs.
func (in *Installation) OperatorObjects(ctx context.Context) ([]*unstructured.Unstructured, error) {
	c := in.Session.ControlPlane.Client
	sel := client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}
	var out []*unstructured.Unstructured
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, sel); err != nil {
		return nil, fmt.Errorf("list operator ConfigMaps: %w", err)
	}
	for i := range cms.Items {
		o, err := toUnstructured(&cms.Items[i], "ConfigMap")
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, sel); err != nil {
		return nil, fmt.Errorf("list operator Secrets: %w", err)
	}
	for i := range secrets.Items {
		o, err := toUnstructured(&secrets.Items[i], "Secret")
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// LiveClusters returns the CRDs of EnvironmentCRDGroups, the ClusterTemplates and the ClusterDeployments as the API
// server holds them now (the operator may have labelled them), server-side fields removed.
func (in *Installation) LiveClusters(ctx context.Context) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	crds := &unstructured.UnstructuredList{}
	crds.SetAPIVersion("apiextensions.k8s.io/v1")
	crds.SetKind("CustomResourceDefinitionList")
	if err := in.Session.ControlPlane.Client.List(ctx, crds); err != nil {
		return nil, fmt.Errorf("list CustomResourceDefinitions: %w", err)
	}
	for i := range crds.Items {
		if g, _, _ := unstructured.NestedString(crds.Items[i].Object, "spec", "group"); slices.Contains(EnvironmentCRDGroups(), g) {
			o := crds.Items[i].DeepCopy()
			clean(o)
			out = append(out, o)
		}
	}
	for _, kind := range []string{KindClusterTemplate, KindClusterDeployment} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(kcmAPIVersion)
		list.SetKind(kind + "List")
		if err := in.Session.ControlPlane.Client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list %ss: %w", kind, err)
		}
		for i := range list.Items {
			o := list.Items[i].DeepCopy()
			clean(o)
			out = append(out, o)
		}
	}
	return out, nil
}

// LiveNamespace returns the umbrella namespace as the API server holds it, server-side fields removed.
func (in *Installation) LiveNamespace(ctx context.Context) (*unstructured.Unstructured, error) {
	var ns corev1.Namespace
	if err := in.Session.ControlPlane.Client.Get(ctx, client.ObjectKey{Name: UmbrellaNamespace}, &ns); err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", UmbrellaNamespace, err)
	}
	return toUnstructured(&ns, "Namespace")
}

func toUnstructured(obj client.Object, kind string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	clean(u)
	return u, nil
}

// clean removes the fields the API server adds, so objects read back look like objects a user wrote.
func clean(u *unstructured.Unstructured) {
	u.SetManagedFields(nil)
	u.SetResourceVersion("")
	u.SetUID("")
	u.SetGeneration(0)
	u.SetCreationTimestamp(metav1.Time{})
	for k := range u.GetAnnotations() {
		if strings.HasPrefix(k, "kubectl.kubernetes.io/") {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations", k)
		}
	}
}

// Values CompleteClusterTemplate fills in: KCM's own template repository and Flux's usual chart interval.
const (
	kcmTemplatesRepository = "kcm-templates"
	chartInterval          = "10m"
)

// CompleteClusterTemplate fills spec.helm.chartSpec.sourceRef and .interval of a ClusterTemplate when they are
// missing (the KCM v1.10.0 CRD requires both; scenario files often carry only chart and version, which is all KOF
// reads), and status.valid when a status without it is given (KCM's controller would set it), and returns the
// paths it filled. Other kinds are left alone.
func CompleteClusterTemplate(obj *unstructured.Unstructured) []string {
	if obj.GetKind() != KindClusterTemplate {
		return nil
	}
	spec, found, _ := unstructured.NestedMap(obj.Object, "spec", "helm", "chartSpec")
	if !found {
		return nil
	}
	var filled []string
	if _, ok := spec["sourceRef"]; !ok {
		spec["sourceRef"] = map[string]any{"kind": "HelmRepository", "name": kcmTemplatesRepository}
		filled = append(filled, "spec.helm.chartSpec.sourceRef")
	}
	if _, ok := spec["interval"]; !ok {
		spec["interval"] = chartInterval
		filled = append(filled, "spec.helm.chartSpec.interval")
	}
	if len(filled) > 0 {
		_ = unstructured.SetNestedMap(obj.Object, spec, "spec", "helm", "chartSpec")
	}
	// KCM's template controller reports a usable template as status.valid: true; the CRD requires the field.
	if status, ok, _ := unstructured.NestedMap(obj.Object, "status"); ok {
		if _, has := status["valid"]; !has {
			status["valid"] = true
			_ = unstructured.SetNestedMap(obj.Object, status, "status")
			filled = append(filled, "status.valid")
		}
	}
	return filled
}

// withEnvironment returns env deep-merged under extra: a key extra sets wins.
func withEnvironment(env, extra map[string]any) map[string]any {
	return chartutil.CoalesceTables(deepCopy(extra), deepCopy(env))
}

// deepCopy copies the maps of a values map (leaves are shared; nil becomes an empty map).
func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopy(sub)
		}
		out[k] = v
	}
	return out
}
