package sveltos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMergeValues(t *testing.T) {
	base := map[string]any{
		"a": map[string]any{"keep": 1, "over": "base", "list": []any{"x", "y"}},
		"b": "base",
	}
	got, err := MergeValues(base,
		map[string]any{"a": map[string]any{"over": "first", "list": []any{"z"}}, "c": true},
		map[string]any{"a": map[string]any{"new": 2}, "b": "second"},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": map[string]any{"keep": 1, "over": "first", "list": []any{"z"}, "new": 2},
		"b": "second",
		"c": true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	if got, err := MergeValues(nil, map[string]any{"a": 1}); err != nil || got["a"] != 1 {
		t.Errorf("MergeValues(nil, a=1) = %v, %v", got, err)
	}
}

// valuesConfigMap is a ConfigMap holding values documents, optionally a template.
func valuesConfigMap(t *testing.T, name string, template bool, data map[string]string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	u.SetNamespace("kcm-system")
	if template {
		u.SetAnnotations(map[string]string{TemplateAnnotation: "ok"})
	}
	d := map[string]any{}
	for k, v := range data {
		d[k] = v
	}
	u.Object["data"] = d
	return u
}

func TestValuesFrom(t *testing.T) {
	objects := []*unstructured.Unstructured{
		valuesConfigMap(t, "kof-record-vmrules-child-1", false, map[string]string{
			"b": "vmrules:\n  groups: [second]\nlevel: plain-b\n",
			"a": "vmrules:\n  groups: [first]\n  extra: 1\nlevel: plain-a\n",
		}),
		valuesConfigMap(t, "templated", true, map[string]string{
			"values": "level: templated\ncluster: {{ .Cluster.metadata.name }}\n",
		}),
		obj(t, `
apiVersion: v1
kind: Secret
metadata: {name: secret-values, namespace: kcm-system}
stringData:
  values: "secret: true\n"
`),
	}
	in := input(t, "vmrules:\n  groups: [inline]\n  inline: true\nlevel: inline\n", DoublePass)
	in.Objects = append(in.Objects, objects...)
	// Templated documents are merged after every plain one, whatever the list order.
	in.ValuesFrom = []ValuesFrom{
		{Kind: "ConfigMap", Name: "templated"},
		{Kind: "ConfigMap", Name: "kof-record-vmrules-{{ .Cluster.metadata.name }}"},
		{Kind: "Secret", Name: "secret-values", Namespace: "kcm-system"},
		{Kind: "ConfigMap", Name: "absent", Optional: true},
	}
	want := map[string]any{
		"vmrules": map[string]any{"groups": []any{"second"}, "inline": true, "extra": float64(1)},
		"level":   "templated",
		"cluster": "child-1",
		"secret":  true,
	}
	if diff := cmp.Diff(want, mustInstantiate(t, in).Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

func TestValuesFromNameTemplateUnderDoublePass(t *testing.T) {
	// Pass 1 also executes the valuesFrom entries against the values data, which has no .ClusterName.
	for mode, wantErr := range map[Mode]bool{DoublePass: true, SinglePass: false} {
		in := input(t, "a: 0\n", mode)
		in.Objects = append(in.Objects, valuesConfigMap(t, "v-child-1", false, map[string]string{"v": "a: 1\n"}))
		in.ValuesFrom = []ValuesFrom{{Kind: "ConfigMap", Name: "v-{{ .ClusterName }}"}}
		res, err := Instantiate(in)
		if gotErr := err != nil; gotErr != wantErr {
			t.Fatalf("%s: error %v, want error %v", mode, err, wantErr)
		}
		if wantErr && !strings.Contains(err.Error(), "pass 1 of 2 (valuesFrom)") {
			t.Errorf("%s: error %q does not name the valuesFrom pass", mode, err)
		}
		if !wantErr && res.Values["a"] != float64(1) {
			t.Errorf("%s: a = %v, want 1 from valuesFrom", mode, res.Values["a"])
		}
	}
}

func TestValuesFromErrors(t *testing.T) {
	cases := []struct {
		name string
		vf   ValuesFrom
		obj  *unstructured.Unstructured
		want string
	}{
		{
			name: "required object missing",
			vf:   ValuesFrom{Kind: "ConfigMap", Name: "absent"},
			want: "valuesFrom[0]: ConfigMap kcm-system/absent not found; create it or set optional: true",
		},
		{
			name: "document is not a mapping",
			vf:   ValuesFrom{Kind: "ConfigMap", Name: "bad"},
			obj:  valuesConfigMap(t, "bad", false, map[string]string{"values": "- a\n"}),
			want: "valuesFrom[0] key values (ConfigMap kcm-system/bad)",
		},
		{
			name: "templated document fails",
			vf:   ValuesFrom{Kind: "ConfigMap", Name: "bad"},
			obj:  valuesConfigMap(t, "bad", true, map[string]string{"values": "a: 1\nb: {{ .Cluster.nope }}\n"}),
			want: `line 2 "b: {{ .Cluster.nope }}"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, "a: 0\n", SinglePass)
			if tc.obj != nil {
				in.Objects = append(in.Objects, tc.obj)
			}
			in.ValuesFrom = []ValuesFrom{tc.vf}
			if e := mustFail(t, in); !strings.Contains(e.Error(), tc.want) {
				t.Errorf("error %q lacks %q", e, tc.want)
			}
		})
	}
}

func TestMergeValuesEmptyOverlayValuesWin(t *testing.T) {
	got, err := MergeValues(
		map[string]any{"enabled": true, "n": float64(2), "s": "x", "m": map[string]any{"k": "v"}, "l": []any{"a"}},
		map[string]any{"enabled": false, "n": float64(0), "s": "", "m": nil, "l": []any{}},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"enabled": false, "n": float64(0), "s": "", "m": nil, "l": []any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
}
