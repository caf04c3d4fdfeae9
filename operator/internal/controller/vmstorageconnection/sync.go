package vmstorageconnection

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/vmapi"
)

// clusterState is what a storage cluster's select component carries now, at resource version version.
type clusterState struct {
	extraArgs map[string]string
	secrets   []string
	mounted   []string // kofv1.MountedSecretsAnnotation
	version   string
}

// stateOf returns the state of the storage cluster u (of kind) as read from the API server's answer.
func stateOf(kind string, u *unstructured.Unstructured) clusterState {
	st := clusterState{version: u.GetResourceVersion(), mounted: splitList(u.GetAnnotations()[kofv1.MountedSecretsAnnotation])}
	path := []string{"spec", componentField(kind)}
	st.extraArgs, _, _ = unstructured.NestedStringMap(u.Object, append(path, "extraArgs")...)
	st.secrets, _, _ = unstructured.NestedStringSlice(u.Object, append(path, "secrets")...)
	return st
}

// componentField returns the spec field of the select component of kind: VLCluster `vlselect`, VTCluster `select`.
func componentField(kind string) string {
	if kind == kofv1.KindVTCluster {
		return "select"
	}
	return "vlselect"
}

// getCluster reads the storage cluster; nil without error when it does not exist.
func (r *Reconciler) getCluster(ctx context.Context, key clusterKey) (*clusterState, error) {
	nn := types.NamespacedName{Namespace: key.namespace, Name: key.name}
	st := &clusterState{}
	var err error
	switch key.kind {
	case kofv1.KindVTCluster:
		var c vmapi.VTCluster
		if err = r.Client.Get(ctx, nn, &c); err == nil {
			st.mounted, st.version = splitList(c.Annotations[kofv1.MountedSecretsAnnotation]), c.ResourceVersion
			if c.Spec.Select != nil {
				st.extraArgs, st.secrets = c.Spec.Select.ExtraArgs, c.Spec.Select.Secrets
			}
		}
	default:
		var c vmapi.VLCluster
		if err = r.Client.Get(ctx, nn, &c); err == nil {
			st.mounted, st.version = splitList(c.Annotations[kofv1.MountedSecretsAnnotation]), c.ResourceVersion
			if c.Spec.VLSelect != nil {
				st.extraArgs, st.secrets = c.Spec.VLSelect.ExtraArgs, c.Spec.VLSelect.Secrets
			}
		}
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", key.kind, nsName(nn), err)
	}
	return st, nil
}

// connections returns every live connection (not being deleted) sorted by namespace/name. They are the cache's own
// objects, not copies (every sync lists them all): read them, never modify them.
func (r *Reconciler) connections(ctx context.Context) ([]kofv1.VMStorageConnection, error) {
	var list kofv1.VMStorageConnectionList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list VMStorageConnections: %w", err)
	}
	out := list.Items[:0]
	for _, c := range list.Items {
		if c.DeletionTimestamp.IsZero() {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b kofv1.VMStorageConnection) int {
		return compareKeys(a.Namespace, a.Name, b.Namespace, b.Name)
	})
	return out, nil
}

// compareKeys compares the keys `ns1/name1` and `ns2/name2` as strings.Compare compares them, without joining them.
func compareKeys(ns1, name1, ns2, name2 string) int {
	at := func(ns, name string, i int) (byte, bool) {
		switch {
		case i < len(ns):
			return ns[i], true
		case i == len(ns):
			return '/', true
		case i-len(ns)-1 < len(name):
			return name[i-len(ns)-1], true
		}
		return 0, false
	}
	for i := 0; ; i++ {
		x, okx := at(ns1, name1, i)
		y, oky := at(ns2, name2, i)
		switch {
		case !okx && !oky:
			return 0
		case !okx:
			return -1
		case !oky:
			return 1
		case x != y:
			return cmp.Compare(x, y)
		}
	}
}

// sync makes the cluster key carry exactly the live connections that reference it, copies credential Secrets into
// its namespace, prunes copies nobody needs, and returns the outcome for the connection self (`namespace/name`;
// "" when finalizing). Syncs of one cluster run one at a time, each from the state the previous one applied.
func (r *Reconciler) sync(ctx context.Context, key clusterKey, self string) (phase.Outcome, error) {
	lock, _ := r.clusterLocks.LoadOrStore(key, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	// The copies are read before the connections, so that this reconcile's connection snapshot is at least as new as
	// every copy it may prune (see pruneCopies).
	copies, err := r.copies(ctx, key.namespace)
	if err != nil {
		return phase.Outcome{Reason: kofv1.ReasonApplyFailed}, err
	}
	all, err := r.connections(ctx)
	if err != nil {
		return phase.Outcome{Reason: kofv1.ReasonApplyFailed}, err
	}
	cluster, err := r.getCluster(ctx, key)
	if err != nil {
		return phase.Outcome{Reason: kofv1.ReasonApplyFailed}, err
	}
	if cluster != nil {
		if st, ok := r.applied.Newer(key, cluster.version); ok {
			cluster = &st
		}
	}
	if cluster == nil {
		return phase.Invalid(kofv1.ReasonNotFound, fmt.Sprintf("spec.cluster_ref: %s %s/%s not found; it is connected once it exists",
			key.kind, key.namespace, key.name)), r.pruneCopies(ctx, copies, key.namespace, all)
	}
	var usable []kofv1.VMStorageConnection
	selfOutcome := phase.Done("connected to " + key.kind + " " + key.namespace + "/" + key.name)
	for i := range all {
		c := &all[i]
		if refOf(c) != key {
			continue
		}
		id := c.Namespace + "/" + c.Name
		if problem := checkAddress(c.Spec.TargetStorageNode.Address); problem != "" {
			if id == self {
				selfOutcome = phase.Invalid(kofv1.ReasonInvalidSpec, problem)
			}
			continue
		}
		problem, err := r.ensureSecretCopy(ctx, c, key.namespace)
		if err != nil {
			return phase.Outcome{Reason: kofv1.ReasonApplyFailed}, err
		}
		if problem != "" {
			if id == self {
				selfOutcome = phase.Invalid(kofv1.ReasonNotFound, problem)
			}
			continue
		}
		usable = append(usable, *c)
		if id == self {
			selfOutcome.Message = fmt.Sprintf("storage node %s set on %s %s/%s", c.Spec.TargetStorageNode.Address, key.kind, key.namespace, key.name)
		}
	}
	desired := DesiredFor(usable, func(c *kofv1.VMStorageConnection) string { return c.Spec.TargetStorageNode.Secret.Name })
	if err := r.applyCluster(ctx, key, cluster, desired); err != nil {
		return phase.Outcome{Reason: kofv1.ReasonApplyFailed}, err
	}
	if err := r.pruneCopies(ctx, copies, key.namespace, all); err != nil {
		return phase.Outcome{Reason: kofv1.ReasonApplyFailed}, err
	}
	return selfOutcome, nil
}

// applyCluster server-side applies the managed args, the merged mounts and kofv1.MountedSecretsAnnotation when any of them
// differs from cluster; it writes nothing otherwise. Dropping a key from the apply removes it, since this field
// manager owned it.
func (r *Reconciler) applyCluster(ctx context.Context, key clusterKey, cluster *clusterState, d Desired) error {
	secrets := MergeSecrets(cluster.secrets, cluster.mounted, d.Secrets)
	if maps.Equal(CurrentArgs(cluster.extraArgs), d.Args) && sameSet(cluster.secrets, secrets) &&
		joinSorted(cluster.mounted) == joinSorted(d.Secrets) {
		return nil
	}
	u := ClusterApply(key.kind, key.namespace, key.name, secrets, d)
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(apply.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply storage nodes to %s %s/%s: %w", key.kind, key.namespace, key.name, err)
	}
	st := stateOf(key.kind, u)
	r.applied.Record(key, st.version, st)
	return nil
}

// ClusterApply returns the server-side apply object of the storage cluster kind (kofv1.KindVLCluster or
// KindVTCluster) namespace/name: its select component's managed extraArgs d.Args and mounts secrets (the merged
// list, MergeSecrets), and kofv1.MountedSecretsAnnotation listing d.Secrets. A field left out of it is removed when
// this field manager owned it.
func ClusterApply(kind, namespace, name string, secrets []string, d Desired) *unstructured.Unstructured {
	metadata := map[string]any{"name": name, "namespace": namespace}
	if len(d.Secrets) > 0 {
		metadata["annotations"] = map[string]any{kofv1.MountedSecretsAnnotation: joinSorted(d.Secrets)}
	}
	component := map[string]any{}
	if len(d.Args) > 0 {
		args := map[string]any{}
		for k, v := range d.Args {
			args[k] = v
		}
		component["extraArgs"] = args
	}
	if len(secrets) > 0 {
		list := make([]any, len(secrets))
		for i, s := range secrets {
			list[i] = s
		}
		component["secrets"] = list
	}
	obj := map[string]any{
		"apiVersion": vmapi.V1.String(),
		"kind":       kind,
		"metadata":   metadata,
	}
	if len(component) > 0 {
		obj["spec"] = map[string]any{componentField(kind): component}
	}
	return &unstructured.Unstructured{Object: obj}
}

// ensureSecretCopy makes the credentials Secret of c available in namespace ns. A Secret already in ns needs
// nothing; one in another namespace is copied under the same name (labelled managed-by kof-operator, annotated with
// its source) when the copy is missing or differs. It returns a problem for the user (missing source, name taken by
// another Secret) or an API error.
func (r *Reconciler) ensureSecretCopy(ctx context.Context, c *kofv1.VMStorageConnection, ns string) (string, error) {
	ref := c.Spec.TargetStorageNode.Secret
	if ref == nil {
		return "", nil
	}
	srcKey := types.NamespacedName{Namespace: c.Namespace, Name: ref.Name}
	var src corev1.Secret
	if err := r.getSecret(ctx, srcKey, &src); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("spec.target_storage_node.secret.name: Secret %s not found; create it or fix the name", nsName(srcKey)), nil
		}
		return "", fmt.Errorf("get credentials Secret %s: %w", nsName(srcKey), err)
	}
	for _, k := range []string{ref.UsernameKey, ref.PasswordKey} {
		if _, ok := src.Data[k]; !ok {
			return fmt.Sprintf("spec.target_storage_node.secret: Secret %s has no key %q; fix username_key/password_key", nsName(srcKey), k), nil
		}
	}
	if c.Namespace == ns {
		return "", nil
	}
	dstKey := types.NamespacedName{Namespace: ns, Name: ref.Name}
	// One reconcile at a time reads and writes a copy: the next one then finds the copy the previous one wrote
	// (from the API server while the cache lags) instead of writing it again.
	lock, _ := r.copyLocks.LoadOrStore(dstKey, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	var dst corev1.Secret
	// The cache holds every copy (they carry the managed-by label), so a cached copy is read from it; only a name
	// the cache does not hold is looked up on the API server, where a Secret of someone else's may have it.
	err := r.getSecret(ctx, dstKey, &dst)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return "", fmt.Errorf("get credentials copy %s: %w", nsName(dstKey), err)
	case dst.Annotations[kofv1.SourceSecretAnnotation] != nsName(srcKey):
		return fmt.Sprintf("spec.target_storage_node.secret.name: %s exists and is not a copy of %s; rename one of them",
			nsName(dstKey), nsName(srcKey)), nil
	case maps.EqualFunc(dst.Data, src.Data, func(a, b []byte) bool { return string(a) == string(b) }):
		return "", nil
	}
	ac := CopyOf(&src, ns)
	if err := r.Client.Apply(ctx, ac, client.FieldOwner(apply.FieldManager), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("apply credentials copy %s: %w", nsName(dstKey), err)
	}
	return "", nil
}

// CopyOf returns the server-side apply configuration of the copy of credentials Secret src in namespace ns: the
// same name, type Opaque, src's data, labelled managed-by kof-operator and annotated kofv1.SourceSecretAnnotation
// with src's `namespace/name`.
func CopyOf(src *corev1.Secret, ns string) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(src.Name, ns).
		WithLabels(map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}).
		WithAnnotations(map[string]string{kofv1.SourceSecretAnnotation: src.Namespace + "/" + src.Name}).
		WithType(corev1.SecretTypeOpaque).
		WithData(src.Data)
}

// copies returns the credentials Secret copies in namespace ns (labelled managed-by kof-operator and annotated with
// kofv1.SourceSecretAnnotation), as the cache holds them now.
func (r *Reconciler) copies(ctx context.Context, ns string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		return nil, fmt.Errorf("list credentials copies in %s: %w", ns, err)
	}
	out := list.Items[:0]
	for _, s := range list.Items {
		if _, isCopy := s.Annotations[kofv1.SourceSecretAnnotation]; isCopy {
			out = append(out, s)
		}
	}
	return out, nil
}

// pruneCopies deletes those of copies (in namespace ns) that no connection of all needs any more. copies must have
// been read before all: a copy is written only by a reconcile that read the connection needing it from the same
// cache, before the write, so a copy in copies has its connection in all unless that connection is gone. Pruning
// from an older connection list (as this controller once did) deleted, with several workers, the copy a parallel
// reconcile had just made for a connection that list did not hold yet. Each delete carries the copy's UID and
// resourceVersion as preconditions: a copy changed since it was read is not proven stale and is left alone (a later
// reconcile decides on it).
func (r *Reconciler) pruneCopies(ctx context.Context, copies []corev1.Secret, ns string, all []kofv1.VMStorageConnection) error {
	needed := map[string]bool{}
	for i := range all {
		c := &all[i]
		if s := c.Spec.TargetStorageNode.Secret; s != nil && refOf(c).namespace == ns && c.Namespace != ns {
			needed[s.Name] = true
		}
	}
	for i := range copies {
		s := &copies[i]
		if needed[s.Name] {
			continue
		}
		pre := client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion}
		if err := r.Client.Delete(ctx, s, pre); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete unused credentials copy %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// getSecret reads a Secret through the cache, or straight from the API server when the cache does not hold it (and
// APIReader is set): the cache holds only Secrets labelled managed-by kof-operator, so a user's credentials Secret,
// or another Secret holding a copy's name, is read directly. A cached Secret may lag a change by the watch delay;
// the Secret watch reconciles again once the cache has the change.
func (r *Reconciler) getSecret(ctx context.Context, key types.NamespacedName, s *corev1.Secret) error {
	err := r.Client.Get(ctx, key, s)
	if apierrors.IsNotFound(err) && r.APIReader != nil {
		return r.APIReader.Get(ctx, key, s)
	}
	return err
}

// checkAddress returns a problem when address cannot be one entry of the comma-separated storageNode flag.
func checkAddress(address string) string {
	if address == "" || strings.ContainsAny(address, ", \t\n") {
		return fmt.Sprintf("spec.target_storage_node.address: %q; use one host:port[/path] without commas or spaces", address)
	}
	return ""
}
