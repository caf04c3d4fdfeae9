package release

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// References finds container images at any depth and the VictoriaMetrics operator's {repository, tag} images.
func TestReferences(t *testing.T) {
	deploy := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment",
		"metadata": map[string]any{"name": "op", "namespace": "kof"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"initContainers": []any{map[string]any{"image": "r.example.com/init:1"}},
			"containers":     []any{map[string]any{"image": "r.example.com/kof/kof-operator:2.0.0@sha256:ab"}},
		}}}}}
	vm := &unstructured.Unstructured{Object: map[string]any{"kind": "VMCluster",
		"metadata": map[string]any{"name": "cluster", "namespace": "kof"},
		"spec": map[string]any{"vmselect": map[string]any{"image": map[string]any{
			"repository": "victoriametrics/vmselect", "tag": "v1.126.0-cluster"}},
			"vmstorage": map[string]any{"image": map[string]any{"repository": "victoriametrics/vmstorage"}}}}}
	got := References([]*unstructured.Unstructured{deploy, vm})
	want := []Reference{
		{Object: "Deployment kof/op", Field: "spec.template.spec.containers[0].image",
			Ref: "r.example.com/kof/kof-operator:2.0.0@sha256:ab"},
		{Object: "Deployment kof/op", Field: "spec.template.spec.initContainers[0].image", Ref: "r.example.com/init:1"},
		{Object: "VMCluster kof/cluster", Field: "spec.vmselect.image", Ref: "victoriametrics/vmselect:v1.126.0-cluster"},
		{Object: "VMCluster kof/cluster", Field: "spec.vmstorage.image", Ref: "victoriametrics/vmstorage"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("References (-want +got):\n%s", diff)
	}
}
