package promxy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/<name>, or rewrites the file when -update is set.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("write golden: %v", err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func regional(ns, name, cluster string) Group {
	return Group{
		Namespace: ns, Name: name, Cluster: cluster,
		Targets: []string{"vmauth." + cluster + ".kof.example.com:443"}, PathPrefix: "/vm/select/0/prometheus",
		Scheme: SchemeHTTPS, DialTimeout: "5s", InsecureSkipVerify: true,
		BasicAuth: &BasicAuth{Username: "admin-" + cluster, Password: "pw-" + cluster},
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		groups []Group
	}{
		{name: "empty.yaml"},
		{
			name: "regionless.yaml",
			opts: Options{AlertmanagerURL: "http://kof-mothership-alertmanager:9093"},
			groups: []Group{{
				Namespace: "kcm-system", Name: "promxy-server-group-a", Cluster: "mothership",
				Targets: []string{"vmauth-cluster:8427"}, PathPrefix: "/vm/select/0/prometheus", Scheme: SchemeHTTP,
			}},
		},
		{
			name: "two-regionals.yaml",
			opts: Options{
				AlertmanagerURL: "https://alertmanager.kof.example.com/am/",
				RemoteWriteURL:  "http://vminsert-cluster:8480/insert/0/prometheus/api/v1/write",
			},
			// Given out of order: the output must be sorted by namespace then name.
			groups: []Group{regional("ns2", "psg-a", "r2"), regional("ns1", "psg-b", "r1")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.opts, tt.groups)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			golden(t, tt.name, got)
		})
	}
}

func TestBuildContract(t *testing.T) {
	cfg, err := Build(Options{}, []Group{regional("ns2", "b", "r2"), regional("ns1", "z", "r1"), regional("ns1", "a", "r0")})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if cfg.Global.EvaluationInterval != "5s" || cfg.Global.ExternalLabels["source"] != "promxy" {
		t.Errorf("global = %+v, want evaluation_interval 5s and source=promxy", cfg.Global)
	}
	if diff := cmp.Diff([]string{"/etc/promxy/rules/*.yaml"}, cfg.RuleFiles); diff != "" {
		t.Errorf("rule_files (-want +got):\n%s", diff)
	}
	var order []string
	for _, sg := range cfg.Promxy.ServerGroups {
		order = append(order, sg.Labels[ClusterNamespaceLabel]+"/"+sg.Labels[ClusterLabel])
		if !sg.IgnoreError {
			t.Errorf("server group %v: ignore_error false, want true", sg.Labels)
		}
	}
	if diff := cmp.Diff([]string{"ns1/r0", "ns1/r1", "ns2/r2"}, order); diff != "" {
		t.Errorf("server group order (-want +got):\n%s", diff)
	}
	if cfg.Alerting != nil || cfg.RemoteWrite != nil {
		t.Errorf("alerting/remote_write set without options: %+v %+v", cfg.Alerting, cfg.RemoteWrite)
	}
}

func TestRenderStableAcrossInputOrder(t *testing.T) {
	a, b, c := regional("ns1", "a", "r1"), regional("ns1", "b", "r2"), regional("ns2", "a", "r3")
	first, err := Render(Options{}, []Group{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Render(Options{}, []Group{c, a, b})
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(second) {
		t.Errorf("rendering depends on input order:\n%s\n---\n%s", first, second)
	}
	var back Config
	if err := yaml.UnmarshalStrict(first, &back); err != nil {
		t.Fatalf("output does not read back into Config: %v", err)
	}
	if got := back.Promxy.ServerGroups[1].HTTPClient.BasicAuth.Username; got != "admin-r2" {
		t.Errorf("second group basic_auth.username = %q, want admin-r2", got)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		group Group
		want  []string
	}{
		{
			name:  "no targets and bad scheme",
			group: Group{Namespace: "ns", Name: "g", Scheme: "ftp"},
			want:  []string{"PromxyServerGroup ns/g", "spec.targets: empty", `spec.scheme: "ftp"`},
		},
		{
			name:  "target with path",
			group: Group{Namespace: "ns", Name: "g", Scheme: SchemeHTTP, Targets: []string{"host:80/vm"}},
			want:  []string{`spec.targets[0]: "host:80/vm" is not host:port`},
		},
		{
			name:  "bad dial timeout",
			group: Group{Namespace: "ns", Name: "g", Scheme: SchemeHTTP, Targets: []string{"h:1"}, DialTimeout: "five"},
			want:  []string{`spec.http_client.dial_timeout: "five"`},
		},
		{
			name:  "bad alertmanager",
			opts:  Options{AlertmanagerURL: "alertmanager:9093"},
			group: Group{Namespace: "ns", Name: "g", Scheme: SchemeHTTP, Targets: []string{"h:1"}},
			want:  []string{`alertmanager URL "alertmanager:9093"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.opts, []Group{tt.group})
			if err == nil {
				t.Fatal("Build: nil error, want one")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestBuildDoesNotAliasInput(t *testing.T) {
	g := regional("ns", "g", "r")
	cfg, err := Build(Options{}, []Group{g})
	if err != nil {
		t.Fatal(err)
	}
	g.Targets[0] = "changed:1"
	g.BasicAuth.Password = "changed"
	sg := cfg.Promxy.ServerGroups[0]
	if sg.StaticConfigs[0].Targets[0] == "changed:1" || sg.HTTPClient.BasicAuth.Password == "changed" {
		t.Errorf("config shares memory with its input: %+v", sg)
	}
}
