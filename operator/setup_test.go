package operator

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/cacheconfig"
	"kof.dev/kof/operator/internal/manager"
	"kof.dev/kof/operator/internal/testenv"
)

// TestSetupAllControllers registers every controller and the regionless runnable with a manager on a real API
// server and runs it briefly: a controller whose required fields main forgets fails here.
func TestSetupAllControllers(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{
			config.EnvReleaseNamespace: "kof", config.EnvReleaseName: "kof-mothership",
			config.EnvRegionlessEnabled: "true", config.EnvRegionlessDomain: "mothership.example.com",
			config.EnvPropagationTemplate: "kof-propagation-2-0-0",
			config.EnvVTClusterName:       "kof-traces", config.EnvVLClusterName: "kof-logs",
			config.EnvVMInsertURL: "http://vminsert:8480", config.EnvVMSelectURL: "http://vmselect:8481",
			config.EnvVLInsertURL: "http://vlinsert:9481", config.EnvVLSelectURL: "http://vlselect:9471",
			config.EnvVLAuditInsertURL: "http://vlinsert-audit:9481", config.EnvVLAuditSelectURL: "http://vlselect-audit:9471",
			config.EnvVTInsertURL: "http://vtinsert:10481", config.EnvVTSelectURL: "http://vtselect:10471",
			config.EnvPromxyPodSelector: "app.kubernetes.io/name=promxy", config.EnvPromxySecretName: "promxy-config",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Cache: cacheconfig.Options(cfg),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := manager.Setup(mgr, cfg); err != nil {
		t.Fatalf("setup: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := mgr.Start(ctx); err != nil {
		t.Fatalf("manager stopped with an error: %v", err)
	}
}
