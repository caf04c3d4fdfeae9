// Command kof-operator runs KOF's controllers on the management cluster: ClusterDeployment, regional ConfigMap,
// PromxyServerGroup, rules and VMStorageConnection, plus the regionless ConfigMap runnable when regionless mode is
// on. Configuration comes from the environment (operator/config); flags only set the manager's endpoints and
// leader election.
package main

import (
	"flag"
	"fmt"
	"os"

	// CA roots for TLS when the image has no CA files (KOF images hold only the binary; docs/release.md).
	_ "golang.org/x/crypto/x509roots/fallback"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/controller/clusterdeployment"
	"kof.dev/kof/operator/internal/controller/promxyservergroup"
	"kof.dev/kof/operator/internal/controller/regional"
	"kof.dev/kof/operator/internal/controller/rules"
	"kof.dev/kof/operator/internal/controller/vmstorageconnection"
	"kof.dev/kof/operator/internal/scheme"
	"kof.dev/kof/operator/promxy"
)

// leaderElectionID is the Lease name the operator replicas compete for.
const leaderElectionID = "kof-operator.k0rdent.mirantis.com"

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kof-operator:", err)
		os.Exit(1)
	}
}

// cacheOptions limits the informer cache: Secrets, VMUsers and MultiClusterServices to those the operator labelled
// (objects of earlier releases are read directly from the API server), and, when KOF_WATCH_NAMESPACES is set, every
// namespaced kind to config.WatchScope (those namespaces plus the release and KCM namespaces). The cache keeps
// managedFields: operator/internal/apply compares against what the operator owns.
func cacheOptions(cfg config.Config) cache.Options {
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})}
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}:             ours,
		&vmv1beta1.VMUser{}:          ours,
		&kcmv1.MultiClusterService{}: ours,
	}}
	if scope := cfg.WatchScope(); scope != nil {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range scope {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

func run() error {
	var metricsAddr, probeAddr string
	var leaderElect bool
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	flag.BoolVar(&leaderElect, "leader-elect", true, "elect one active replica")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	cfg, err := config.Load(os.Getenv)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	s, err := scheme.New()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  s,
		Metrics:                 metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:  probeAddr,
		LeaderElection:          leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: cfg.ReleaseNamespace,
		Cache:                   cacheOptions(cfg),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := setup(mgr, cfg); err != nil {
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

// setup registers every controller and runnable with mgr; the error names the one that failed.
func setup(mgr ctrl.Manager, cfg config.Config) error {
	rec := func(name string) events.EventRecorder { return mgr.GetEventRecorder(name) }
	type registrar interface{ SetupWithManager(ctrl.Manager) error }
	controllers := []struct {
		name string
		r    registrar
	}{
		{clusterdeployment.Name, &clusterdeployment.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Config: cfg, Recorder: rec(clusterdeployment.Name)}},
		{regional.Name, &regional.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: cfg,
			Recorder: rec(regional.Name)}},
		{"kof-promxyservergroup", &promxyservergroup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder:  rec("kof-promxyservergroup"),
			Namespace: cfg.ReleaseNamespace, PodSelector: cfg.PromxyPodSelector,
			Options: promxy.Options{AlertmanagerURL: cfg.PromxyAlertmanagerURL, RemoteWriteURL: cfg.PromxyRemoteWriteURL}}},
		{"kof-rules", &rules.Reconciler{Client: mgr.GetClient(), Recorder: rec("kof-rules"),
			Namespace: cfg.ReleaseNamespace, RulesConfigMap: cfg.PromxyRulesConfigMap}},
		{"kof-vmstorageconnection", &vmstorageconnection.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: rec("kof-vmstorageconnection")}},
	}
	for _, c := range controllers {
		if err := c.r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up controller %s: %w", c.name, err)
		}
	}
	if cfg.Regionless {
		if err := mgr.Add(&regional.Regionless{Client: mgr.GetClient(), Cache: mgr.GetCache(), Config: cfg}); err != nil {
			return fmt.Errorf("add regionless runnable: %w", err)
		}
	}
	return nil
}
