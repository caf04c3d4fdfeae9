// Package manager holds what the kof-operator's manager is made of, besides the cache options of
// operator/internal/cacheconfig: the GC percent, the REST mapper, the API client limits, the controller options
// (workers per controller) and the registration of every controller and runnable. The program (package operator,
// operator.RunWith) builds the operator from it; the scale benchmark (operator/internal/scale) runs that program
// with the chart's args and env, so it measures the operator as it ships.
package manager

import (
	"fmt"
	"runtime/debug"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/controller/clusterdeployment"
	"kof.dev/kof/operator/internal/controller/promxyservergroup"
	"kof.dev/kof/operator/internal/controller/regional"
	"kof.dev/kof/operator/internal/controller/rules"
	"kof.dev/kof/operator/internal/controller/vmstorageconnection"
	"kof.dev/kof/operator/promxy"
)

// DefaultWorkers is the number of concurrent reconciles per controller when the `--workers` flag is not given
// (kof-mothership value operator.workers; sizing in docs/ha.md).
const DefaultWorkers = 4

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
// (docs/ha.md: of 30, 35 and 40, the lowest whose time to steady state stayed well within 1.5 times the floor's).
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

// Default client limits of the kof-operator's API server client (`--kube-api-qps`, `--kube-api-burst`). Each
// resource kind gets its own limit: controller-runtime's client makes one REST client per kind, each with a token
// bucket of these sizes. client-go's own defaults (5 requests per second, burst 10; controller-runtime's 20 and 30)
// throttle a fleet of hundreds of clusters far below what the API server serves, and so did 50 and 100 (each of the
// four kinds a child gets was written at 50 per second); docs/ha.md gives the sizing.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// WithClientLimits takes the API server client configuration rc and the request rate limits qps (requests per
// second, per resource kind) and burst, and returns a copy with those limits and with response compression off: the
// API server would gzip every watch event (kube-apiserver CPU, and a decompressor per watch stream in the
// operator) on a network where compression saves nothing that matters. It returns an error naming the flag when qps
// is not positive or burst is below 1 or below qps.
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
	out.DisableCompression = true
	return out, nil
}

// Setup registers every controller of the operator and, in regionless mode, the regionless ConfigMap runnable with
// mgr; the error names the one that failed.
func Setup(mgr ctrl.Manager, cfg config.Config) error {
	rec := func(name string) events.EventRecorder { return mgr.GetEventRecorder(name) }
	mw := apply.NewMetadataWriter(mgr.GetConfig(), mgr.GetRESTMapper())
	type registrar interface{ SetupWithManager(ctrl.Manager) error }
	controllers := []struct {
		name string
		r    registrar
	}{
		{clusterdeployment.Name, &clusterdeployment.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Config: cfg, Recorder: rec(clusterdeployment.Name), Metadata: mw}},
		{regional.Name, &regional.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Config: cfg,
			Recorder: rec(regional.Name), Metadata: mw}},
		{promxyservergroup.Name, &promxyservergroup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder:  rec(promxyservergroup.Name),
			Namespace: cfg.ReleaseNamespace, PodSelector: cfg.PromxyPodSelector,
			Options: promxy.Options{AlertmanagerURL: cfg.PromxyAlertmanagerURL, RemoteWriteURL: cfg.PromxyRemoteWriteURL}}},
		{rules.Name, &rules.Reconciler{Client: mgr.GetClient(), Recorder: rec(rules.Name),
			Namespace: cfg.ReleaseNamespace, RulesConfigMap: cfg.PromxyRulesConfigMap}},
		{vmstorageconnection.Name, &vmstorageconnection.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: rec(vmstorageconnection.Name)}},
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
