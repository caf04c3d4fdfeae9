package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const stream = `# leading comment only
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
  namespace: ns
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: z
  namespace: ns
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: a
  namespace: ns
--- # trailing document comment
apiVersion: v1
kind: Namespace
metadata:
  name: ns
`

func keys(s *Set) []string {
	var out []string
	for _, o := range s.Objects() {
		out = append(out, KeyOf(o).String())
	}
	return out
}

func TestParseOrderAndQueries(t *testing.T) {
	s, err := Parse(map[string]string{
		"c/templates/all.yaml":    stream,
		"c/templates/NOTES.txt":   "not yaml: [",
		"c/templates/_helper.tpl": "also: [not yaml",
		"c/templates/more.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace ns", "ConfigMap ns/a", "ConfigMap ns/z", "Deployment.apps ns/b",
		"HelmRelease.helm.toolkit.fluxcd.io ns/a"}
	if diff := cmp.Diff(want, keys(s)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"Namespace": 1, "ConfigMap": 2, "Deployment": 1, "HelmRelease": 1}, s.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if got := s.Get("HelmRelease.helm.toolkit.fluxcd.io", "ns", "a"); got == nil {
		t.Error("qualified Get found nothing")
	}
	if got := s.Get("HelmRelease.example.com", "ns", "a"); got != nil {
		t.Error("Get with the wrong group found an object")
	}
	if got := s.Get("ConfigMap.", "ns", "z"); got == nil {
		t.Error("core-group Get found nothing")
	}
	if _, err := s.MustGet("Secret", "ns", "x"); err == nil || !strings.Contains(err.Error(), `Secret "x"`) {
		t.Errorf("MustGet: %v", err)
	}
	if len(s.OfKind("ConfigMap")) != 2 {
		t.Errorf("OfKind(ConfigMap) = %d, want 2", len(s.OfKind("ConfigMap")))
	}
	var twice []Object
	for _, o := range s.Entries() {
		if o.GetKind() == "ConfigMap" && o.GetName() == "z" {
			twice = append(twice, o)
		}
	}
	if d := New(append(s.Entries(), twice...)...).Duplicates(); len(d) != 1 || d[0].String() != "ConfigMap ns/z" {
		t.Errorf("duplicates = %v", d)
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	s, err := Parse(map[string]string{"c/templates/all.yaml": stream})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "---\n# Source: c/templates/all.yaml\napiVersion: v1\nkind: Namespace\n") {
		t.Errorf("YAML starts with %q", string(out)[:80])
	}
	again, err := ParseDocuments("again", out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(keys(s), keys(New(again...))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"duplicate key": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n", `"name" already set`},
		"no kind":       {"apiVersion: v1\nmetadata:\n  name: a\n", "Kind"},
		"not a map":     {"- a\n- b\n", "document 1"},
		"bad yaml":      {"---\napiVersion: v1\nkind: [\n", "document 2"},
		"no name": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n" +
			"apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  namespace: kcm-system\n",
			"(document 2): k0rdent.mirantis.com/v1beta1 ClusterDeployment has no metadata.name"},
		// An unquoted y is a boolean to YAML: the name is there, but not a string (regression: "has no metadata.name").
		"boolean name": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n",
			"(document 1): v1 ConfigMap: metadata.name is the boolean true, not a string: YAML reads an unquoted y, " +
				"yes, on, true, n, no, off or false as a boolean; quote the name as you wrote it (name: \"y\")"},
		"number name": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 1234\n",
			"(document 1): v1 ConfigMap: metadata.name 1234 is not a string; quote it (name: \"1234\")"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(map[string]string{"c/templates/x.yaml": tc.doc})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "c/templates/x.yaml") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks the file or %q", err, tc.want)
			}
		})
	}
}
