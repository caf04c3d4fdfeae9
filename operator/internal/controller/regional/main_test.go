package regional

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"kof.dev/kof/internal/testproc"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/testenv"
)

var (
	env *testenv.Env
	rec *Reconciler
)

// testConfig is the shared test configuration in regionless mode.
func testConfig() config.Config {
	cfg := testenv.OperatorConfig()
	cfg.Regionless, cfg.RegionlessDomain = true, "mothership.kof.example.com"
	return cfg
}

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env, setup)) }

// setup starts a manager with the Reconciler and the Regionless runnable on e and creates the test namespaces; the
// cleanup it returns stops the manager.
func setup(e *testenv.Env) (func(), error) {
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme: e.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})},
		}},
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
	if err := mgr.Add(&Regionless{Client: mgr.GetClient(), Cache: mgr.GetCache(), Config: testConfig()}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, ns := range []string{"kcm-system", "kof", "ns1", "ns2", "ns-legacy"} {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return cancel, nil
}

// eventually waits up to 60 s for f to return nil (testproc.Eventually) and fails the test with f's last error.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	testproc.Eventually(t, 60*time.Second, "condition", func(context.Context) error { return f() })
}

func get(o client.Object) error {
	return env.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o)
}

func gone(o client.Object) error {
	err := get(o)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%T %s still exists", o, client.ObjectKeyFromObject(o))
}
