package discovery

import (
	"strings"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"github.com/google/go-cmp/cmp"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

func cd(name string, labels, ann map[string]string, config string) *kcmv1.ClusterDeployment {
	c := &kcmv1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kcm-system", Labels: labels, Annotations: ann}}
	if config != "" {
		c.Spec.Config = &apiextv1.JSON{Raw: []byte(config)}
	}
	return c
}

func tpl(providers ...string) *kcmv1.ClusterTemplate {
	t := &kcmv1.ClusterTemplate{}
	t.Status.Providers = providers
	return t
}

func role(r string) map[string]string { return map[string]string{kofv1.ClusterRoleLabel: r} }

func TestFromClusterDeployment(t *testing.T) {
	tests := []struct {
		name    string
		cd      *kcmv1.ClusterDeployment
		tpl     *kcmv1.ClusterTemplate
		cloud   string
		loc     Location
		ann     map[string]string
		wantErr string
	}{
		{name: "aws", cd: cd("a", role("child"), nil, `{"region":"us-east-2"}`), tpl: tpl("bootstrap-k0s", "infrastructure-aws"),
			cloud: "aws", loc: Location{AWSRegion: "us-east-2"}, ann: map[string]string{}},
		{name: "azure", cd: cd("a", role("child"), nil, `{"location":"westeurope"}`), tpl: tpl("infrastructure-azure"),
			cloud: "azure", loc: Location{AzureLocation: "westeurope"}, ann: map[string]string{}},
		{name: "openstack", cd: cd("a", role("child"), nil, `{"identityRef":{"region":"RegionOne"}}`), tpl: tpl("infrastructure-openstack"),
			cloud: "openstack", loc: Location{OpenStackRegion: "RegionOne"}, ann: map[string]string{}},
		{name: "vsphere", cd: cd("a", role("child"), nil, `{"vsphere":{"datacenter":"dc1"}}`), tpl: tpl("infrastructure-vsphere"),
			cloud: "vsphere", loc: Location{VSphereDatacenter: "dc1"}, ann: map[string]string{}},
		{name: "unknown provider", cd: cd("a", role("child"), nil, `{"region":"x"}`), tpl: tpl("infrastructure-hetzner"),
			cloud: "hetzner", ann: map[string]string{}},
		{name: "no template no config", cd: cd("a", role("regional"), nil, ""), ann: map[string]string{}},
		{name: "null config", cd: cd("a", role("regional"), nil, "null"), ann: map[string]string{}},
		{name: "cluster annotations, metadata wins", cd: cd("a", role("regional"), map[string]string{"x": "meta"},
			`{"clusterAnnotations":{"x":"spec","y":"spec"}}`), ann: map[string]string{"x": "meta", "y": "spec"}},
		{name: "config not object", cd: cd("a", role("child"), nil, `[1]`), wantErr: "spec.config: want an object"},
		{name: "bad cluster annotation", cd: cd("a", role("child"), nil, `{"clusterAnnotations":{"y":1}}`),
			wantErr: "spec.config.clusterAnnotations.y: want a string"},
		{name: "wrong type region", cd: cd("a", role("child"), nil, `{"region":7}`), tpl: tpl("infrastructure-aws"),
			cloud: "aws", ann: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromClusterDeployment(tt.cd, tt.tpl)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Cloud != tt.cloud || got.Location != tt.loc {
				t.Errorf("cloud, location = %q, %+v; want %q, %+v", got.Cloud, got.Location, tt.cloud, tt.loc)
			}
			if diff := cmp.Diff(tt.ann, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRole(t *testing.T) {
	for in, want := range map[string]string{"regional": "regional", "child": "child", "Regional": "", "": ""} {
		if got := Role(cd("a", role(in), nil, "")); got != want {
			t.Errorf("Role(%q) = %q, want %q", in, got, want)
		}
	}
}

func cl(name, ns, r, cloud string, loc Location, labels map[string]string) Cluster {
	if labels == nil {
		labels = map[string]string{}
	}
	return Cluster{Name: name, Namespace: ns, Role: r, Cloud: cloud, Location: loc, Labels: labels}
}

func TestFindRegional(t *testing.T) {
	use2 := Location{AWSRegion: "us-east-2"}
	regionals := []Cluster{
		cl("r-b", "other", "regional", "aws", use2, nil),
		cl("r-a", "other", "regional", "aws", use2, nil),
		cl("r-c", "kcm-system", "regional", "aws", use2, nil),
		cl("r-eu", "kcm-system", "regional", "aws", Location{AWSRegion: "eu-west-1"}, nil),
		cl("r-hz", "kcm-system", "regional", "hetzner", Location{}, nil),
		cl("not-regional", "kcm-system", "child", "aws", Location{AWSRegion: "ap-south-1"}, nil),
		cl("r-c", "kcm-system", "regional", "aws", use2, nil), // listed twice, named once in errors
	}
	tests := []struct {
		name    string
		child   Cluster
		want    string
		wantErr string
	}{
		{name: "same region prefers own namespace", child: cl("c", "kcm-system", "child", "aws", use2, nil), want: "kcm-system/r-c"},
		{name: "same region stable order", child: cl("c", "third", "child", "aws", use2, nil), want: "kcm-system/r-c"},
		{name: "same region own namespace first", child: cl("c", "other", "child", "aws", use2, nil), want: "other/r-a"},
		{name: "label wins over location", child: cl("c", "kcm-system", "child", "aws", use2,
			map[string]string{kofv1.RegionalClusterNameLabel: "r-eu"}), want: "kcm-system/r-eu"},
		{name: "label with namespace", child: cl("c", "kcm-system", "child", "", Location{},
			map[string]string{kofv1.RegionalClusterNameLabel: "r-b", kofv1.RegionalClusterNamespaceLabel: "other"}), want: "other/r-b"},
		{name: "unknown provider with label", child: cl("c", "kcm-system", "child", "hetzner", Location{},
			map[string]string{kofv1.RegionalClusterNameLabel: "r-hz"}), want: "kcm-system/r-hz"},
		{name: "unknown provider without label", child: cl("c", "kcm-system", "child", "hetzner", Location{}, nil),
			wantErr: "set labels k0rdent.mirantis.com/kof-regional-cluster-name"},
		{name: "label names missing regional", child: cl("c", "kcm-system", "child", "aws", use2,
			map[string]string{kofv1.RegionalClusterNameLabel: "gone"}), wantErr: "regional cluster kcm-system/gone named by label k0rdent.mirantis.com/kof-regional-cluster-name not found; " +
			"set it to one of the regional clusters [kcm-system/r-c kcm-system/r-eu kcm-system/r-hz other/r-a other/r-b] " +
			"(and k0rdent.mirantis.com/kof-regional-cluster-namespace to its namespace), or remove it to bind by cloud and location"},
		{name: "label names a child", child: cl("c", "kcm-system", "child", "aws", use2,
			map[string]string{kofv1.RegionalClusterNameLabel: "not-regional"}),
			wantErr: `cluster kcm-system/not-regional named by label k0rdent.mirantis.com/kof-regional-cluster-name exists but its role is "child", not "regional"`},
		{name: "unknown cloud without label", child: cl("c", "kcm-system", "child", "", Location{}, nil),
			wantErr: "its cloud is unknown: spec.template: missing"},
		{name: "template not found", child: func() Cluster {
			c := cl("c", "kcm-system", "child", "", Location{}, nil)
			c.Template = "aws-standalone"
			return c
		}(), wantErr: `its cloud is unknown: spec.template: ClusterTemplate "aws-standalone" not found in kcm-system`},
		{name: "template without provider", child: func() Cluster {
			c := cl("c", "kcm-system", "child", "", Location{}, nil)
			c.Template, c.TemplateFound = "custom", true
			return c
		}(), wantErr: "ClusterTemplate kcm-system/custom lists no infrastructure-<cloud> provider"},
		{name: "only a non-regional matches", child: cl("c", "kcm-system", "child", "aws", Location{AWSRegion: "ap-south-1"}, nil),
			wantErr: "no regional cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindRegional(tt.child, regionals)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !IsNoRegional(err) {
					t.Fatalf("error = %v, want IsNoRegional containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Key() != tt.want {
				t.Errorf("FindRegional = %s, want %s", got.Key(), tt.want)
			}
		})
	}
}

func TestRegionalData(t *testing.T) {
	r := cl("regional-1", "kcm-system", "regional", "aws", Location{AWSRegion: "us-east-2"}, nil)
	r.Annotations = map[string]string{
		kofv1.RegionalDomainAnnotation: "regional-1.kof.example.com",
		kofv1.HTTPConfigAnnotation:     `{"dial_timeout":"5s"}`,
	}
	got, ignored, err := RegionalData(r)
	if err != nil || len(ignored) > 0 {
		t.Fatal(err, ignored)
	}
	if len(got) != 17 {
		t.Errorf("len(data) = %d, want 17", len(got))
	}
	want := map[string]string{
		KeyRegionalClusterName: "regional-1", KeyRegionalClusterNamespace: "kcm-system", KeyRegionalClusterCloud: "aws",
		KeyAWSRegion: "us-east-2", KeyHTTPConfig: `{"dial_timeout":"5s","tls_config":{},"basic_auth":{}}`,
		KeyWriteMetrics: "https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write",
		KeyReadTraces:   "https://vmauth.regional-1.kof.example.com/vts",
		KeyIstioRole:    "",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, got[k], v)
		}
	}
	// A malformed promxy-side setting fails only what it configures: the endpoints stay, kof_http_config falls back
	// to the default (empty) and the annotation is reported. Input of correctness class 10, and a variant.
	for _, raw := range []string{`{"dial_timeout": 5}`, "{"} {
		r.Annotations[kofv1.HTTPConfigAnnotation] = raw
		got, ignored, err := RegionalData(r)
		if err != nil {
			t.Fatalf("http config %s: error %v, want the endpoints kept", raw, err)
		}
		if got[KeyHTTPConfig] != "" || got[KeyReadTraces] != want[KeyReadTraces] {
			t.Errorf("http config %s: kof_http_config %q, read traces %q; want the default and the endpoints", raw,
				got[KeyHTTPConfig], got[KeyReadTraces])
		}
		if len(ignored) != 1 || !strings.Contains(ignored[0].Error(), kofv1.HTTPConfigAnnotation) {
			t.Errorf("http config %s: ignored %v, want one error naming the annotation", raw, ignored)
		}
	}
}

func TestRegionlessData(t *testing.T) {
	got := RegionlessData(Ref{Name: "mothership", Namespace: "kcm-system"}, "mothership.kof.example.com")
	if len(got) != 17 {
		t.Errorf("len(data) = %d, want 17", len(got))
	}
	for k, v := range map[string]string{
		KeyWriteLogs: "https://vmauth.mothership.kof.example.com/vli/insert/opentelemetry/v1/logs",
		// Regression: the read URLs were the in-cluster ones (`http://vmauth-cluster:8427/...`), which each child's
		// ChildConfig copied, so OpenCost on a child read from an address only the management cluster resolves.
		KeyReadMetrics: "https://vmauth.mothership.kof.example.com/vm/select/0/prometheus",
		KeyReadLogs:    "https://vmauth.mothership.kof.example.com/vls",
	} {
		if got[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, got[k], v)
		}
	}
	if s := SetFromData(got); s.ReadAuditLogs != "https://vmauth.mothership.kof.example.com/vlas" {
		t.Errorf("SetFromData read audit = %q", s.ReadAuditLogs)
	}
}
