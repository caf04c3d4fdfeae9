package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/controller/clusterdeployment"
	"kof.dev/kof/operator/internal/controller/regional"
	"kof.dev/kof/operator/internal/testenv"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
)

var env *testenv.Env

// binDir holds the operator program the benchmark builds (counted).
var binDir string

// TestMain runs the package's tests against one control plane.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	var err error
	if binDir, err = os.MkdirTemp("", "kof-scale-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(binDir)
		os.Exit(1)
	}
	// The release and KCM namespaces: the promxy config Secret and the promxy rules ConfigMap are written there.
	for _, ns := range []string{testConfig().ReleaseNamespace, testConfig().KCMNamespace} {
		if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			_ = env.Stop()
			_ = os.RemoveAll(binDir)
			os.Exit(1)
		}
	}
	code := m.Run()
	_ = env.Stop()
	_ = os.RemoveAll(binDir)
	os.Exit(code)
}

func testConfig() config.Config { return testenv.OperatorConfig() }

// writeCounter counts the operator's API writes (POST, PUT, PATCH, DELETE), events excluded.
type writeCounter struct {
	next   http.RoundTripper
	writes *atomic.Int64
}

func (w writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && !strings.Contains(req.URL.Path, "/events") {
		w.writes.Add(1)
	}
	return w.next.RoundTrip(req)
}

// operator runs the ClusterDeployment and regional controllers in one manager whose writes are counted.
type operator struct {
	cd     *clusterdeployment.Reconciler
	reg    *regional.Reconciler
	writes atomic.Int64
	stop   context.CancelFunc
	done   sync.WaitGroup
}

func startOperator() (*operator, error) {
	op := &operator{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return writeCounter{next: rt, writes: &op.writes} }
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})},
		}},
		Controller: ctrlConfig(),
	})
	if err != nil {
		return nil, err
	}
	op.cd = &clusterdeployment.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: testConfig(),
		Recorder: mgr.GetEventRecorder(clusterdeployment.Name)}
	op.reg = &regional.Reconciler{Client: mgr.GetClient(), Config: testConfig(), Recorder: mgr.GetEventRecorder(regional.Name)}
	if err := op.cd.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := op.reg.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	op.stop = cancel
	op.done.Add(1)
	go func() {
		defer op.done.Done()
		_ = mgr.Start(ctx)
	}()
	return op, nil
}

// ctrlConfig runs four workers per controller and allows one manager per benchmark iteration.
func ctrlConfig() ctrlconfig.Controller {
	return ctrlconfig.Controller{MaxConcurrentReconciles: 4, SkipNameValidation: ptr.To(true)}
}

func chartSpec() *sourcev1.HelmChartSpec {
	return &sourcev1.HelmChartSpec{Chart: "aws-standalone-cp", Version: "1.0.0",
		SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: "HelmRepository", Name: "kof-repo"}}
}

func rawJSON(s string) *apiextv1.JSON { return &apiextv1.JSON{Raw: []byte(s)} }

func (op *operator) close() {
	op.stop()
	op.done.Wait()
}

// storageClusters creates the storage clusters the chart renders in the release namespace of cfg, as the chart
// ships them before any storage node is added: the logs and audit logs VLClusters and the traces VTCluster.
func storageClusters(ctx context.Context, cfg config.Config) error {
	objs := []client.Object{
		&vmapi.VLCluster{ObjectMeta: metav1.ObjectMeta{Namespace: cfg.ReleaseNamespace, Name: cfg.VLClusterName}},
		&vmapi.VLCluster{ObjectMeta: metav1.ObjectMeta{Namespace: cfg.ReleaseNamespace, Name: cfg.VLAuditClusterName}},
		&vmapi.VTCluster{ObjectMeta: metav1.ObjectMeta{Namespace: cfg.ReleaseNamespace, Name: cfg.VTClusterName}},
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("create %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// fleet creates regionals r0…r<nr-1> (aws, region i) and children c0…c<nc-1> spread over the regionals by region,
// every tenth one bound by label instead, in namespace ns.
func fleet(ctx context.Context, ns string, nr, nc int) error {
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	tpl := &kcmv1.ClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: ns}}
	tpl.Spec.Helm.ChartSpec = chartSpec()
	if err := env.Client.Create(ctx, tpl); err != nil {
		return err
	}
	tpl.Status.Providers = []string{"infrastructure-aws"}
	if err := env.Client.Status().Update(ctx, tpl); err != nil {
		return err
	}
	var objs []client.Object
	for i := range nr {
		objs = append(objs, cd(ns, "r"+strconv.Itoa(i), kofv1.RoleRegional, i, map[string]string{},
			map[string]string{kofv1.RegionalDomainAnnotation: fmt.Sprintf("r%d.example.com", i)}))
	}
	for i := range nc {
		l := map[string]string{kofv1.TenantLabel: "t" + strconv.Itoa(i%7)}
		if i%10 == 0 {
			l[kofv1.RegionalClusterNameLabel] = "r" + strconv.Itoa(i%nr)
		}
		objs = append(objs, cd(ns, "c"+strconv.Itoa(i), kofv1.RoleChild, i%nr, l, nil))
	}
	return createAll(ctx, objs)
}

func cd(ns, name, role string, region int, l, ann map[string]string) *kcmv1.ClusterDeployment {
	l[kofv1.ClusterRoleLabel] = role
	c := &kcmv1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l, Annotations: ann}}
	c.Spec.Template = "aws"
	c.Spec.Config = rawJSON(fmt.Sprintf(`{"region":"region-%d"}`, region))
	return c
}

// createAll creates objs with 8 parallel clients.
func createAll(ctx context.Context, objs []client.Object) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(objs))
	work := make(chan client.Object)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				if err := env.Client.Create(ctx, o); err != nil {
					errs <- fmt.Errorf("create %s: %w", o.GetName(), err)
				}
			}
		}()
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// resync reconciles every ClusterDeployment and regional ConfigMap of ns once, directly, and returns the writes it
// caused.
func resync(ctx context.Context, op *operator, ns string) (int64, error) {
	before := op.writes.Load()
	var cds kcmv1.ClusterDeploymentList
	if err := env.Client.List(ctx, &cds, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	for _, c := range cds.Items {
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: c.Name}}
		if _, err := op.cd.Reconcile(ctx, req); err != nil {
			return 0, err
		}
		if c.Labels[kofv1.ClusterRoleLabel] == kofv1.RoleRegional {
			req.Name = names.RegionalConfigMap(c.Name)
			if _, err := op.reg.Reconcile(ctx, req); err != nil {
				return 0, err
			}
		}
	}
	return op.writes.Load() - before, nil
}
