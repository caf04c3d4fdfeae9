// Package operator is the kof-operator program, whose main is cmd/kof-operator: KOF's controllers on the management
// cluster (ClusterDeployment, regional ConfigMap, PromxyServerGroup, rules and VMStorageConnection, plus the
// regionless ConfigMap runnable when regionless mode is on; operator/internal/manager). Configuration comes from the
// environment (operator/config); flags only set the manager's endpoints, leader election, workers per controller,
// API client limits (--kube-api-qps, --kube-api-burst) and the garbage collector's target (--gc-percent).
package operator

import (
	"context"
	"flag"
	"fmt"
	"net/http"
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

// Flags are the kof-operator's command-line flags. The kof-mothership chart passes each of them from its values
// (templates/operator-deployment.yaml); tests/charts/mgmt checks that the chart's defaults are these flags' defaults.
type Flags struct {
	// MetricsAddr is `--metrics-bind-address` (default `:8080`; chart value operator.metricsPort).
	MetricsAddr string
	// ProbeAddr is `--health-probe-bind-address` (default `:8081`; operator.healthPort).
	ProbeAddr string
	// LeaderElect is `--leader-elect` (default true; operator.leaderElection.enabled).
	LeaderElect bool
	// Workers is `--workers`, concurrent reconciles per controller (manager.DefaultWorkers; operator.workers).
	Workers int
	// QPS and Burst are `--kube-api-qps` and `--kube-api-burst` (manager.DefaultQPS, DefaultBurst;
	// operator.kubeAPI.qps and burst).
	QPS   float64
	Burst int
	// GCPercent is `--gc-percent` (manager.DefaultGCPercent; operator.gcPercent).
	GCPercent int
	// Zap are the logger's flags (`--zap-log-level`, ...).
	Zap zap.Options
}

// BindFlags registers the operator's flags with their defaults on fs and returns the Flags they are parsed into.
func BindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.MetricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to")
	fs.StringVar(&f.ProbeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	fs.BoolVar(&f.LeaderElect, "leader-elect", true, "elect one active replica")
	fs.IntVar(&f.Workers, "workers", manager.DefaultWorkers, "concurrent reconciles per controller")
	fs.Float64Var(&f.QPS, "kube-api-qps", manager.DefaultQPS, "requests per second to the API server, per resource kind")
	fs.IntVar(&f.Burst, "kube-api-burst", manager.DefaultBurst, "request burst to the API server, per resource kind")
	fs.IntVar(&f.GCPercent, "gc-percent", manager.DefaultGCPercent,
		"garbage collector target heap growth in percent; 0 keeps the Go runtime's (GOGC)")
	f.Zap.BindFlags(fs)
	return f
}

// Hooks let a program that runs the operator in-process observe it without changing what it does (the scale
// benchmark counts its API requests and reports its memory). The zero value observes nothing.
type Hooks struct {
	// WrapTransport, when set, wraps the transport of the API client (rest.Config.WrapTransport).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Manager, when set, is called with the manager once every controller is registered, before it starts; its
	// error stops Run.
	Manager func(ctrl.Manager) error
	// Context, when set, is the manager's lifetime instead of "until SIGTERM or SIGINT".
	Context context.Context
}

// Run parses the command line, loads the configuration from the environment, registers every controller with a
// manager and runs it until a termination signal.
func Run() error { return RunWith(flag.CommandLine, os.Args[1:], os.Getenv, Hooks{}) }

// RunWith is Run with the flags registered on fs and parsed from args, the environment read through getenv, and
// hooks. It returns the first error of the flags (named with their chart values), the environment (every problem
// at once), the manager's setup or its run.
func RunWith(fs *flag.FlagSet, args []string, getenv func(string) string, hooks Hooks) error {
	f := BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.Zap)))

	// The flags first: a bad flag is reported even when the environment is incomplete too.
	if err := manager.SetGCPercent(f.GCPercent); err != nil {
		return err
	}
	ctrlOpts, err := manager.ControllerOptions(f.Workers)
	if err != nil {
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	rc, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("API server configuration: %w", err)
	}
	if rc, err = manager.WithClientLimits(rc, f.QPS, f.Burst); err != nil {
		return err
	}
	rc.WrapTransport = hooks.WrapTransport
	s, err := scheme.New()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme:                  s,
		MapperProvider:          manager.NewRESTMapper,
		Metrics:                 metricsserver.Options{BindAddress: f.MetricsAddr},
		HealthProbeBindAddress:  f.ProbeAddr,
		LeaderElection:          f.LeaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: cfg.ReleaseNamespace,
		// The program ends as soon as the manager stops, so the Lease is given up at once and the next replica
		// (a rolling update's new pod) leads without waiting for it to expire.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheconfig.Options(cfg),
		Controller:                    ctrlOpts,
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
	if hooks.Manager != nil {
		if err := hooks.Manager(mgr); err != nil {
			return err
		}
	}
	ctx := hooks.Context
	if ctx == nil {
		ctx = ctrl.SetupSignalHandler()
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}
