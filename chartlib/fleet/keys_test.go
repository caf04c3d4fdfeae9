package fleet

import (
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

func TestChildWithoutClusterTemplateNamesSpecTemplate(t *testing.T) {
	noSpec := child("c1", "us-east-2", nil)
	delete(noSpec.Object, "spec")
	tests := []struct {
		name string
		cd   *unstructured.Unstructured
		want string
	}{
		{"no spec", noSpec, "ClusterDeployment kcm-system/c1: spec.template: missing; name the ClusterTemplate"},
		{"template not given", child("c1", "us-east-2", nil),
			`ClusterDeployment kcm-system/c1: spec.template: ClusterTemplate "aws-standalone" not found in kcm-system; add it to the --clusters file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := deploymentOf(t, []*unstructured.Unstructured{tt.cd, regional("r1", "us-east-2")}, "c1").discoveryCluster()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// With the template given, or bound by label, the cloud is not needed or known: no problem.
	for _, objs := range [][]*unstructured.Unstructured{
		{child("c1", "us-east-2", nil), clusterTemplate("aws-standalone")},
		{child("c1", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": "r1"})},
	} {
		if _, err := deploymentOf(t, objs, "c1").discoveryCluster(); err != nil {
			t.Errorf("discoveryCluster: %v", err)
		}
	}
}

func TestClusterDeploymentWithoutNamespace(t *testing.T) {
	cd := child("c1", "us-east-2", nil)
	cd.SetNamespace("")
	d := deploymentOf(t, []*unstructured.Unstructured{cd}, "c1")
	want := `metadata.namespace: ClusterDeployment "c1" has none; ClusterDeployments are namespaced, set metadata.namespace`
	if len(d.errs) == 0 || !strings.Contains(d.errs[0].Error(), want) {
		t.Errorf("errs = %v, want one containing %q", d.errs, want)
	}
}

func TestRegionalLabelNamesAChild(t *testing.T) {
	objs := []*unstructured.Unstructured{
		child("c1", "us-east-2", nil),
		child("c2", "us-east-2", map[string]string{"k0rdent.mirantis.com/kof-regional-cluster-name": "c1"}),
		clusterTemplate("aws-standalone"),
	}
	_, err := deploymentOf(t, objs, "c2").discoveryCluster()
	want := `label k0rdent.mirantis.com/kof-regional-cluster-name: cluster kcm-system/c1 exists but its role is "child", not "regional"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
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
