// Package manager holds what the kof-operator's manager is made of: the informer cache limits, the controller
// options (workers per controller) and the registration of every controller and runnable. operator/cmd/kof-operator
// and the scale benchmark (operator/internal/scale) both build the operator from it, so the benchmark measures the
// operator as it ships.
package manager

import (
	"fmt"
	"runtime/debug"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/controller/clusterdeployment"
	"kof.dev/kof/operator/internal/controller/promxyservergroup"
	"kof.dev/kof/operator/internal/controller/regional"
	"kof.dev/kof/operator/internal/controller/rules"
	"kof.dev/kof/operator/internal/controller/vmstorageconnection"
	"kof.dev/kof/operator/promxy"
	"kof.dev/kof/operator/vmapi"
)

// DefaultWorkers is the number of concurrent reconciles per controller when the `--workers` flag is not given
// (kof-mothership value operator.workers; sizing in docs/ha.md).
const DefaultWorkers = 4

// CacheOptions limits the informer cache: Secrets, VMUsers and MultiClusterServices to those the operator labelled
// (objects of earlier releases are read directly from the API server), and, when KOF_WATCH_NAMESPACES is set, every
// namespaced kind to config.WatchScope (those namespaces plus the release and KCM namespaces). Of the managedFields
// the cache keeps only the operator's own entries (KeepOwnManagedFields): operator/internal/apply compares against
// what the operator owns and reads nothing else of them.
func CacheOptions(cfg config.Config) cache.Options {
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{kofv1.ManagedByLabel: kofv1.ManagedBy})}
	opts := cache.Options{DefaultTransform: KeepOwnManagedFields, ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}:             ours,
		&vmapi.VMUser{}:              ours,
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

// KeepOwnManagedFields is the cache's transform: it drops every managedFields entry of obj but those of the
// operator's field manager (kofv1.FieldManager), which is all the operator reads of them; the entries of KCM, Helm
// or users are often larger than the object. It returns obj, or a non-object input unchanged.
func KeepOwnManagedFields(in any) (any, error) {
	obj, ok := in.(metav1.Object)
	if !ok {
		return in, nil
	}
	mf := obj.GetManagedFields()
	kept := mf[:0:0]
	for _, e := range mf {
		if e.Manager == kofv1.FieldManager {
			kept = append(kept, e)
		}
	}
	if len(kept) != len(mf) {
		if len(kept) == 0 {
			kept = nil
		}
		obj.SetManagedFields(kept)
	}
	return in, nil
}

// ControllerOptions returns the options every controller of the manager gets: workers concurrent reconciles each
// (controller-runtime's MaxConcurrentReconciles; one key is never reconciled by two workers at once). It returns an
// error naming the `--workers` flag when workers is below 1.
func ControllerOptions(workers int) (ctrlconfig.Controller, error) {
	if workers < 1 {
		return ctrlconfig.Controller{}, fmt.Errorf("--workers=%d: need at least 1 concurrent reconcile per controller; "+
			"set the kof-mothership value operator.workers to 1 or more", workers)
	}
	return ctrlconfig.Controller{MaxConcurrentReconciles: workers}, nil
}

// DefaultGCPercent is the Go garbage collector's target heap growth the kof-operator runs with when the
// `--gc-percent` flag is not given (kof-mothership value operator.gcPercent): the heap may grow to 1.35 times what is
// live before a collection, instead of Go's default of 2 times. The operator waits on the API server, not on its own
// CPU, so collecting more often costs little time; at 1,000 clusters it keeps the peak resident memory under 100 MB
// (docs/ha.md: 35 measured the best of 30, 35, 40 and 100 for memory within the time target).
const DefaultGCPercent = 35

// SetGCPercent sets the garbage collector's target heap growth to percent (`--gc-percent`); 0 leaves the Go
// runtime's own setting (the GOGC environment variable, else 100). It returns an error naming the flag and the chart
// value when percent is negative.
func SetGCPercent(percent int) error {
	switch {
	case percent < 0:
		return fmt.Errorf("--gc-percent=%d: need 0 (the Go runtime's GOGC) or a positive percentage; set the "+
			"kof-mothership value operator.gcPercent accordingly", percent)
	case percent > 0:
		debug.SetGCPercent(percent)
	}
	return nil
}

// Default client limits of the kof-operator's API server client (`--kube-api-qps`, `--kube-api-burst`). client-go's
// own defaults (5 requests per second, burst 10; controller-runtime's 20 and 30) throttle a fleet of hundreds of
// clusters far below what the API server serves; docs/ha.md gives the sizing.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// WithClientLimits takes the API server client configuration rc and the request rate limits qps (requests per
// second) and burst, and returns a copy with those limits. It returns an error naming the flag when qps is not
// positive or burst is below 1 or below qps.
func WithClientLimits(rc *rest.Config, qps float64, burst int) (*rest.Config, error) {
	switch {
	case qps <= 0:
		return nil, fmt.Errorf("--kube-api-qps=%g: need a positive request rate; set the kof-mothership value "+
			"operator.kubeAPI.qps above 0", qps)
	case burst < 1 || float64(burst) < qps:
		return nil, fmt.Errorf("--kube-api-burst=%d: need at least 1 and at least --kube-api-qps (%g); set the "+
			"kof-mothership value operator.kubeAPI.burst accordingly", burst, qps)
	}
	out := rest.CopyConfig(rc)
	out.QPS, out.Burst = float32(qps), burst
	return out, nil
}

// Setup registers every controller of the operator and, in regionless mode, the regionless ConfigMap runnable with
// mgr; the error names the one that failed.
func Setup(mgr ctrl.Manager, cfg config.Config) error {
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
