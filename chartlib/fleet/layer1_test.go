package fleet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/manifest"
)

// Layer1 replaces the umbrella render: given the objects the umbrella rendered, every cluster receives the same
// services and objects as with the values themselves.
func TestLayer1ReplacesUmbrellaRender(t *testing.T) {
	clusters := []*unstructured.Unstructured{clusterTemplate("aws-standalone"), regional("regional-1", "us-east-2"),
		child("child-1", "us-east-2", nil)}
	values := map[string]any{"kof-mothership": map[string]any{"values": map[string]any{
		"operator": map[string]any{"replicas": 1}}}}
	want := renderFleet(t, Options{Clusters: clusters, Values: values})
	got := renderFleet(t, Options{Clusters: clusters, Layer1: want.Umbrella.Objects()})
	if len(got.Clusters) != len(want.Clusters) {
		t.Fatalf("%d clusters, want %d", len(got.Clusters), len(want.Clusters))
	}
	for i, c := range want.Clusters {
		if diff := cmp.Diff(received(c), received(got.Clusters[i])); diff != "" {
			t.Errorf("cluster %s (-values +layer1):\n%s", c.Name, diff)
		}
	}
	dep := got.Cluster("mgmt").Service("kof-mothership").Objects.Get("Deployment", "kof", "kof-mothership-operator")
	if dep == nil {
		t.Fatal("kof-mothership renders no operator Deployment from the given layer 1")
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 1 {
		t.Errorf("operator replicas = %d, want 1 from the given HelmRelease's spec.values", r)
	}
	for _, o := range got.Umbrella.Entries() {
		if o.Source != LiveSource {
			t.Errorf("umbrella object %s has source %q, want %q", manifest.KeyOf(o.Unstructured), o.Source, LiveSource)
		}
	}
}

// received lists `service: object key` for every object of every service of c, errors included.
func received(c *Cluster) []string {
	var out []string
	for _, s := range c.Services {
		if s.Err != nil {
			out = append(out, s.Name+": error "+s.Err.Error())
		}
		if s.Objects == nil || s.Name == "kof" {
			continue
		}
		for _, o := range s.Objects.Objects() {
			out = append(out, s.Name+": "+manifest.KeyOf(o).String())
		}
	}
	return out
}
