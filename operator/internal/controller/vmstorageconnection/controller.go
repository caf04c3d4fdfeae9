// Package vmstorageconnection is the controller that adds remote storage nodes to the select component of a
// VictoriaLogs (VLCluster) or VictoriaTraces (VTCluster) cluster, one VMStorageConnection per node.
//
// For each storage cluster it gathers every VMStorageConnection that references it (in namespace/name order) and
// sets the select component's `storageNode`, `storageNode.usernameFile`, `storageNode.passwordFile`,
// `storageNode.tls` and `storageNode.tlsInsecureSkipVerify` extraArgs and the `secrets` mounts by server-side apply,
// only when they differ (docs/contract.md, "CRDs"; VictoriaMetrics operator v0.74 VLCluster `spec.vlselect`, VTCluster
// `spec.select`). It watches the clusters, so a Helm upgrade that resets the args is repaired, and removes a
// connection's node through the finalizer `k0rdent.mirantis.com/vmstorageconnection`. Credentials Secrets in another
// namespace than the cluster are copied into the cluster's namespace under the same name.
package vmstorageconnection

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/vmapi"
)

// Name names the controller: the controller label of its metrics, its logger and the reporting controller of its
// events (every controller of the operator is named kof-<duty>).
const Name = "kof-vmstorageconnection"

// Reconciler keeps storage clusters in line with the VMStorageConnections that reference them. Client and Recorder
// are required; the manager's scheme must know kofv1, VictoriaMetrics operator v1 (VLCluster, VTCluster) and core v1.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads Secrets the cache may not hold (credential Secrets a user made, and whatever holds a copy's
	// name in the cluster's namespace). Optional; Client only when nil.
	APIReader client.Reader
	// Recorder emits events on VMStorageConnections (transitions and failures only).
	Recorder events.EventRecorder

	// copyLocks holds a *sync.Mutex per credentials copy (types.NamespacedName of the copy): the connections of
	// one regional reference one Secret from three clusters, and every sync of a cluster ensures the copies of all
	// its connections, so parallel reconciles would each find a new copy missing and write it.
	copyLocks sync.Map
	// statuses keeps the status each connection was last patched with until the cache holds that patch, so a
	// reconcile in between writes it once (phase.Statuses).
	statuses phase.Statuses
	// clusterLocks holds a *sync.Mutex per storage cluster (clusterKey): one sync of a cluster at a time, since
	// the connections of several regionals arriving together would otherwise each apply the same nodes to it.
	clusterLocks sync.Map
	// applied keeps, per storage cluster (clusterKey), the state the API server answered this process's last apply
	// with, until the cache holds it (phase.Unseen): the next sync (another connection's) would otherwise read the
	// state from before the apply and apply the same nodes again.
	applied phase.Unseen[clusterKey, clusterState]
}

// RBAC of this controller (collected by controller-gen into operator/config/rbac).
// +kubebuilder:rbac:groups=kof.k0rdent.mirantis.com,resources=vmstorageconnections,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=kof.k0rdent.mirantis.com,resources=vmstorageconnections/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=kof.k0rdent.mirantis.com,resources=vmstorageconnections/finalizers,verbs=update
// +kubebuilder:rbac:groups=operator.victoriametrics.com,resources=vlclusters;vtclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Field indexes of VMStorageConnections in the cache, so that a watch event finds its connections without listing
// (and copying) every connection.
const (
	// clusterIndex holds "<kind>/<namespace>/<name>" of the storage cluster a connection references.
	clusterIndex = "kof.clusterRef"
	// secretIndex holds "<namespace>/<name>" of a connection's credentials Secret.
	secretIndex = "kof.secretRef"
)

// SetupWithManager registers the controller with mgr: VMStorageConnections, and the VLClusters, VTClusters and
// Secrets they reference (mapped back through the field indexes clusterIndex and secretIndex to every connection
// that references them). It returns the indexer's or the builder's error.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil {
		return fmt.Errorf("setup %s controller: Client and Recorder are required", Name)
	}
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &kofv1.VMStorageConnection{}, clusterIndex, func(o client.Object) []string {
		return []string{refOf(o.(*kofv1.VMStorageConnection)).index()}
	}); err != nil {
		return fmt.Errorf("setup %s controller: index %s: %w", Name, clusterIndex, err)
	}
	if err := idx.IndexField(ctx, &kofv1.VMStorageConnection{}, secretIndex, func(o client.Object) []string {
		c := o.(*kofv1.VMStorageConnection)
		if s := c.Spec.TargetStorageNode.Secret; s != nil {
			return []string{c.Namespace + "/" + s.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("setup %s controller: index %s: %w", Name, secretIndex, err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&kofv1.VMStorageConnection{}).
		Watches(&vmapi.VLCluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToConnections(kofv1.KindVLCluster))).
		Watches(&vmapi.VTCluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToConnections(kofv1.KindVTCluster))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretToConnections)).
		Complete(r)
}

// clusterKey identifies a storage cluster.
type clusterKey struct {
	kind, namespace, name string
}

// refOf returns the storage cluster a connection references (namespace defaults to the connection's).
func refOf(c *kofv1.VMStorageConnection) clusterKey {
	ns := c.Spec.ClusterRef.Namespace
	if ns == "" {
		ns = c.Namespace
	}
	return clusterKey{kind: c.Spec.ClusterRef.Kind, namespace: ns, name: c.Spec.ClusterRef.Name}
}

// index returns the clusterIndex value of the cluster key.
func (k clusterKey) index() string { return k.kind + "/" + k.namespace + "/" + k.name }

// clusterToConnections maps a storage cluster of kind to the connections that reference it.
func (r *Reconciler) clusterToConnections(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		key := clusterKey{kind: kind, namespace: obj.GetNamespace(), name: obj.GetName()}
		return r.requests(ctx, clusterIndex, key.index())
	}
}

// secretToConnections maps a Secret to the connections whose credentials it holds.
func (r *Reconciler) secretToConnections(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.requests(ctx, secretIndex, obj.GetNamespace()+"/"+obj.GetName())
}

// requests returns the connections whose field index holds value as reconcile requests (metadata only, from the
// cache).
func (r *Reconciler) requests(ctx context.Context, index, value string) []reconcile.Request {
	var conns kofv1.VMStorageConnectionList
	if err := r.Client.List(ctx, &conns, client.MatchingFields{index: value}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list VMStorageConnections for a watch event", "index", index)
		return nil
	}
	out := make([]reconcile.Request, 0, len(conns.Items))
	for i := range conns.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&conns.Items[i])})
	}
	return out
}

// state is one reconcile of one connection: the object as read (base, for the status patch), the cluster it
// references now and the one it was applied to before.
type state struct {
	conn, base *kofv1.VMStorageConnection
	key, prev  clusterKey
	stale      bool // the connection moved: its node must leave the previous cluster
}

// Reconcile brings the storage cluster referenced by the connection req in line with all its connections, handles
// the finalizer, and patches the connection's status once at the end, in the one shape (operator/internal/phase).
// Transient API errors are returned for backoff; a missing cluster waits for the cluster watch.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return phase.Reconcile[*state](ctx, r, req)
}

// Get reads the connection.
func (r *Reconciler) Get(ctx context.Context, req reconcile.Request) (*state, bool, error) {
	var conn kofv1.VMStorageConnection
	if err := r.Client.Get(ctx, req.NamespacedName, &conn); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("get VMStorageConnection %s: %w", req.NamespacedName, err)
	}
	s := &state{conn: &conn, base: conn.DeepCopy(), key: refOf(&conn)}
	prev, hadPrev := parseClusterKey(conn.Annotations[kofv1.ClusterRefAnnotation])
	s.prev, s.stale = prev, hadPrev && prev != s.key
	return s, true, nil
}

// Finalize removes the node of a connection being deleted, and otherwise adds the finalizer, index labels and
// kofv1.ClusterRefAnnotation to a connection of a valid kind.
func (r *Reconciler) Finalize(ctx context.Context, s *state) (bool, error) {
	if !s.conn.DeletionTimestamp.IsZero() {
		return true, r.finalize(ctx, s.conn, s.key, s.prev, s.stale)
	}
	if !validKind(s.key.kind) {
		return false, nil
	}
	if err := r.ensureMetadata(ctx, s.conn, s.key); err != nil {
		return false, err
	}
	s.base.ResourceVersion = s.conn.ResourceVersion
	return false, nil
}

// Phases returns kind → sync → stale cluster.
func (r *Reconciler) Phases(*state) []phase.Phase[*state] {
	return []phase.Phase[*state]{
		{Name: "kind", FailReason: kofv1.ReasonApplyFailed, Run: r.checkKind},
		{Name: "sync", FailReason: kofv1.ReasonApplyFailed, Run: func(ctx context.Context, s *state) (phase.Outcome, error) {
			return r.sync(ctx, s.key, s.conn.Namespace+"/"+s.conn.Name)
		}},
		{Name: "previous-cluster", FailReason: kofv1.ReasonApplyFailed, Run: r.leavePrevious},
	}
}

// checkKind stops on a cluster_ref kind this controller does not serve, after removing the node from the cluster
// the connection was applied to before.
func (r *Reconciler) checkKind(ctx context.Context, s *state) (phase.Outcome, error) {
	if validKind(s.key.kind) {
		return phase.Done(""), nil
	}
	if s.stale {
		if _, err := r.sync(ctx, s.prev, ""); err != nil {
			return phase.Outcome{}, err
		}
	}
	return phase.Invalid(kofv1.ReasonInvalidSpec, fmt.Sprintf("spec.cluster_ref.kind: %q; use %s or %s", s.key.kind,
		kofv1.KindVLCluster, kofv1.KindVTCluster)), nil
}

// leavePrevious removes the node from the cluster the connection was applied to before it moved.
func (r *Reconciler) leavePrevious(ctx context.Context, s *state) (phase.Outcome, error) {
	if !s.stale {
		return phase.Done(""), nil
	}
	_, err := r.sync(ctx, s.prev, "")
	return phase.Done(""), err
}

// validKind reports whether kind is a storage cluster kind this controller serves.
func validKind(kind string) bool { return kind == kofv1.KindVLCluster || kind == kofv1.KindVTCluster }

// String returns the key as `kind/namespace/name`, the form of kofv1.ClusterRefAnnotation.
func (k clusterKey) String() string { return k.kind + "/" + k.namespace + "/" + k.name }

// parseClusterKey parses kofv1.ClusterRefAnnotation; false when absent or malformed.
func parseClusterKey(s string) (clusterKey, bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || !validKind(parts[0]) || parts[1] == "" || parts[2] == "" {
		return clusterKey{}, false
	}
	return clusterKey{kind: parts[0], namespace: parts[1], name: parts[2]}, true
}

// finalize removes the connection's node from its cluster and from the cluster it was applied to before (when they
// still exist), then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, conn *kofv1.VMStorageConnection, key, prev clusterKey, stale bool) error {
	if !controllerutil.ContainsFinalizer(conn, kofv1.VMStorageConnectionFinalizer) {
		return nil
	}
	var keys []clusterKey
	if validKind(key.kind) {
		keys = append(keys, key)
	}
	if stale {
		keys = append(keys, prev)
	}
	for _, k := range keys {
		if _, err := r.sync(ctx, k, ""); err != nil {
			return err
		}
	}
	patch := client.MergeFromWithOptions(conn.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(conn, kofv1.VMStorageConnectionFinalizer)
	if err := r.Client.Patch(ctx, conn, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of VMStorageConnection %s/%s: %w", conn.Namespace, conn.Name, err)
	}
	return nil
}

// ensureMetadata adds the finalizer, the index labels `k0rdent.mirantis.com/cluster-name` and `cluster-kind` and
// kofv1.ClusterRefAnnotation when missing or outdated, in one patch; it writes nothing when they are in place. Connections are always found by their spec,
// so the labels serve users and other tools (`kubectl get -l`).
func (r *Reconciler) ensureMetadata(ctx context.Context, conn *kofv1.VMStorageConnection, key clusterKey) error {
	want := map[string]string{kofv1.StorageClusterKindLabel: key.kind}
	// A name that is no valid label value (over 63 characters) is not indexed; lookups filter on the spec anyway.
	if len(validation.IsValidLabelValue(key.name)) == 0 {
		want[kofv1.StorageClusterNameLabel] = key.name
	}
	labelsOK := true
	for k, v := range want {
		if conn.Labels[k] != v {
			labelsOK = false
		}
	}
	if labelsOK && conn.Annotations[kofv1.ClusterRefAnnotation] == key.String() &&
		controllerutil.ContainsFinalizer(conn, kofv1.VMStorageConnectionFinalizer) {
		return nil
	}
	patch := client.MergeFrom(conn.DeepCopy())
	if conn.Labels == nil {
		conn.Labels = map[string]string{}
	}
	maps.Copy(conn.Labels, want)
	if conn.Annotations == nil {
		conn.Annotations = map[string]string{}
	}
	conn.Annotations[kofv1.ClusterRefAnnotation] = key.String()
	controllerutil.AddFinalizer(conn, kofv1.VMStorageConnectionFinalizer)
	if err := r.Client.Patch(ctx, conn, patch); err != nil {
		return fmt.Errorf("add finalizer and labels to VMStorageConnection %s/%s: %w", conn.Namespace, conn.Name, err)
	}
	return nil
}

// joinSorted returns the sorted, comma-joined form of names.
func joinSorted(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	return strings.Join(s, ",")
}

// splitList parses a comma-joined list; "" gives nil.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool { return joinSorted(a) == joinSorted(b) }

// nsName formats a key.
func nsName(k types.NamespacedName) string { return k.Namespace + "/" + k.Name }
