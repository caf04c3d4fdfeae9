package clusterdeployment

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"kof.dev/kof/internal/testproc"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/cacheconfig"
	"kof.dev/kof/operator/internal/testenv"
)

// Shared by the tests of this package: one control plane, one manager running the controller.
var (
	env *testenv.Env
	rec *Reconciler
)

func testConfig() config.Config { return testenv.OperatorConfig() }

// testCacheOptions returns the cache options the operator ships with (operator/internal/cacheconfig).
func testCacheOptions() cache.Options { return cacheconfig.Options(testConfig()) }

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env, setup)) }

// setup starts a manager with the Reconciler on e (the shipped cache options) and creates the test namespaces and
// ClusterTemplates; the cleanup it returns stops the manager.
func setup(e *testenv.Env) (func(), error) {
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: testCacheOptions(),
	})
	if err != nil {
		return nil, err
	}
	// The applies go through the metadata writer, as kof-operator sends them (manager.Setup).
	rec = &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: testConfig(),
		Metadata: apply.NewMetadataWriter(e.Config, mgr.GetRESTMapper()),
		Recorder: mgr.GetEventRecorder(Name)}
	if err := rec.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	for _, ns := range []string{"kcm-system", "kof", "ns-a", "ns-b", "ns-legacy", "many"} {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			cancel()
			return nil, err
		}
	}
	for _, tpl := range [][2]string{{"aws-standalone-cp-1-0-0", "infrastructure-aws"},
		{"hetzner-cp-1-0-0", "infrastructure-hetzner"}} {
		if err := createTemplate(ctx, "kcm-system", tpl[0], tpl[1]); err != nil {
			cancel()
			return nil, err
		}
	}
	return cancel, nil
}

// createTemplate creates a ClusterTemplate whose status lists the given providers.
func createTemplate(ctx context.Context, ns, name string, providers ...string) error {
	t := &kcmv1.ClusterTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: kcmv1.ClusterTemplateSpec{Helm: kcmv1.HelmSpec{ChartSpec: &sourcev1.HelmChartSpec{
			Chart: "c", Version: "1.0.0", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: "HelmRepository", Name: "kof-repo"},
		}}},
	}
	if err := env.Client.Create(ctx, t); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	t.Status.Providers = providers
	if err := env.Client.Status().Update(ctx, t); err != nil {
		return fmt.Errorf("update template status: %w", err)
	}
	return nil
}

// newCD returns a ClusterDeployment; config "" leaves spec.config unset.
func newCD(ns, name, role, template, config string, lbls, ann map[string]string) *kcmv1.ClusterDeployment {
	l := map[string]string{}
	for k, v := range lbls {
		l[k] = v
	}
	if role != "" {
		l[kofv1.ClusterRoleLabel] = role
	}
	if template == "" {
		template = "absent-template" // required by the CRD; a missing template means an unknown cloud
	}
	cd := &kcmv1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l, Annotations: ann},
		Spec:       kcmv1.ClusterDeploymentSpec{Template: template},
	}
	if config != "" {
		cd.Spec.Config = &apiextv1.JSON{Raw: []byte(config)}
	}
	return cd
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// eventually waits up to 60 s for f to return nil (testproc.Eventually) and fails the test with f's last error.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	testproc.Eventually(t, 60*time.Second, "condition", func(context.Context) error { return f() })
}

// getCM returns the data of ConfigMap ns/name.
func getCM(ns, name string) (map[string]string, error) {
	var cm corev1.ConfigMap
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		return nil, err
	}
	return cm.Data, nil
}

// gone returns nil when obj no longer exists.
func gone(obj client.Object) error {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%T %s still exists", obj, client.ObjectKeyFromObject(obj))
}

// eventFor returns the notes of the events regarding the ClusterDeployment ns/name with the given reason.
func eventFor(ns, name, reason string) ([]string, error) {
	var list eventsv1.EventList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out, nil
}
