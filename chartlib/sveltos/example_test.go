package sveltos_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/sveltos"
)

// Example instantiates a child cluster's collectors values from its ClusterDeployment and the child
// ConfigMap the KOF operator writes, then lints the same text.
func Example() {
	cd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1",
		"kind":       "ClusterDeployment",
		"metadata": map[string]any{
			"name": "child-1", "namespace": "kcm-system",
			"labels": map[string]any{"k0rdent.mirantis.com/kof-cluster-role": "child"},
		},
		"spec": map[string]any{"config": map[string]any{
			"clusterAnnotations": map[string]any{"k0rdent.mirantis.com/kof-tenant-id": "team-a"},
		}},
	}}
	cluster, err := sveltos.ClusterFromDeployment(cd, sveltos.KindCAPI)
	if err != nil {
		fmt.Println(err)
		return
	}
	childConfig := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "kof-cluster-config-child-1", "namespace": "kcm-system"},
		"data":     map[string]any{"regional_cluster_name": "regional-1"},
	}}
	values := `clusterName: {{ .Cluster.metadata.name }}
tenant: {{ dig "metadata" "annotations" "k0rdent.mirantis.com/kof-tenant-id" "PLATFORM" .Cluster }}
regional: {{ getField "ChildConfig" "data.regional_cluster_name" }}
`
	res, err := sveltos.Instantiate(sveltos.Input{
		Profile: "kof-child-cluster",
		Service: "kof-collectors",
		Cluster: cluster,
		Values:  values,
		TemplateResourceRefs: []sveltos.TemplateResourceRef{{
			Identifier: "ChildConfig",
			Resource:   corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "kof-cluster-config-{{ .ClusterName }}"},
		}},
		Objects: []*unstructured.Unstructured{childConfig},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Text)
	fmt.Println(len(sveltos.Lint(values)), "findings")
	// Output:
	// clusterName: child-1
	// tenant: team-a
	// regional: regional-1
	// 0 findings
}

// ExampleLint shows the double-pass hazards of a values text.
func ExampleLint() {
	values := "collectors:\n  labels: {{ .Cluster.metadata.labels | toYaml | nindent 4 }} \n"
	for _, f := range sveltos.Lint(values) {
		fmt.Println(f.Line, f.Rule)
	}
	// Output:
	// 2 trailing-space
	// 2 multiline-output
}
