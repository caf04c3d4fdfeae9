package regional

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/outputs"
)

// resyncEvery is how often the Regionless runnable checks its ConfigMap besides reacting to its deletion.
const resyncEvery = 5 * time.Minute

// Regionless keeps the regionless ConfigMap `kof-<mgmt>` in the KCM namespace (labels role regional and
// `k0rdent.mirantis.com/kof-regionless: "true"`) as a leader-elected manager runnable: it writes it at start,
// recreates it when it is deleted, and re-checks it every few minutes, writing only when it differs.
type Regionless struct {
	Client client.Client
	Cache  cache.Cache
	Config config.Config
}

// NeedLeaderElection makes the runnable run on the leader only.
func (r *Regionless) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable; it returns when ctx ends, or with an error when the informer cannot be had.
func (r *Regionless) Start(ctx context.Context) error {
	desired := outputs.RegionlessConfigMap(r.Config)
	deleted := make(chan struct{}, 1)
	inf, err := r.Cache.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return fmt.Errorf("get configmap informer: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if o, ok := obj.(client.Object); ok && o.GetName() == desired.Name && o.GetNamespace() == desired.Namespace {
				select {
				case deleted <- struct{}{}:
				default:
				}
			}
		},
		UpdateFunc: func(_, obj any) {
			if o, ok := obj.(client.Object); ok && o.GetName() == desired.Name && o.GetNamespace() == desired.Namespace &&
				!o.GetDeletionTimestamp().IsZero() {
				select {
				case deleted <- struct{}{}:
				default:
				}
			}
		},
	}); err != nil {
		return fmt.Errorf("watch regionless configmap: %w", err)
	}
	a := apply.Applier{Reader: r.Client, Writer: r.Client}
	tick := time.NewTicker(resyncEvery)
	defer tick.Stop()
	logger := log.FromContext(ctx).WithName("regionless")
	for {
		if err := r.ensure(ctx, a, desired); err != nil {
			logger.Error(err, "keep regionless configmap", "name", desired.Name, "namespace", desired.Namespace)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deleted:
			// A ConfigMap being deleted waits for the regional controller's finalizer; the next tick or delete
			// event recreates it.
		case <-tick.C:
		}
	}
}

// ensure applies desired unless it exists as desired or is being deleted.
func (r *Regionless) ensure(ctx context.Context, a apply.Applier, desired *corev1.ConfigMap) error {
	var cur corev1.ConfigMap
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), &cur); err == nil && !cur.DeletionTimestamp.IsZero() {
		return nil
	}
	_, err := a.Apply(ctx, desired.DeepCopy())
	return err
}
