package endpoints

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
)

func TestRegional(t *testing.T) {
	const d = "regional-1.kof.example.com"
	tests := []struct {
		name        string
		in          Input
		want        Set
		wantIgnored []string
		wantErr     string
	}{
		{
			name: "domain defaults",
			in:   Input{Cluster: "regional-1", Annotations: map[string]string{kofv1.RegionalDomainAnnotation: d}},
			want: Set{
				WriteMetrics:   "https://vmauth." + d + "/vm/insert/0/prometheus/api/v1/write",
				ReadMetrics:    "https://vmauth." + d + "/vm/select/0/prometheus",
				WriteLogs:      "https://vmauth." + d + "/vli/insert/opentelemetry/v1/logs",
				ReadLogs:       "https://vmauth." + d + "/vls",
				WriteAuditLogs: "https://vmauth." + d + "/vlai/insert/opentelemetry/v1/logs",
				ReadAuditLogs:  "https://vmauth." + d + "/vlas",
				WriteTraces:    "https://vmauth." + d + "/vti/insert/opentelemetry/v1/traces",
				ReadTraces:     "https://vmauth." + d + "/vts",
			},
		},
		{
			name: "override wins",
			in: Input{Cluster: "r", Annotations: map[string]string{
				kofv1.RegionalDomainAnnotation:      "r.example.com",
				kofv1.ReadLogsEndpointAnnotation:    "https://logs.example.net/select",
				kofv1.WriteTracesEndpointAnnotation: "http://otel.example.net:4318/v1/traces",
			}},
			want: func() Set {
				s := Domain("r.example.com")
				s.ReadLogs = "https://logs.example.net/select"
				s.WriteTraces = "http://otel.example.net:4318/v1/traces"
				return s
			}(),
		},
		{
			name: "istio reads only",
			in:   Input{Cluster: "regional-istio", Istio: true, Annotations: map[string]string{kofv1.RegionalDomainAnnotation: d}},
			want: Set{
				ReadMetrics:   "http://regional-istio-vmauth:8427/vm/select/0/prometheus",
				ReadLogs:      "http://regional-istio-vmauth:8427/vls",
				ReadAuditLogs: "http://regional-istio-vmauth:8427/vlas",
				ReadTraces:    "http://regional-istio-vmauth:8427/vts",
			},
		},
		{
			name:    "no domain",
			in:      Input{Cluster: "r", Annotations: map[string]string{}},
			wantErr: "set annotation k0rdent.mirantis.com/kof-regional-domain",
		},
		{
			// A bad setting fails only what it configures: the default of the domain stays, the key is reported.
			name: "bad override keeps the domain default",
			in: Input{Cluster: "r", Annotations: map[string]string{kofv1.RegionalDomainAnnotation: d,
				kofv1.ReadMetricsEndpointAnnotation: "vmauth/select"}},
			want: Domain(d),
			wantIgnored: []string{"annotation k0rdent.mirantis.com/kof-read-metrics-endpoint: invalid URL \"vmauth/select\": " +
				"want an absolute http:// or https:// URL with a host; for example " +
				"https://vmauth.regional.example.com/vm/select/0/prometheus"},
		},
		{
			name: "bad override without a default",
			in: Input{Cluster: "r", Annotations: map[string]string{
				kofv1.WriteMetricsEndpointAnnotation: "not a url"}},
			// Each annotation's example is its own URL (regression: every one suggested a logs path, .../vls).
			wantErr: "annotation k0rdent.mirantis.com/kof-write-metrics-endpoint: invalid URL \"not a url\": want an " +
				"absolute http:// or https:// URL with a host; for example " +
				"https://vmauth.regional.example.com/vm/insert/0/prometheus/api/v1/write",
		},
		{
			name:    "bad domain",
			in:      Input{Cluster: "r", Annotations: map[string]string{kofv1.RegionalDomainAnnotation: "a/b"}},
			wantErr: "annotation k0rdent.mirantis.com/kof-regional-domain: invalid domain",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ignored, err := Regional(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Regional() error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Regional() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Regional() (-want +got):\n%s", diff)
			}
			var msgs []string
			for _, e := range ignored {
				msgs = append(msgs, e.Error())
			}
			if len(msgs) != len(tt.wantIgnored) {
				t.Fatalf("ignored = %q, want %d containing %q", msgs, len(tt.wantIgnored), tt.wantIgnored)
			}
			for i, w := range tt.wantIgnored {
				if !strings.Contains(msgs[i], w) {
					t.Errorf("ignored[%d] = %q, want containing %q", i, msgs[i], w)
				}
			}
		})
	}
}

func TestInCluster(t *testing.T) {
	s := InCluster()
	want := map[string]string{
		s.ReadMetrics:   "http://vmauth-cluster:8427/vm/select/0/prometheus",
		s.ReadLogs:      "http://vmauth-cluster:8427/vls",
		s.ReadAuditLogs: "http://vmauth-cluster:8427/vlas",
		s.ReadTraces:    "http://vmauth-cluster:8427/vts",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("InCluster read = %q, want %q", got, w)
		}
	}
}

func TestMergeMetadataWins(t *testing.T) {
	got := Merge(map[string]string{"a": "meta"}, map[string]string{"a": "spec", "b": "spec"})
	want := map[string]string{"a": "meta", "b": "spec"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
}

func TestSplit(t *testing.T) {
	got, err := Split("http://vmauth-cluster:8427/vm/select/0/prometheus/")
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Scheme: "http", Host: "vmauth-cluster:8427", Path: "/vm/select/0/prometheus"}
	if got != want {
		t.Errorf("Split = %+v, want %+v", got, want)
	}
	if _, err := Split("vmauth-cluster:8427"); err == nil {
		t.Error("Split without scheme: want error")
	}
}

// Regression: the in-mesh host was `<cluster>-vmauth` even for a cluster name of 57 or more characters, where
// kof-storage names the Service names.IstioVMAuthService (hashed, suffix kept), so children wrote to a Service that
// does not exist.
func TestIstioHostIsTheVMAuthServiceName(t *testing.T) {
	for _, c := range []string{"regional-1", strings.Repeat("r", 57), strings.Repeat("long-region-", 6)} {
		want := "http://" + names.IstioVMAuthService(c) + ":8427/vm/insert/0/prometheus/api/v1/write"
		if got := Istio(c).WriteMetrics; got != want {
			t.Errorf("Istio(%q).WriteMetrics = %q, want %q", c, got, want)
		}
		if len(names.IstioVMAuthService(c)) > 63 {
			t.Errorf("%q: Service name over 63 characters", c)
		}
	}
}
