// Package operator is the kof-operator program, whose main is cmd/kof-operator: KOF's controllers on the management
// cluster (ClusterDeployment, regional ConfigMap, PromxyServerGroup, rules and VMStorageConnection, plus the
// regionless ConfigMap runnable when regionless mode is on; operator/internal/manager). Configuration comes from the
// environment (operator/config); flags only set the manager's endpoints, leader election, workers per controller,
// API client limits (--kube-api-qps, --kube-api-burst) and the garbage collector's target (--gc-percent).
package operator

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/cacheconfig"
	"kof.dev/kof/operator/internal/manager"
	"kof.dev/kof/operator/internal/scheme"
)

// leaderElectionID is the Lease name the operator replicas compete for.
const leaderElectionID = "kof-operator.k0rdent.mirantis.com"

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Run parses the command line, loads the configuration from the environment, registers every controller with a
// manager and runs it until a termination signal.
func Run() error {
	var metricsAddr, probeAddr string
	var leaderElect bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	var workers int
	flag.BoolVar(&leaderElect, "leader-elect", true, "elect one active replica")
	flag.IntVar(&workers, "workers", manager.DefaultWorkers, "concurrent reconciles per controller")
	var qps float64
	var burst int
	flag.Float64Var(&qps, "kube-api-qps", manager.DefaultQPS, "requests per second to the API server")
	flag.IntVar(&burst, "kube-api-burst", manager.DefaultBurst, "request burst to the API server")
	var gcPercent int
	flag.IntVar(&gcPercent, "gc-percent", manager.DefaultGCPercent,
		"garbage collector target heap growth in percent; 0 keeps the Go runtime's (GOGC)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	// The flags first: a bad flag is reported even when the environment is incomplete too.
	if err := manager.SetGCPercent(gcPercent); err != nil {
		return err
	}
	ctrlOpts, err := manager.ControllerOptions(workers)
	if err != nil {
		return err
	}
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	rc, err := manager.WithClientLimits(ctrl.GetConfigOrDie(), qps, burst)
	if err != nil {
		return err
	}
	s, err := scheme.New()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme:                  s,
		MapperProvider:          manager.NewRESTMapper,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: cfg.ReleaseNamespace,
		Cache:                   cacheconfig.Options(cfg),
		Controller:              ctrlOpts,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := manager.Setup(mgr, cfg); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}
