// Package controlplane checks that the real control plane KOF's tests use (kube-apiserver and etcd built by
// ci/tools.sh into bin/) starts through controller-runtime envtest and serves reads and writes.
package controlplane

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"kof.dev/kof/internal/testproc"
)

func TestControlPlaneServesNamespacesAndConfigMaps(t *testing.T) {
	env := &envtest.Environment{}
	testproc.Envtest(t, env, testproc.AssetsDir(t))
	cfg, err := env.Start()
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("start control plane from %s (run `make tools`): %v", env.BinaryAssetsDirectory, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	ctx := context.Background()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kof"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kof-regional-1", Namespace: "kof"},
		Data:       map[string]string{"regional_cluster_name": "regional-1"},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("create configmap: %v", err)
	}

	var gotNS corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: "kof"}, &gotNS); err != nil {
		t.Fatalf("read namespace back: %v", err)
	}
	if gotNS.UID == "" {
		t.Errorf("namespace read back without a UID: the server did not store it")
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("read configmap back: %v", err)
	}
	if got.Data["regional_cluster_name"] != "regional-1" {
		t.Errorf("configmap data = %v, want regional_cluster_name=regional-1", got.Data)
	}
	if got.ResourceVersion == "" {
		t.Errorf("configmap read back without a resourceVersion")
	}
}
