package sveltos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLintMultiClusterService(t *testing.T) {
	mcs := obj(t, `
apiVersion: k0rdent.mirantis.com/v1beta1
kind: MultiClusterService
metadata:
  name: kof-child-cluster
spec:
  serviceSpec:
    services:
    - name: kof-operators
      template: kof-operators-2-0-0
      values: |
        a: {{ .Cluster.metadata.name }}
    - name: kof-collectors
      template: kof-collectors-2-0-0
      values: |
        b:
          c: {{ .Cluster.metadata.labels | toYaml | nindent 4 }}
    - name: no-values
      template: x
`)
	got, err := LintMultiClusterService(mcs)
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, f := range got {
		summary = append(summary, f.Service+":"+string(f.Rule))
	}
	if diff := cmp.Diff([]string{"kof-collectors:multiline-output"}, summary); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(got) == 1 && !strings.HasPrefix(got[0].String(), "service kof-collectors: line 2: multiline-output") {
		t.Errorf("String() = %q", got[0].String())
	}
}

func TestLintMultiClusterServiceErrors(t *testing.T) {
	cases := map[string]string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n": "not a k0rdent.mirantis.com MultiClusterService",
		"apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata: {name: x}\nspec: {serviceSpec: {services: [{name: a, values: {a: 1}}]}}\n": "services[0].values: not a string",
		"apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata: {name: x}\nspec: {serviceSpec: {services: [1]}}\n":                         "services[0]: not an object",
	}
	for text, want := range cases {
		if _, err := LintMultiClusterService(obj(t, text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if _, err := LintMultiClusterService(nil); err == nil {
		t.Error("nil accepted")
	}
}
