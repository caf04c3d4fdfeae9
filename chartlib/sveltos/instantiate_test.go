package sveltos

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// mustInstantiate runs Instantiate and fails the test on error.
func mustInstantiate(t *testing.T, in Input) Result {
	t.Helper()
	res, err := Instantiate(in)
	if err != nil {
		t.Fatalf("Instantiate(%s): %v", in.Mode, err)
	}
	return res
}

// mustFail runs Instantiate, requires an *Error and returns it.
func mustFail(t *testing.T, in Input) *Error {
	t.Helper()
	res, err := Instantiate(in)
	if err == nil {
		t.Fatalf("Instantiate(%s) = %q, want an error", in.Mode, res.Text)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Instantiate(%s) error %T %v, want *Error", in.Mode, err, err)
	}
	return e
}

func TestMissingAnnotationFailsWithSveltosMessage(t *testing.T) {
	for _, mode := range modes() {
		in := input(t, "domain: {{ .Cluster.metadata.annotations.missing }}\n", mode)
		in.Cluster, in.TemplateResourceRefs = bareCluster(t), nil
		e := mustFail(t, in)
		if !strings.Contains(e.Error(), `map has no entry for key "annotations"`) {
			t.Errorf("%s: error %q lacks Sveltos' missingkey message", mode, e)
		}
		if e.Profile != "kof-child-cluster" || e.Service != "kof-collectors" || e.Cluster != "kcm-system/adopted" || e.Line != 1 {
			t.Errorf("%s: error names %q %q %q line %d", mode, e.Profile, e.Service, e.Cluster, e.Line)
		}
		for _, want := range []string{`mcs "kof-child-cluster"`, `service "kof-collectors"`, `cluster "kcm-system/adopted"`, "line 1"} {
			if !strings.Contains(e.Error(), want) {
				t.Errorf("%s: error %q lacks %s", mode, e, want)
			}
		}
	}
}

func TestDigDefaultsWhereDotFails(t *testing.T) {
	values := `domain: {{ dig "metadata" "annotations" "k0rdent.mirantis.com/kof-regional-domain" "none" .Cluster }}
`
	for _, mode := range modes() {
		in := input(t, values, mode)
		in.Cluster, in.TemplateResourceRefs = bareCluster(t), nil
		if got := mustInstantiate(t, in).Values["domain"]; got != "none" {
			t.Errorf("%s: bare cluster domain = %v, want none", mode, got)
		}
		in.Cluster = childCluster(t)
		if got := mustInstantiate(t, in).Values["domain"]; got != "regional-1.kof.example.com" {
			t.Errorf("%s: child cluster domain = %v", mode, got)
		}
	}
}

func TestIndexOnMissingKeyYieldsNoValue(t *testing.T) {
	res := mustInstantiate(t, input(t, `x: '{{ index .Cluster.metadata.labels "absent" }}'`+"\n", SinglePass))
	if got := res.Values["x"]; got != "<no value>" {
		t.Errorf("index on a missing key = %q, want <no value>", got)
	}
}

func TestTemplateResourceRefs(t *testing.T) {
	values := `endpoint: {{ (getResource "ChildConfig").data.write_metrics_endpoint }}
hasVMUser: {{ with index .MgmtResources "VMUser" }}true{{ else }}false{{ end }}
password: {{ (getResource "Creds").data.password | b64dec }}
`
	for _, mode := range modes() {
		in := input(t, values, mode)
		in.TemplateResourceRefs = append(in.TemplateResourceRefs,
			TemplateResourceRef{Identifier: "VMUser", Optional: true,
				Resource: corev1.ObjectReference{APIVersion: "operator.victoriametrics.com/v1beta1", Kind: "VMUser", Name: "absent"}},
			TemplateResourceRef{Identifier: "Creds",
				Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "{{ .ClusterNamespace }}", Name: "kof-vmuser-creds-{{ .Cluster.metadata.name }}"}},
		)
		want := map[string]any{
			"endpoint":  "https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write",
			"hasVMUser": false,
			"password":  "s3cr3t-s3cr3t-s3cr3t",
		}
		if diff := cmp.Diff(want, mustInstantiate(t, in).Values); diff != "" {
			t.Errorf("%s: values (-want +got):\n%s", mode, diff)
		}
	}
}

func TestHasKeyOnMgmtResourcesFailsAsInSveltos(t *testing.T) {
	// .MgmtResources is map[string]map[string]any; sprig's hasKey takes map[string]any.
	e := mustFail(t, input(t, `a: {{ hasKey .MgmtResources "ChildConfig" }}`+"\n", SinglePass))
	if !strings.Contains(e.Error(), "wrong type for value") {
		t.Errorf("error %q, want a type error", e)
	}
}

func TestRequiredMissingRefFails(t *testing.T) {
	in := input(t, "a: 1\n", DoublePass)
	in.TemplateResourceRefs = append(in.TemplateResourceRefs, TemplateResourceRef{Identifier: "VMUser",
		Resource: corev1.ObjectReference{APIVersion: "operator.victoriametrics.com/v1beta1", Kind: "VMUser", Name: "kof-vmuser-{{ .ClusterName }}"}})
	e := mustFail(t, in)
	for _, want := range []string{`templateResourceRefs[1] (identifier "VMUser")`, "VMUser kcm-system/kof-vmuser-child-1 not found", "optional: true"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("error %q lacks %q", e, want)
		}
	}
}

func TestRefNameTemplateError(t *testing.T) {
	in := input(t, "a: 1\n", DoublePass)
	in.TemplateResourceRefs = []TemplateResourceRef{{Identifier: "X",
		Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "{{ .Cluster.metadata.annotations.nope }}"}}}
	in.Cluster = bareCluster(t)
	e := mustFail(t, in)
	if !strings.Contains(e.Error(), "resource.name") || !strings.Contains(e.Error(), `map has no entry for key "annotations"`) ||
		!strings.Contains(e.Error(), "kcm-system-adopted-Sveltos") {
		t.Errorf("error %q does not explain the name template failure", e)
	}
}

func TestPruning(t *testing.T) {
	cases := []struct {
		name string
		ref  TemplateResourceRef
		want map[string]any
	}{
		{
			name: "watchFields keep only their paths",
			ref:  TemplateResourceRef{WatchFields: []string{"data.regional_cluster_name", "metadata.name", "spec.absent"}},
			want: map[string]any{
				"data":     map[string]any{"regional_cluster_name": "regional-1"},
				"metadata": map[string]any{"name": "kof-cluster-config-child-1"},
			},
		},
		{
			name: "ignoreStatusChanges drops status, resourceVersion and managedFields",
			ref:  TemplateResourceRef{IgnoreStatusChanges: true},
			want: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "kof-cluster-config-child-1", "namespace": "kcm-system",
					"uid": "0b6f7c1e-0000-4000-8000-000000000001"},
				"data": map[string]any{"regional_cluster_name": "regional-1",
					"write_metrics_endpoint": "https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, "a: 1\n", SinglePass)
			ref := childConfigRef()
			ref.WatchFields, ref.IgnoreStatusChanges = tc.ref.WatchFields, tc.ref.IgnoreStatusChanges
			in.TemplateResourceRefs = []TemplateResourceRef{ref}
			got := mustInstantiate(t, in).Data.MgmtResources["ChildConfig"]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pruned object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceFunctions(t *testing.T) {
	cases := []struct {
		name, values string
		want         map[string]any
		wantErr      string
	}{
		{
			name:   "getField reads a dotted path",
			values: `name: {{ getField "ChildConfig" "data.regional_cluster_name" }}` + "\n",
			want:   map[string]any{"name": "regional-1"},
		},
		{
			name:   "getField on a missing path or id is empty",
			values: `a: '{{ getField "ChildConfig" "data.absent" }}'` + "\nb: '{{ getField \"Nope\" \"data\" }}'\n",
			want:   map[string]any{"a": "", "b": ""},
		},
		{
			name: "setField with int64 mutates the shared object",
			values: `{{- $_ := setField "ChildConfig" "spec.replicas" (int64 3) }}
replicas: {{ getField "ChildConfig" "spec.replicas" }}
`,
			want: map[string]any{"replicas": float64(3)},
		},
		{
			name:    "setField with an int fails as in Sveltos",
			values:  `{{ setField "ChildConfig" "spec.replicas" 3 }}`,
			wantErr: "cannot deep copy int",
		},
		{
			name: "chainSetField and chainRemoveField work on getResource",
			values: `{{- $cm := chainRemoveField (chainSetField (getResource "ChildConfig") "data.extra" "x") "data.regional_cluster_name" }}
data: {{ $cm.data | toJson }}
`,
			want: map[string]any{"data": map[string]any{"extra": "x",
				"write_metrics_endpoint": "https://vmauth.regional-1.kof.example.com/vm/insert/0/prometheus/api/v1/write"}},
		},
		{
			name: "copy clears resourceVersion, uid and managedFields",
			values: `{{- $c := copy "ChildConfig" | fromYaml }}
meta: {{ $c.metadata | toJson }}
`,
			want: map[string]any{"meta": map[string]any{"name": "kof-cluster-config-child-1", "namespace": "kcm-system"}},
		},
		{
			name: "removeField returns the object without the field",
			values: `{{- $c := removeField "ChildConfig" "data" | fromYaml }}
hasData: {{ hasKey $c "data" }}
`,
			want: map[string]any{"hasData": false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, tc.values, SinglePass)
			if tc.wantErr != "" {
				if e := mustFail(t, in); !strings.Contains(e.Error(), tc.wantErr) {
					t.Errorf("error %q lacks %q", e, tc.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tc.want, mustInstantiate(t, in).Values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInputObjectsAreNotModified(t *testing.T) {
	in := input(t, `{{- $_ := setField "ChildConfig" "data.regional_cluster_name" "changed" }}`+"\na: 1\n", DoublePass)
	before := in.Objects[0].DeepCopy()
	mustInstantiate(t, in)
	if diff := cmp.Diff(before.Object, in.Objects[0].Object); diff != "" {
		t.Errorf("input object changed (-before +after):\n%s", diff)
	}
}

func TestResourcesAreSharedBetweenPasses(t *testing.T) {
	// Pass 1 sets a field and emits an action that pass 2 executes against the same, mutated object.
	values := `{{- $_ := setField "ChildConfig" "data.count" "1" }}
count: '{{ "{{" }} getField "ChildConfig" "data.count" {{ "}}" }}'
`
	for mode, want := range map[Mode]string{DoublePass: "1", SinglePass: `{{ getField "ChildConfig" "data.count" }}`} {
		if got := mustInstantiate(t, input(t, values, mode)).Values["count"]; got != want {
			t.Errorf("%s: count = %q, want %q", mode, got, want)
		}
	}
}

func TestFromYamlBadInputYieldsErrorKey(t *testing.T) {
	values := `{{- $v := fromYaml "{not: yaml: at all" }}
error: {{ hasKey $v "Error" }}
`
	for _, mode := range modes() {
		if got := mustInstantiate(t, input(t, values, mode)).Values["error"]; got != true {
			t.Errorf("%s: fromYaml of bad input has Error = %v, want true", mode, got)
		}
	}
}

func TestNindentBreaksUnderDoublePass(t *testing.T) {
	values := `collectors:
  labels: {{ .Cluster.metadata.labels | toYaml | nindent 4 }}
`
	single := mustInstantiate(t, input(t, values, SinglePass)).Values
	double := mustInstantiate(t, input(t, values, DoublePass)).Values
	wantSingle := map[string]any{"collectors": map[string]any{
		"labels": map[string]any{"k0rdent.mirantis.com/kof-cluster-role": "child"}}}
	wantDouble := map[string]any{"collectors": map[string]any{
		"labels": nil, "k0rdent.mirantis.com/kof-cluster-role": "child"}}
	if diff := cmp.Diff(wantSingle, single); diff != "" {
		t.Errorf("single-pass (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDouble, double); diff != "" {
		t.Errorf("double-pass (-want +got):\n%s", diff)
	}
	if !hasRule(Lint(values), RuleMultilineOutput, 2) {
		t.Errorf("Lint(%q) = %v, want %s at line 2", values, Lint(values), RuleMultilineOutput)
	}
}

func TestSafePatternsRenderTheSameInBothModes(t *testing.T) {
	cases := map[string]string{
		"toJson flow output": "collectors:\n  labels: {{ .Cluster.metadata.labels | toJson }}\n",
		"range emitting literal lines": `labels:
{{- range $k, $v := .Cluster.metadata.labels }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
`,
		"if/else with dig defaults": `{{- $domain := dig "metadata" "annotations" "k0rdent.mirantis.com/kof-regional-domain" "" .Cluster }}
{{- if $domain }}
endpoint: {{ printf "https://vmauth.%s/vm/insert/0/prometheus/api/v1/write" $domain | quote }}
{{- else }}
endpoint: http://vmauth-cluster:8427/vm/insert/0/prometheus/api/v1/write
{{- end }}
`,
		"fromYaml checked with hasKey": `{{- $o := fromYaml (dig "metadata" "annotations" "k0rdent.mirantis.com/kof-collectors-values" "{}" .Cluster) }}
{{- if hasKey $o "Error" }}{{ fail (get $o "Error") }}{{ end }}
overrides: {{ $o | toJson }}
`,
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			single := mustInstantiate(t, input(t, values, SinglePass)).Values
			double := mustInstantiate(t, input(t, values, DoublePass)).Values
			if len(single) == 0 {
				t.Fatalf("empty values from %q", values)
			}
			if diff := cmp.Diff(single, double); diff != "" {
				t.Errorf("modes differ (-single +double):\n%s", diff)
			}
			if f := Lint(values); len(f) != 0 {
				t.Errorf("Lint = %v, want none", f)
			}
		})
	}
}

func TestTrailingSpaceBreaksQuotedActionUnderDoublePass(t *testing.T) {
	values := "role: {{ index .Cluster.metadata.labels \"k0rdent.mirantis.com/kof-cluster-role\" }} \nother: 1\n"
	if got := mustInstantiate(t, input(t, values, SinglePass)).Values["role"]; got != "child" {
		t.Errorf("single-pass role = %v, want child", got)
	}
	e := mustFail(t, input(t, values, DoublePass))
	if e.Stage != "pass 1 of 2 (values)" || !strings.Contains(e.Hint, "trailing-space") {
		t.Errorf("double-pass error stage %q hint %q, want pass 1 with a trailing-space hint", e.Stage, e.Hint)
	}
	if !hasRule(Lint(values), RuleQuoteInAction, 1) || !hasRule(Lint(values), RuleTrailingSpace, 1) {
		t.Errorf("Lint = %v, want %s and %s at line 1", Lint(values), RuleTrailingSpace, RuleQuoteInAction)
	}
}

func TestEscapedDelimitersAreExecutedByPassTwo(t *testing.T) {
	values := `name: "{{ "{{" }} .Cluster.metadata.name {{ "}}" }}"` + "\n"
	if got := mustInstantiate(t, input(t, values, SinglePass)).Values["name"]; got != "{{ .Cluster.metadata.name }}" {
		t.Errorf("single-pass name = %q", got)
	}
	if got := mustInstantiate(t, input(t, values, DoublePass)).Values["name"]; got != "child-1" {
		t.Errorf("double-pass name = %q, want child-1 (executed by pass 2)", got)
	}
}

func TestHelmOnlyAndHelmDataFail(t *testing.T) {
	cases := map[string]string{
		`a: {{ include "x" . }}`:              `function "include" not defined`,
		`a: {{ required "m" .Cluster.kind }}`: `function "required" not defined`,
		`a: {{ .Values.x }}`:                  `can't evaluate field Values`,
	}
	for values, want := range cases {
		for _, mode := range modes() {
			if e := mustFail(t, input(t, values+"\n", mode)); !strings.Contains(e.Error(), want) {
				t.Errorf("%s %q: error %q lacks %q", mode, values, e, want)
			}
		}
	}
}

func TestValuesMustBeAMapping(t *testing.T) {
	e := mustFail(t, input(t, "- a\n- b\n", SinglePass))
	if e.Stage != "parse instantiated values" || !strings.Contains(e.Hint, "mapping") {
		t.Errorf("error %q, want a parse failure asking for a mapping", e)
	}
}

func TestClusterObjectsOfCAPICluster(t *testing.T) {
	res := mustInstantiate(t, input(t, "region: {{ .InfrastructureProvider.spec.region }}\n", DoublePass))
	if got := res.Values["region"]; got != "us-east-2" {
		t.Errorf("region = %v, want us-east-2", got)
	}
	in := input(t, "a: 1\n", DoublePass)
	in.Cluster, in.TemplateResourceRefs = bareCluster(t), nil
	if got := mustInstantiate(t, in).Data.InfrastructureProvider; got != nil {
		t.Errorf("SveltosCluster infrastructure provider = %v, want nil", got)
	}
}

func TestReleaseFieldsAreTemplated(t *testing.T) {
	in := input(t, "a: 1\n", DoublePass)
	in.ServiceNamespace = "kof-{{ .Cluster.metadata.name }}"
	res := mustInstantiate(t, in)
	if res.ReleaseName != "kof-collectors" || res.ReleaseNamespace != "kof-child-1" {
		t.Errorf("release %q/%q, want kof-child-1/kof-collectors", res.ReleaseNamespace, res.ReleaseName)
	}
	in.ServiceNamespace = ""
	if res := mustInstantiate(t, in); res.ReleaseNamespace != "kof-collectors" {
		t.Errorf("empty release namespace became %q, want the service name", res.ReleaseNamespace)
	}
}

func TestInputErrors(t *testing.T) {
	in := input(t, "a: 1\n", "triple-pass")
	if e := mustFail(t, in); !strings.Contains(e.Error(), `"double-pass" or "single-pass"`) {
		t.Errorf("bad mode error %q", e)
	}
	in = input(t, "a: 1\n", DoublePass)
	in.Cluster = nil
	if e := mustFail(t, in); !strings.Contains(e.Error(), "cluster: required") {
		t.Errorf("nil cluster error %q", e)
	}
}

func TestParseMode(t *testing.T) {
	for text, want := range map[string]Mode{"": DoublePass, "double-pass": DoublePass, "single-pass": SinglePass} {
		got, err := ParseMode(text)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", text, got, err, want)
		}
	}
	if _, err := ParseMode("twice"); err == nil {
		t.Error("ParseMode(twice) succeeded")
	}
}

func TestDeterministic(t *testing.T) {
	values := `id: {{ uuidv4 }}
pw: {{ randAlphaNum 16 }}
n: {{ randInt 1 1000 }}
now: {{ now | date "2006-01-02T15:04:05Z07:00" }}
env: '{{ env "HOME" }}'
host: '{{ getHostByName "vmauth.example.com" }}'
ca: {{ (genCA "kof" 365).Cert | sha256sum }}
`
	in := input(t, values, DoublePass)
	in.Env = Environment{Vars: map[string]string{"HOME": "/kof"}, Hosts: map[string]string{"vmauth.example.com": "10.0.0.1"}}
	first := mustInstantiate(t, in)
	second := mustInstantiate(t, in)
	if diff := cmp.Diff(first.Values, second.Values); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
	if first.Values["now"] != "2025-01-01T00:00:00Z" || first.Values["env"] != "/kof" || first.Values["host"] != "10.0.0.1" {
		t.Errorf("pinned values %v", first.Values)
	}
	if pw, _ := first.Values["pw"].(string); len(pw) != 16 {
		t.Errorf("randAlphaNum 16 = %q", pw)
	}
	in.Env.Seed = 7
	if other := mustInstantiate(t, in); other.Values["id"] == first.Values["id"] || other.Values["pw"] == first.Values["pw"] {
		t.Errorf("seed 7 gave the same random values as seed 0: %v", other.Values)
	}
}

func TestSecretStringDataIsBase64Data(t *testing.T) {
	in := input(t, "user: {{ (getResource \"Creds\").data.username }}\n", SinglePass)
	in.TemplateResourceRefs = []TemplateResourceRef{{Identifier: "Creds",
		Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "kof-vmuser-creds-child-1"}}}
	if got := mustInstantiate(t, in).Values["user"]; got != "Y2hpbGQtMQ==" {
		t.Errorf("data.username = %v, want base64 of child-1", got)
	}
}

// hasRule reports whether findings hold rule at line.
func hasRule(findings []Finding, rule Rule, line int) bool {
	for _, f := range findings {
		if f.Rule == rule && f.Line == line {
			return true
		}
	}
	return false
}

func TestClusterIsFetchedAgainForPassTwo(t *testing.T) {
	// Pass 1 renames its copy of the cluster; pass 2 executes what pass 1 emitted against a fresh copy.
	values := `{{- $_ := chainSetField .Cluster "metadata.name" "renamed" }}
first: {{ .Cluster.metadata.name }}
second: {{ "{{" }} .Cluster.metadata.name {{ "}}" }}
`
	want := map[string]any{"first": "renamed", "second": "child-1"}
	if diff := cmp.Diff(want, mustInstantiate(t, input(t, values, DoublePass)).Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

func TestTemplateResourceRefDecodesFromMCS(t *testing.T) {
	// The shape of a MultiClusterService's spec.serviceSpec.templateResourceRefs.
	raw := `[{"resource":{"apiVersion":"v1","kind":"ConfigMap","name":"kof-cluster-config-{{ .ClusterName }}"},
	"identifier":"ChildConfig","optional":true,"ignoreStatusChanges":true,"watchFields":["data"]}]`
	var refs []TemplateResourceRef
	if err := json.Unmarshal([]byte(raw), &refs); err != nil {
		t.Fatal(err)
	}
	want := []TemplateResourceRef{{
		Resource:   corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "kof-cluster-config-{{ .ClusterName }}"},
		Identifier: "ChildConfig", Optional: true, IgnoreStatusChanges: true, WatchFields: []string{"data"},
	}}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}

func TestPassTwoErrorQuotesThePassOneOutput(t *testing.T) {
	values := "a: 1\nb: '{{ \"{{\" }} .Cluster.nope {{ \"}}\" }}'\n"
	e := mustFail(t, input(t, values, DoublePass))
	if e.Stage != "pass 2 of 2 (values)" || e.Line != 2 || e.Source != "b: '{{ .Cluster.nope }}'" {
		t.Errorf("error stage %q line %d source %q", e.Stage, e.Line, e.Source)
	}
	if !strings.Contains(e.Error(), `map has no entry for key "nope"`) {
		t.Errorf("error %q lacks the cause", e)
	}
	if res := mustInstantiate(t, input(t, values, SinglePass)); res.Values["b"] != "{{ .Cluster.nope }}" {
		t.Errorf("single-pass b = %v", res.Values["b"])
	}
}

func TestConcurrentInstantiateSharesNothing(t *testing.T) {
	// Run with -race: every call mutates its own copy of the referenced object.
	in := input(t, `{{- $_ := setField "ChildConfig" "data.regional_cluster_name" "changed" }}`+"\nname: {{ getField \"ChildConfig\" \"data.regional_cluster_name\" }}\n", DoublePass)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			res, err := Instantiate(in)
			if err == nil && res.Values["name"] != "changed" {
				err = fmt.Errorf("name = %v", res.Values["name"])
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got, _, _ := unstructured.NestedString(in.Objects[0].Object, "data", "regional_cluster_name"); got != "regional-1" {
		t.Errorf("input object changed to %q", got)
	}
}

func TestInstantiateProfileSharesResources(t *testing.T) {
	base := input(t, "", DoublePass)
	p := Profile{
		Name: "kof-child-cluster", Cluster: base.Cluster, TemplateResourceRefs: base.TemplateResourceRefs,
		Objects: base.Objects,
		Services: []Service{
			{Name: "kof-operators", Namespace: "kof",
				Values: `{{- $_ := setField "ChildConfig" "data.regional_cluster_name" "set-by-operators" }}` + "\na: 1\n"},
			{Name: "kof-collectors", Namespace: "kof",
				Values: `regional: {{ getField "ChildConfig" "data.regional_cluster_name" }}` + "\n"},
			{Name: "broken", Values: "b: {{ .Cluster.nope }}\n"},
		},
	}
	results, err := InstantiateProfile(p)
	var e *Error
	if !errors.As(err, &e) || e.Service != "broken" || e.Profile != "kof-child-cluster" {
		t.Fatalf("error %v, want an *Error naming service broken", err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results before the failure, want 2", len(results))
	}
	if got := results[1].Values["regional"]; got != "set-by-operators" {
		t.Errorf("second service saw %v, want the first service's setField", got)
	}
	if results[0].ReleaseName != "kof-operators" || results[1].ReleaseNamespace != "kof" {
		t.Errorf("release fields %q %q", results[0].ReleaseName, results[1].ReleaseNamespace)
	}
	// Instantiate isolates each service.
	alone := input(t, p.Services[1].Values, DoublePass)
	if got := mustInstantiate(t, alone).Values["regional"]; got != "regional-1" {
		t.Errorf("isolated service saw %v, want the object as given", got)
	}
}
