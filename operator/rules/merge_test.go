package rules

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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

// crashExpr is deliberately odd (spacing, line break) so that any re-formatting shows.
const crashExpr = "max_over_time(kube_pod_container_status_waiting_reason{reason=\"CrashLoopBackOff\", job=\"kube-state-metrics\"}[5m])   >= 1\n  # keep me"

func defaultRules() []monitoringv1.PrometheusRule {
	d := func(s string) *monitoringv1.Duration { v := monitoringv1.Duration(s); return &v }
	return []monitoringv1.PrometheusRule{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kof", Name: "b-k8s-rules"},
			Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{
				Name: "k8s.rules",
				Rules: []monitoringv1.Rule{
					{Record: "node:cpu:sum", Expr: intstr.FromString("sum by (node) (rate(cpu[5m]))")},
					{Record: "node:mem:sum", Expr: intstr.FromString("sum by (node) (mem)")},
				},
			}}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kof", Name: "a-apps"},
			Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{
				Name:     "kubernetes-apps",
				Interval: d("1m"),
				Rules: []monitoringv1.Rule{
					{Alert: "KubePodCrashLooping", Expr: intstr.FromString(crashExpr), For: d("15m"),
						Labels: map[string]string{"severity": "warning"}, Annotations: map[string]string{"summary": "crash"}},
					{Alert: "KubeDeploymentReplicasMismatch", Expr: intstr.FromString("up == 0"), For: d("15m")},
					{Record: "apps:count", Expr: intstr.FromInt32(1)},
				},
			}}},
		},
	}
}

func TestFromPrometheusRules(t *testing.T) {
	groups := FromPrometheusRules(defaultRules())
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if diff := cmp.Diff([]string{"kubernetes-apps", "k8s.rules"}, names); diff != "" {
		t.Errorf("group order (-want +got):\n%s", diff)
	}
	if got := groups[0].Rules[0].Expr; got != crashExpr {
		t.Errorf("expr = %q, want it unchanged %q", got, crashExpr)
	}
	if got := groups[0].Rules[2].Expr; got != "1" {
		t.Errorf("integer expr = %q, want \"1\"", got)
	}
	if groups[0].Interval != "1m" || groups[0].Rules[0].For != "15m" {
		t.Errorf("interval/for = %q/%q, want 1m/15m", groups[0].Interval, groups[0].Rules[0].For)
	}
}

func TestForOnlyPatchKeepsExpr(t *testing.T) {
	in := Input{
		Groups: FromPrometheusRules(defaultRules()),
		Sources: []Source{{Namespace: "kof", Name: "c1-alerts", Kind: Alert, Cluster: "c1",
			Data: map[string]string{"kubernetes-apps": "KubePodCrashLooping:\n  for: 10m\n"}}},
	}
	out, problems := Merge(in, Output{})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	var file ruleFile
	if err := yaml.UnmarshalStrict([]byte(out.PromxyFiles["__c1__kubernetes-apps.yaml"]), &file); err != nil {
		t.Fatalf("cluster file: %v\n%s", err, out.PromxyFiles["__c1__kubernetes-apps.yaml"])
	}
	want := []Group{{Name: "__c1__kubernetes-apps", Interval: "1m", Rules: []Rule{{
		Alert: "KubePodCrashLooping", Expr: crashExpr, For: "10m",
		Labels: map[string]string{"severity": "warning"}, Annotations: map[string]string{"summary": "crash"},
	}}}}
	if diff := cmp.Diff(want, file.Groups); diff != "" {
		t.Errorf("cluster group (-want +got):\n%s", diff)
	}
	var def ruleFile
	if err := yaml.UnmarshalStrict([]byte(out.PromxyFiles["kubernetes-apps.yaml"]), &def); err != nil {
		t.Fatal(err)
	}
	if got := def.Groups[0].Rules[0]; got.For != "15m" || got.Expr != crashExpr {
		t.Errorf("default rule changed by a cluster patch: %+v", got)
	}
}

func TestPatchApply(t *testing.T) {
	s := func(v string) *string { return &v }
	base := Rule{Alert: "A", Expr: "x > 1", For: "5m", Labels: map[string]string{"a": "1", "b": "2"}}
	tests := []struct {
		name  string
		patch Patch
		want  Rule
	}{
		{"empty patch", Patch{}, base},
		{"for only", Patch{For: s("10m")}, Rule{Alert: "A", Expr: "x > 1", For: "10m", Labels: base.Labels}},
		{"expr and labels merged", Patch{Expr: s("x > 2"), Labels: map[string]string{"b": "3", "c": "4"}},
			Rule{Alert: "A", Expr: "x > 2", For: "5m", Labels: map[string]string{"a": "1", "b": "3", "c": "4"}}},
		{"keep firing and annotations", Patch{KeepFiringFor: s("1m"), Annotations: map[string]string{"d": "e"}},
			Rule{Alert: "A", Expr: "x > 1", For: "5m", KeepFiringFor: "1m", Labels: base.Labels, Annotations: map[string]string{"d": "e"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.patch.Apply(base)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			got.Labels["mutated"] = "yes"
			if _, ok := base.Labels["mutated"]; ok {
				t.Error("Apply shares the labels map with its input")
			}
		})
	}
}

func TestMergeGolden(t *testing.T) {
	in := Input{
		Groups:   FromPrometheusRules(defaultRules()),
		Clusters: []string{"r1", "r2"},
		Sources: []Source{
			{Namespace: "kof", Name: "defaults-alerts", Kind: Alert, Cluster: "",
				Data: map[string]string{"kubernetes-apps": "KubeDeploymentReplicasMismatch:\n  labels: {severity: critical}\n"}},
			{Namespace: "kof", Name: "r1-alerts", Kind: Alert, Cluster: "r1",
				Data: map[string]string{"custom": "DiskFull:\n  expr: disk_free < 0.1\n  for: 5m\n"}},
			{Namespace: "kof", Name: "defaults-records", Kind: Record, Cluster: "",
				Data: map[string]string{"k8s.rules": "node:mem:sum:\n  labels: {team: infra}\n"}},
			{Namespace: "ns2", Name: "r2-records", Kind: Record, Cluster: "r2",
				Data: map[string]string{"k8s.rules": "node:cpu:sum:\n  expr: sum(rate(cpu[1m]))\n"}},
			{Namespace: "ns3", Name: "r3-records", Kind: Record, Cluster: "r3",
				Data: map[string]string{"extra": "my:record:\n  expr: vector(1)\n"}},
		},
	}
	out, problems := Merge(in, Output{})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	got, err := yaml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "merge.yaml", got)
	// Semantic checks, so that a regenerated golden cannot hide a regression.
	if diff := cmp.Diff([]string{"__r1__custom.yaml", "kubernetes-apps.yaml"}, slices.Sorted(maps.Keys(out.PromxyFiles))); diff != "" {
		t.Errorf("promxy files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"r1", "r2", "r3"}, slices.Sorted(maps.Keys(out.VMRules))); diff != "" {
		t.Errorf("vmrules clusters (-want +got):\n%s", diff)
	}
	var r2 vmRulesValues
	if err := yaml.UnmarshalStrict([]byte(out.VMRules["r2"]), &r2); err != nil {
		t.Fatal(err)
	}
	wantR2 := []Rule{
		{Record: "node:cpu:sum", Expr: "sum(rate(cpu[1m]))"},
		{Record: "node:mem:sum", Expr: "sum by (node) (mem)", Labels: map[string]string{"team": "infra"}},
	}
	if diff := cmp.Diff(wantR2, r2.VMRules.Groups["k8s.rules"]); diff != "" {
		t.Errorf("r2 k8s.rules (-want +got):\n%s", diff)
	}
	if strings.Contains(out.PromxyFiles["kubernetes-apps.yaml"], "apps:count") {
		t.Error("a recording rule leaked into the promxy alert files")
	}
}

func TestMergeBadInputKeepsOutputs(t *testing.T) {
	groups := FromPrometheusRules(defaultRules())
	good := []Source{
		{Namespace: "kof", Name: "c1-alerts", Kind: Alert, Cluster: "c1",
			Data: map[string]string{"kubernetes-apps": "KubePodCrashLooping:\n  for: 10m\n"}},
		{Namespace: "kof", Name: "c2-alerts", Kind: Alert, Cluster: "c2",
			Data: map[string]string{"kubernetes-apps": "KubePodCrashLooping:\n  for: 20m\n"}},
		{Namespace: "kof", Name: "c1-records", Kind: Record, Cluster: "c1",
			Data: map[string]string{"k8s.rules": "node:cpu:sum:\n  for: 1m\n"}},
	}
	prev, problems := Merge(Input{Groups: groups, Sources: good}, Output{})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	tests := []struct {
		name        string
		change      func([]Source) []Source
		wantProblem string
		check       func(t *testing.T, out Output)
	}{
		{
			name: "bad cluster YAML keeps that cluster, updates others",
			change: func(s []Source) []Source {
				s[0].Data = map[string]string{"kubernetes-apps": "KubePodCrashLooping: [unclosed"}
				s[1].Data = map[string]string{"kubernetes-apps": "KubePodCrashLooping:\n  for: 30m\n"}
				return s
			},
			wantProblem: `kof/c1-alerts: ConfigMap kof/c1-alerts data["kubernetes-apps"]`,
			check: func(t *testing.T, out Output) {
				if out.PromxyFiles["__c1__kubernetes-apps.yaml"] != prev.PromxyFiles["__c1__kubernetes-apps.yaml"] {
					t.Error("c1 file changed although its source is bad")
				}
				if !strings.Contains(out.PromxyFiles["__c2__kubernetes-apps.yaml"], "for: 30m") {
					t.Errorf("c2 file not updated: %s", out.PromxyFiles["__c2__kubernetes-apps.yaml"])
				}
			},
		},
		{
			name: "unknown patch field",
			change: func(s []Source) []Source {
				s[2].Data = map[string]string{"k8s.rules": "node:cpu:sum:\n  fore: 1m\n"}
				return s
			},
			wantProblem: `unknown field "fore"`,
			check: func(t *testing.T, out Output) {
				if out.VMRules["c1"] != prev.VMRules["c1"] {
					t.Errorf("c1 vmrules changed:\n%s\nwas\n%s", out.VMRules["c1"], prev.VMRules["c1"])
				}
			},
		},
		{
			name: "bad defaults keep every alert file",
			change: func(s []Source) []Source {
				s[1].Data = map[string]string{"kubernetes-apps": "KubePodCrashLooping:\n  for: 30m\n"}
				return append(s, Source{Namespace: "kof", Name: "defaults", Kind: Alert, Data: map[string]string{"g": ":\n- ]"}})
			},
			wantProblem: "kof/defaults",
			check: func(t *testing.T, out Output) {
				if diff := cmp.Diff(prev.PromxyFiles, out.PromxyFiles); diff != "" {
					t.Errorf("promxy files changed (-prev +got):\n%s", diff)
				}
				if diff := cmp.Diff(prev.VMRules, out.VMRules); diff != "" {
					t.Errorf("vmrules changed although only alert defaults are bad (-prev +got):\n%s", diff)
				}
			},
		},
		{
			name: "patch of a missing rule without expr",
			change: func(s []Source) []Source {
				s[0].Data = map[string]string{"kubernetes-apps": "NoSuchAlert:\n  for: 1m\n"}
				return s
			},
			wantProblem: `rule "NoSuchAlert" not found; set expr to add it`,
			check: func(t *testing.T, out Output) {
				if out.PromxyFiles["__c1__kubernetes-apps.yaml"] != prev.PromxyFiles["__c1__kubernetes-apps.yaml"] {
					t.Error("c1 file changed although its patch is invalid")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sources := make([]Source, len(good))
			copy(sources, good)
			out, problems := Merge(Input{Groups: groups, Sources: tt.change(sources)}, prev)
			if len(problems) != 1 {
				t.Fatalf("problems = %v, want exactly one", problems)
			}
			if !strings.Contains(problems[0].Error(), tt.wantProblem) {
				t.Errorf("problem %q does not contain %q", problems[0].Error(), tt.wantProblem)
			}
			tt.check(t, out)
		})
	}
}

func TestFileName(t *testing.T) {
	tests := []struct{ cluster, group, want string }{
		{"", "kubernetes-apps", "kubernetes-apps.yaml"},
		{"c1", "k8s.rules", "__c1__k8s.rules.yaml"},
		{"", "my group/1", "my_group_1.yaml"},
	}
	for _, tt := range tests {
		if got := FileName(tt.cluster, tt.group); got != tt.want {
			t.Errorf("FileName(%q, %q) = %q, want %q", tt.cluster, tt.group, got, tt.want)
		}
	}
}

func FuzzSourceParse(f *testing.F) {
	f.Add("A:\n  for: 1m\n")
	f.Add("A: [")
	f.Add("")
	f.Fuzz(func(t *testing.T, data string) {
		s := Source{Namespace: "ns", Name: "n", Kind: Alert, Cluster: "c", Data: map[string]string{"g": data}}
		_, _ = Merge(Input{Groups: FromPrometheusRules(defaultRules()), Sources: []Source{s}}, Output{})
	})
}
