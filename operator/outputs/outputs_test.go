package outputs

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
)

func TestRegionalAndChildConfigMaps(t *testing.T) {
	data := map[string]string{discovery.KeyRegionalClusterName: "regional-1"}
	r := RegionalConfigMap("kcm-system", "regional-1", data)
	if r.Name != "kof-regional-1" || r.Namespace != "kcm-system" {
		t.Errorf("regional ConfigMap = %s/%s, want kcm-system/kof-regional-1", r.Namespace, r.Name)
	}
	wantRegional := map[string]string{
		kofv1.ManagedByLabel: kofv1.ManagedBy, kofv1.GeneratedLabel: "true", kofv1.ClusterRoleLabel: "regional",
	}
	if d := cmp.Diff(wantRegional, r.Labels); d != "" {
		t.Errorf("regional labels (-want +got):\n%s", d)
	}

	c := ChildConfigMap("ns1", "child-1", discovery.Ref{Name: "regional-1", Namespace: "kcm-system"}, data)
	if c.Name != "kof-cluster-config-child-1" || c.Namespace != "ns1" {
		t.Errorf("child ConfigMap = %s/%s, want ns1/kof-cluster-config-child-1", c.Namespace, c.Name)
	}
	if c.Labels[kofv1.RegionalClusterNameLabel] != "regional-1" || c.Labels[kofv1.RegionalClusterNamespaceLabel] != "kcm-system" {
		t.Errorf("child labels %v do not name its regional kcm-system/regional-1", c.Labels)
	}
	if d := cmp.Diff(data, c.Data); d != "" {
		t.Errorf("child data is not the regional's (-want +got):\n%s", d)
	}
}

func TestRegionlessConfigMapAndBinding(t *testing.T) {
	cfg := config.Config{Regionless: true, RegionlessClusterName: "mothership", KCMNamespace: "kcm-system",
		RegionlessDomain: "mothership.kof.example.com"}
	cm := RegionlessConfigMap(cfg)
	if cm.Name != "kof-mothership" || cm.Namespace != "kcm-system" || cm.Labels[kofv1.RegionlessLabel] != "true" {
		t.Errorf("regionless ConfigMap = %s/%s labels %v", cm.Namespace, cm.Name, cm.Labels)
	}
	want := "https://vmauth.mothership.kof.example.com/vm/insert/0/prometheus/api/v1/write"
	if got := cm.Data["write_metrics_endpoint"]; got != want {
		t.Errorf("write_metrics_endpoint = %q, want %q", got, want)
	}
	ref, err := ChildRegional(cfg, discovery.Cluster{Name: "child-1", Namespace: "kcm-system"}, nil)
	if err != nil || ref != (discovery.Ref{Name: "mothership", Namespace: "kcm-system"}) {
		t.Errorf("regionless child binds to %v, %v; want kcm-system/mothership", ref, err)
	}
	cfg.Regionless = false
	if _, err := ChildRegional(cfg, discovery.Cluster{Name: "child-1", Namespace: "kcm-system"}, nil); !discovery.IsNoRegional(err) {
		t.Errorf("child with no regional: err = %v, want a no-regional error", err)
	}
}

func TestCredentialsSecret(t *testing.T) {
	s := CredentialsSecret("kcm-system", "child-adopted-eea83bde02", "p4ssw0rd-of-24-characters")
	if s.Name != "kof-vmuser-creds-child-adopted-eea83bde02" || s.Namespace != "kcm-system" {
		t.Errorf("secret = %s/%s", s.Namespace, s.Name)
	}
	if string(s.Data[UsernameKey]) != "child-adopted-eea83bde02" || string(s.Data[PasswordKey]) != "p4ssw0rd-of-24-characters" {
		t.Errorf("secret data = %v", s.Data)
	}
	if s.Labels[kofv1.ManagedByLabel] != kofv1.ManagedBy {
		t.Errorf("secret labels %v lack %s", s.Labels, kofv1.ManagedByLabel)
	}
}
