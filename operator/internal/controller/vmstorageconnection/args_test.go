package vmstorageconnection

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

func conn(name, addr string, secret *kofv1.SecretKeys, tls *kofv1.StorageTLSConfig) kofv1.VMStorageConnection {
	return kofv1.VMStorageConnection{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kcm-system", Name: name},
		Spec: kofv1.VMStorageConnectionSpec{
			ClusterRef:        kofv1.ClusterRef{Name: "kof-logs", Namespace: "kof", Kind: kofv1.KindVLCluster},
			TargetStorageNode: kofv1.TargetStorageNode{Address: addr, Secret: secret, TLSConfig: tls},
		},
	}
}

func TestDesiredFor(t *testing.T) {
	creds := &kofv1.SecretKeys{Name: "kof-vmuser-creds-admin-r1-abc", UsernameKey: "username", PasswordKey: "password"}
	byName := func(c *kofv1.VMStorageConnection) string { return c.Spec.TargetStorageNode.Secret.Name }
	tests := []struct {
		name  string
		conns []kofv1.VMStorageConnection
		want  Desired
	}{
		{name: "none", want: Desired{Args: map[string]string{}}},
		{
			name:  "plain in-cluster node",
			conns: []kofv1.VMStorageConnection{conn("a", "vmauth-cluster:8427/vls", nil, nil)},
			want:  Desired{Args: map[string]string{ArgStorageNode: "vmauth-cluster:8427/vls"}},
		},
		{
			name: "auth and TLS on one of two nodes",
			conns: []kofv1.VMStorageConnection{
				conn("a", "vmauth.r1.example.com:443/vls", creds, &kofv1.StorageTLSConfig{Enabled: true, InsecureSkipVerify: true}),
				conn("b", "vmauth-cluster:8427/vls", nil, nil),
			},
			want: Desired{
				Args: map[string]string{
					ArgStorageNode:           "vmauth.r1.example.com:443/vls,vmauth-cluster:8427/vls",
					ArgUsernameFile:          "/etc/vm/secrets/kof-vmuser-creds-admin-r1-abc/username,",
					ArgPasswordFile:          "/etc/vm/secrets/kof-vmuser-creds-admin-r1-abc/password,",
					ArgTLS:                   "true,false",
					ArgTLSInsecureSkipVerify: "true,false",
				},
				Secrets: []string{"kof-vmuser-creds-admin-r1-abc"},
			},
		},
		{
			name: "one Secret shared by two nodes is mounted once",
			conns: []kofv1.VMStorageConnection{
				conn("a", "n1:443", creds, nil),
				conn("b", "n2:443", creds, nil),
			},
			want: Desired{
				Args: map[string]string{
					ArgStorageNode:  "n1:443,n2:443",
					ArgUsernameFile: "/etc/vm/secrets/kof-vmuser-creds-admin-r1-abc/username,/etc/vm/secrets/kof-vmuser-creds-admin-r1-abc/username",
					ArgPasswordFile: "/etc/vm/secrets/kof-vmuser-creds-admin-r1-abc/password,/etc/vm/secrets/kof-vmuser-creds-admin-r1-abc/password",
				},
				Secrets: []string{"kof-vmuser-creds-admin-r1-abc"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, DesiredFor(tt.conns, byName)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeSecrets(t *testing.T) {
	tests := []struct {
		name                    string
		current, previous, ours []string
		want                    []string
	}{
		{"first mount keeps foreign", []string{"tls-ca"}, nil, []string{"creds-a"}, []string{"creds-a", "tls-ca"}},
		{"removed connection unmounts only ours", []string{"creds-a", "creds-b", "tls-ca"}, []string{"creds-a", "creds-b"}, []string{"creds-b"}, []string{"creds-b", "tls-ca"}},
		{"nothing left", []string{"creds-a"}, []string{"creds-a"}, nil, nil},
		{"no duplicates", []string{"creds-a"}, nil, []string{"creds-a"}, []string{"creds-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MergeSecrets(tt.current, tt.previous, tt.ours)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCurrentArgsKeepsOnlyManagedKeys(t *testing.T) {
	got := CurrentArgs(map[string]string{ArgStorageNode: "a:1", "search.maxQueryDuration": "30s", ArgTLS: "true"})
	want := map[string]string{ArgStorageNode: "a:1", ArgTLS: "true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCheckAddress(t *testing.T) {
	for _, ok := range []string{"vmauth-cluster:8427/vls", "https://vmauth.r1.example.com/vls"} {
		if p := checkAddress(ok); p != "" {
			t.Errorf("checkAddress(%q) = %q, want no problem", ok, p)
		}
	}
	for _, bad := range []string{"", "a:1,b:2", "a:1 b:2"} {
		if p := checkAddress(bad); !strings.Contains(p, "spec.target_storage_node.address") {
			t.Errorf("checkAddress(%q) = %q, want a problem naming the field", bad, p)
		}
	}
}

// compareKeys orders connections as their joined `namespace/name` keys order (the storageNode args follow it).
func TestCompareKeysIsJoinedOrder(t *testing.T) {
	keys := [][2]string{{"a", "b"}, {"a-x", "c"}, {"a", "b-c"}, {"a", ""}, {"", "a"}, {"ab", "a"}, {"a", "ba"}, {"a/b", "c"}, {"a", "b/c"}}
	for _, x := range keys {
		for _, y := range keys {
			want := strings.Compare(x[0]+"/"+x[1], y[0]+"/"+y[1])
			if got := compareKeys(x[0], x[1], y[0], y[1]); got != want {
				t.Errorf("compareKeys(%q, %q) = %d, want %d", x, y, got, want)
			}
		}
	}
}
