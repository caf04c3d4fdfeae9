package outputs

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/endpoints"
	"kof.dev/kof/operator/names"
)

// RegionalInput is what a regional ConfigMap says about its cluster: the input of the admin bundle, the
// PromxyServerGroup and the storage connections.
type RegionalInput struct {
	// Namespace and ConfigMap are the ConfigMap's namespace and name.
	Namespace, ConfigMap string
	// Cluster is the regional cluster's name (data key regional_cluster_name, else the ConfigMap name without `kof-`).
	Cluster string
	// Regionless is true for the regionless ConfigMap (label `k0rdent.mirantis.com/kof-regionless: "true"`).
	Regionless bool
	// Istio is true for a mesh member (data key istio_role = member).
	Istio bool
	// Reads are the read endpoints the management cluster uses.
	Reads endpoints.Set
	// HTTP is the parsed `kof_http_config` (the zero value when it is malformed).
	HTTP kofv1.HTTPClientConfig
	// HTTPMalformed is true when `kof_http_config` is malformed: the caller keeps the last valid settings (those of
	// the PromxyServerGroup) in HTTP.
	HTTPMalformed bool
}

// ParseRegionalConfigMap returns the input of regional ConfigMap cm: in-cluster reads for regionless, in-mesh reads
// for Istio, the stored read endpoints otherwise. A malformed `kof_http_config` is ignored (HTTPMalformed is set, HTTP
// is the zero value, for the caller to replace by the last valid settings) and returned as a problem naming the key; the error is for a ConfigMap without a cluster name
// or with an unusable read endpoint, naming the data key and the fix.
func ParseRegionalConfigMap(cm *corev1.ConfigMap) (RegionalInput, []error, error) {
	in := RegionalInput{Namespace: cm.Namespace, ConfigMap: cm.Name, Cluster: cm.Data[discovery.KeyRegionalClusterName],
		Regionless: cm.Labels[kofv1.RegionlessLabel] == kofv1.TrueValue,
		Istio:      cm.Data[discovery.KeyIstioRole] == kofv1.IstioMember}
	if in.Cluster == "" {
		c, ok := strings.CutPrefix(cm.Name, names.RegionalConfigMapPrefix)
		if !ok || c == "" {
			return in, nil, fmt.Errorf("data.%s: missing; set it to the regional cluster's name",
				discovery.KeyRegionalClusterName)
		}
		in.Cluster = c
	}
	switch {
	case in.Regionless:
		in.Reads = endpoints.InCluster().ReadOnly()
	case in.Istio:
		in.Reads = endpoints.Istio(in.Cluster).ReadOnly()
	default:
		in.Reads = discovery.SetFromData(cm.Data).ReadOnly()
	}
	for _, kv := range []struct{ key, url string }{
		{discovery.KeyReadMetrics, in.Reads.ReadMetrics}, {discovery.KeyReadLogs, in.Reads.ReadLogs},
		{discovery.KeyReadAuditLogs, in.Reads.ReadAuditLogs}, {discovery.KeyReadTraces, in.Reads.ReadTraces},
	} {
		if err := endpoints.CheckURL(kv.url); err != nil {
			return in, nil, fmt.Errorf("data.%s: %w", kv.key, err)
		}
	}
	hc, err := endpoints.ParseHTTPConfig(cm.Data[discovery.KeyHTTPConfig])
	if err != nil {
		in.HTTPMalformed = true
		return in, []error{fmt.Errorf("data.%s: %w; the last valid settings (those of the PromxyServerGroup, the "+
			"defaults when there is none) are kept", discovery.KeyHTTPConfig, err)}, nil
	}
	in.HTTP = hc
	return in, nil, nil
}

// adminAuth returns the basic auth of the admin bundle's Secret.
func adminAuth(in RegionalInput) kofv1.BasicAuth {
	return kofv1.BasicAuth{CredentialsSecretName: names.VMUserSecret(names.AdminVMUserBase(in.Namespace, in.Cluster)),
		UsernameKey: UsernameKey, PasswordKey: PasswordKey}
}

// PromxyServerGroup returns the server group `promxy-server-group-<hash>` of the regional: its read metrics endpoint
// split into scheme, target and path, the `kof-http-config` settings, and the admin credentials unless that config
// names other ones; labelled Labels() plus `k0rdent.mirantis.com/secret-name` = the promxy config Secret of cfg.
func PromxyServerGroup(cfg config.Config, in RegionalInput) (*kofv1.PromxyServerGroup, error) {
	t, err := endpoints.Split(in.Reads.ReadMetrics)
	if err != nil {
		return nil, fmt.Errorf("read metrics endpoint: %w", err)
	}
	hc := in.HTTP
	if hc.BasicAuth.CredentialsSecretName == "" {
		hc.BasicAuth = adminAuth(in)
	}
	return &kofv1.PromxyServerGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: kofv1.GroupVersion().String(), Kind: "PromxyServerGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: names.PromxyServerGroup(in.Namespace, in.Cluster), Namespace: in.Namespace,
			Labels: withLabels(map[string]string{kofv1.SecretNameLabel: cfg.PromxySecretName})},
		Spec: kofv1.PromxyServerGroupSpec{ClusterName: in.Cluster, Targets: []string{t.Host}, PathPrefix: t.Path,
			Scheme: t.Scheme, HTTPClient: hc},
	}, nil
}

// StorageConnections returns the traces, logs and audit logs connections of the regional: the VTCluster and the two
// VLClusters of the management cluster (names and namespace from cfg) get the regional's read endpoints as storage
// nodes, with the admin credentials, and TLS when the endpoint is https (skipping verification as `kof-http-config`
// says; no tls_config for plain http).
func StorageConnections(cfg config.Config, in RegionalInput) []*kofv1.VMStorageConnection {
	auth := adminAuth(in)
	var out []*kofv1.VMStorageConnection
	for _, x := range []struct {
		kind        names.StorageKind
		clusterKind string
		cluster     string
		address     string
	}{
		{names.StorageTraces, kofv1.KindVTCluster, cfg.VTClusterName, in.Reads.ReadTraces},
		{names.StorageLogs, kofv1.KindVLCluster, cfg.VLClusterName, in.Reads.ReadLogs},
		{names.StorageAuditLogs, kofv1.KindVLCluster, cfg.VLAuditClusterName, in.Reads.ReadAuditLogs},
	} {
		t, _ := endpoints.Split(x.address) // ParseRegionalConfigMap checked every read URL
		var tls *kofv1.StorageTLSConfig
		if t.Scheme == kofv1.SchemeHTTPS || in.HTTP.TLSConfig.InsecureSkipVerify {
			tls = &kofv1.StorageTLSConfig{Enabled: t.Scheme == kofv1.SchemeHTTPS,
				InsecureSkipVerify: in.HTTP.TLSConfig.InsecureSkipVerify}
		}
		out = append(out, &kofv1.VMStorageConnection{
			TypeMeta: metav1.TypeMeta{APIVersion: kofv1.GroupVersion().String(), Kind: "VMStorageConnection"},
			ObjectMeta: metav1.ObjectMeta{Name: names.StorageConnection(x.kind, in.Namespace, in.Cluster),
				Namespace: in.Namespace, Labels: withLabels(map[string]string{
					kofv1.StorageClusterNameLabel: x.cluster, kofv1.StorageClusterKindLabel: x.clusterKind})},
			Spec: kofv1.VMStorageConnectionSpec{
				ClusterRef: kofv1.ClusterRef{Name: x.cluster, Namespace: cfg.ReleaseNamespace, Kind: x.clusterKind},
				TargetStorageNode: kofv1.TargetStorageNode{
					Address: x.address,
					Secret: &kofv1.SecretKeys{Name: auth.CredentialsSecretName, UsernameKey: auth.UsernameKey,
						PasswordKey: auth.PasswordKey},
					TLSConfig: tls,
				},
			},
		})
	}
	return out
}
