package fleet

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploymentOf returns the indexed deployment name of objs, failing the test when absent.
func deploymentOf(t *testing.T, objs []*unstructured.Unstructured, name string) *deployment {
	t.Helper()
	in, err := readInputs(objs, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range in.deployments {
		if d.name == name {
			return d
		}
	}
	t.Fatalf("no deployment %s", name)
	return nil
}

// problemsOf renders objs and returns the problems of cluster name, one per line.
func problemsOf(t *testing.T, objs []*unstructured.Unstructured, name string) string {
	t.Helper()
	c := renderFleet(t, Options{Clusters: objs}).Cluster(name)
	if c == nil {
		t.Fatalf("no cluster %s", name)
	}
	return strings.Join(c.Problems(), "\n")
}

func TestChildWithoutClusterTemplateNamesSpecTemplate(t *testing.T) {
	noSpec := child("c1", "us-east-2", nil)
	delete(noSpec.Object, "spec")
	tests := []struct {
		name string
		cd   *unstructured.Unstructured
		want string
	}{
		{"no spec", noSpec, "its cloud is unknown: spec.template: missing; name the ClusterTemplate"},
		{"template not given", child("c1", "us-east-2", nil),
			`its cloud is unknown: spec.template: ClusterTemplate "aws-standalone" not found in kcm-system; create it (or, for kof render, add it to the --clusters file)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := problemsOf(t, []*unstructured.Unstructured{tt.cd, regional("r1", "us-east-2")}, "c1"); !strings.Contains(got, tt.want) {
				t.Errorf("problems = %s, want one containing %q", got, tt.want)
			}
		})
	}
	// With the template given, or bound by label, the cloud is not needed or known: no problem.
	for _, objs := range [][]*unstructured.Unstructured{
		{child("c1", "us-east-2", nil), clusterTemplate("aws-standalone"), regional("r1", "us-east-2")},
		{child("c1", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": "r1"}),
			regional("r1", "us-east-2")},
	} {
		if got := problemsOf(t, objs, "c1"); got != "" {
			t.Errorf("problems: %s", got)
		}
	}
}

func TestClusterDeploymentWithoutNamespace(t *testing.T) {
	cd := child("c1", "us-east-2", nil)
	cd.SetNamespace("")
	d := deploymentOf(t, []*unstructured.Unstructured{cd}, "c1")
	want := `metadata.namespace: ClusterDeployment "c1" has none; ClusterDeployments are namespaced, set metadata.namespace`
	if len(d.errs) != 1 || !strings.Contains(d.errs[0].Error(), want) {
		t.Errorf("errs = %v, want one containing %q", d.errs, want)
	}
	// The cluster fails with that error alone: no operator problem or service failure naming it "/c1", and the
	// warnings call it "c1 (no namespace)" (regression: "/c1" and "ConfigMap /kof-cluster-config-c1").
	f := renderFleet(t, Options{Clusters: []*unstructured.Unstructured{cd, clusterTemplate("aws-standalone")}})
	c := f.Cluster("c1")
	if c == nil || len(c.Problems()) != 1 || !strings.Contains(c.Problems()[0], want) || len(c.Services) != 0 {
		t.Errorf("cluster c1: %+v; want only the namespace error and no services", c)
	}
	cd.SetLabels(map[string]string{"k0rdent.mirantis.com/kof-cluster-role": "chlid"})
	w := InputWarnings([]*unstructured.Unstructured{cd})
	if len(w) != 1 || !strings.HasPrefix(w[0], "ClusterDeployment c1 (no namespace): label ") {
		t.Errorf("warnings = %q, want one about ClusterDeployment c1 (no namespace)", w)
	}
}

// A label or annotation value YAML reads as a number or boolean (an unquoted tenant id 123) fails that cluster
// naming the key and the quoting fix (regression: "cannot convert int64 to string", and the cluster lost its role).
func TestNonStringLabelNamesTheKey(t *testing.T) {
	cd := child("c1", "us-east-2", nil)
	labels, _, _ := unstructured.NestedMap(cd.Object, "metadata", "labels")
	labels["k0rdent.mirantis.com/kof-tenant-id"] = int64(123)
	if err := unstructured.SetNestedMap(cd.Object, labels, "metadata", "labels"); err != nil {
		t.Fatal(err)
	}
	f := renderFleet(t, Options{Clusters: []*unstructured.Unstructured{cd, clusterTemplate("aws-standalone"),
		regional("r1", "us-east-2")}})
	c := f.Cluster("c1")
	want := []string{"ClusterDeployment kcm-system/c1: metadata.labels[k0rdent.mirantis.com/kof-tenant-id]: 123 is " +
		"a number, not a string; quote it (k0rdent.mirantis.com/kof-tenant-id: \"123\"): label values are strings"}
	if c == nil || c.Role != RoleChild || !slices.Equal(c.Problems(), want) {
		t.Errorf("cluster c1: %+v; want role child and problems %q", c, want)
	}
}

func TestRegionalLabelNamesAChild(t *testing.T) {
	objs := []*unstructured.Unstructured{
		child("c1", "us-east-2", nil),
		child("c2", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": "c1"}),
		clusterTemplate("aws-standalone"),
	}
	got := problemsOf(t, objs, "c2")
	want := `cluster kcm-system/c1 named by label k0rdent.mirantis.com/kof-regional-cluster-name exists but its role is "child", not "regional"`
	if !strings.Contains(got, want) {
		t.Errorf("problems = %s, want one containing %q", got, want)
	}
}

func TestInputWarnings(t *testing.T) {
	typo := child("c1", "us-east-2", nil)
	typo.SetAnnotations(map[string]string{
		"k0rdent.mirantis.com/kof-collector-values": "{}",
		"k0rdent.mirantis.com/kof-storage-values":   "{}",
		"example.com/kof-collector-values":          "{}",
		"k0rdent.mirantis.com/kof-cluster-role":     "child",
	})
	typo.SetLabels(map[string]string{
		"k0rdent.mirantis.com/kof-cluster-role": "chlid",
		"k0rdent.mirantis.com/kcm-managed":      "true",
		"k0rdent.mirantis.com/istio-rol":        "member",
	})
	if err := unstructured.SetNestedField(typo.Object, map[string]any{"k0rdent.mirantis.com/kof-regional-domian": "x"},
		"spec", "config", "clusterAnnotations"); err != nil {
		t.Fatal(err)
	}
	got := InputWarnings([]*unstructured.Unstructured{typo, regional("r1", "us-east-2")})
	want := []string{
		"ClusterDeployment kcm-system/c1: label k0rdent.mirantis.com/istio-rol is not a KOF key and is ignored; did you mean k0rdent.mirantis.com/istio-role?",
		`ClusterDeployment kcm-system/c1: label k0rdent.mirantis.com/kof-cluster-role: value "chlid" is neither "regional" nor "child", so KOF ignores the cluster; did you mean "child"?`,
		"ClusterDeployment kcm-system/c1: annotation k0rdent.mirantis.com/kof-cluster-role is ignored here: it is a KOF label key; move it to the labels",
		"ClusterDeployment kcm-system/c1: annotation k0rdent.mirantis.com/kof-collector-values is not a KOF key and is ignored; did you mean k0rdent.mirantis.com/kof-collectors-values?",
		"ClusterDeployment kcm-system/c1: spec.config.clusterAnnotations: annotation k0rdent.mirantis.com/kof-regional-domian is not a KOF key and is ignored; did you mean k0rdent.mirantis.com/kof-regional-domain?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("InputWarnings =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A ClusterDeployment with another apiVersion is named (regression: it was ignored without a word), and the typo
// warnings hold inside a v1 List as kubectl prints it.
func TestInputWarningsWrongAPIVersionAndList(t *testing.T) {
	wrong := regional("r2", "us-east-2")
	wrong.SetAPIVersion("v1")
	typo := child("c1", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-cluster-role": "chlid"})
	list := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List",
		"items": []any{typo.Object, wrong.Object}}}
	got := strings.Join(InputWarnings([]*unstructured.Unstructured{list}), "\n")
	for _, want := range []string{
		`ClusterDeployment kcm-system/c1: label k0rdent.mirantis.com/kof-cluster-role: value "chlid"`,
		`ClusterDeployment kcm-system/r2: apiVersion "v1" is not KCM's (k0rdent.mirantis.com/v1beta1), so KOF ignores it; set apiVersion: k0rdent.mirantis.com/v1beta1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("InputWarnings =\n%s\nwant a line containing %q", got, want)
		}
	}
}

// TestClusterDeploymentWithoutName: a ClusterDeployment without metadata.name is an error naming its index (issue:
// it was dropped silently and a child then offered `[kcm-system/]` as the regional cluster to choose).
func TestClusterDeploymentWithoutName(t *testing.T) {
	noName := regional("r1", "us-east-2")
	noName.SetName("")
	_, err := Render(context.Background(), Options{ChartsDir: chartsDir, Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), noName, child("c1", "us-east-2", nil)}})
	want := `cluster inputs: object 2 (k0rdent.mirantis.com/v1beta1 ClusterDeployment in namespace "kcm-system") has no metadata.name`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Render error = %v, want one containing %q", err, want)
	}
}

// A regional cluster the operator refuses (no domain) fails kof-storage's valuesFrom naming the operator's problem
// as the fix, as a child's templateResourceRefs do (regression: "ConfigMap ... not found; create it" alone).
func TestRegionalWithoutDomainBlamesOperator(t *testing.T) {
	r := regional("r1", "us-east-2")
	r.SetAnnotations(nil)
	got := problemsOf(t, []*unstructured.Unstructured{clusterTemplate("aws-standalone"), r}, "r1")
	want := "valuesFrom[0]: ConfigMap kcm-system/kof-record-vmrules-r1 not found; create it or set optional: true " +
		"(the kof-operator makes ConfigMap kcm-system/kof-record-vmrules-r1 and makes none of this cluster's objects " +
		"while it reports InvalidAnnotation: fix that first)"
	if !strings.Contains(got, want) {
		t.Errorf("problems of r1:\n%s\nwant one containing %q", got, want)
	}
}
