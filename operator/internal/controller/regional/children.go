package regional

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/endpoints"
	"kof.dev/kof/operator/internal/bundle"
	"kof.dev/kof/operator/names"
)

// adminAuth returns the basic auth of the admin bundle's Secret.
func adminAuth(cm *corev1.ConfigMap, in Input) kofv1.BasicAuth {
	return kofv1.BasicAuth{CredentialsSecretName: names.VMUserSecret(adminBase(cm, in)),
		UsernameKey: bundle.UsernameKey, PasswordKey: bundle.PasswordKey}
}

// PromxyServerGroup returns the server group of the regional: its read metrics endpoint split into scheme, target and
// path, the `kof-http-config` settings, and the admin credentials unless that config names other ones.
func PromxyServerGroup(cm *corev1.ConfigMap, in Input, secretName string) (*kofv1.PromxyServerGroup, error) {
	t, err := endpoints.Split(in.Reads.ReadMetrics)
	if err != nil {
		return nil, fmt.Errorf("read metrics endpoint: %w", err)
	}
	hc := in.HTTP
	if hc.BasicAuth.CredentialsSecretName == "" {
		hc.BasicAuth = adminAuth(cm, in)
	}
	labels := bundle.Labels()
	labels[kofv1.SecretNameLabel] = secretName
	return &kofv1.PromxyServerGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: kofv1.GroupVersion().String(), Kind: "PromxyServerGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: names.PromxyServerGroup(cm.Namespace, in.Cluster), Namespace: cm.Namespace,
			Labels: labels, OwnerReferences: ownerRef(cm)},
		Spec: kofv1.PromxyServerGroupSpec{ClusterName: in.Cluster, Targets: []string{t.Host}, PathPrefix: t.Path,
			Scheme: t.Scheme, HTTPClient: hc},
	}, nil
}

func (r *Reconciler) ensurePromxy(ctx context.Context, cm *corev1.ConfigMap, in Input) error {
	psg, err := PromxyServerGroup(cm, in, r.Config.PromxySecretName)
	if err != nil {
		return err
	}
	_, err = r.applier().Apply(ctx, psg)
	return err
}

// StorageConnections returns the traces, logs and audit logs connections of the regional: the VTCluster / VLCluster
// of the management cluster (names from the config) get the regional's read endpoint as a storage node, with the
// admin credentials and TLS when the endpoint is https.
func StorageConnections(cm *corev1.ConfigMap, in Input, c clusterNames) []*kofv1.VMStorageConnection {
	auth := adminAuth(cm, in)
	type conn struct {
		kind        names.StorageKind
		clusterKind string
		cluster     string
		address     string
	}
	var out []*kofv1.VMStorageConnection
	for _, x := range []conn{
		{names.StorageTraces, kofv1.KindVTCluster, c.traces, in.Reads.ReadTraces},
		{names.StorageLogs, kofv1.KindVLCluster, c.logs, in.Reads.ReadLogs},
		{names.StorageAuditLogs, kofv1.KindVLCluster, c.audit, in.Reads.ReadAuditLogs},
	} {
		t, _ := endpoints.Split(x.address) // Parse checked every read URL
		labels := bundle.Labels()
		labels[kofv1.StorageClusterNameLabel] = x.cluster
		labels[kofv1.StorageClusterKindLabel] = x.clusterKind
		out = append(out, &kofv1.VMStorageConnection{
			TypeMeta: metav1.TypeMeta{APIVersion: kofv1.GroupVersion().String(), Kind: "VMStorageConnection"},
			ObjectMeta: metav1.ObjectMeta{Name: names.StorageConnection(x.kind, cm.Namespace, in.Cluster),
				Namespace: cm.Namespace, Labels: labels, OwnerReferences: ownerRef(cm)},
			Spec: kofv1.VMStorageConnectionSpec{
				ClusterRef: kofv1.ClusterRef{Name: x.cluster, Namespace: c.namespace, Kind: x.clusterKind},
				TargetStorageNode: kofv1.TargetStorageNode{
					Address: x.address,
					Secret:  &kofv1.SecretKeys{Name: auth.CredentialsSecretName, UsernameKey: auth.UsernameKey, PasswordKey: auth.PasswordKey},
					TLSConfig: &kofv1.StorageTLSConfig{Enabled: t.Scheme == kofv1.SchemeHTTPS,
						InsecureSkipVerify: in.HTTP.TLSConfig.InsecureSkipVerify},
				},
			},
		})
	}
	return out
}

// clusterNames are the management cluster's storage clusters the connections attach to.
type clusterNames struct{ namespace, traces, logs, audit string }

func (r *Reconciler) ensureConnections(ctx context.Context, cm *corev1.ConfigMap, in Input) error {
	c := clusterNames{namespace: r.Config.ReleaseNamespace, traces: r.Config.VTClusterName,
		logs: r.Config.VLClusterName, audit: r.Config.VLAuditClusterName}
	for _, conn := range StorageConnections(cm, in, c) {
		if _, err := r.applier().Apply(ctx, conn); err != nil {
			return err
		}
	}
	return nil
}

// refreshChildren copies the regional's data into every child ConfigMap bound to it (labels
// `k0rdent.mirantis.com/kof-regional-cluster-name` and `-namespace`), keeping their labels and owners.
func (r *Reconciler) refreshChildren(ctx context.Context, cm *corev1.ConfigMap, in Input) error {
	var list corev1.ConfigMapList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{
		kofv1.RegionalClusterNameLabel: in.Cluster, kofv1.RegionalClusterNamespaceLabel: cm.Namespace,
		kofv1.ManagedByLabel: kofv1.ManagedBy,
	}); err != nil {
		return fmt.Errorf("list child configmaps of %s/%s: %w", cm.Namespace, in.Cluster, err)
	}
	for i := range list.Items {
		child := &list.Items[i]
		desired := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: child.Name, Namespace: child.Namespace, Labels: child.Labels,
				OwnerReferences: child.OwnerReferences},
			Data: cm.Data,
		}
		if _, err := r.applier().Apply(ctx, desired); err != nil {
			return err
		}
	}
	return nil
}
