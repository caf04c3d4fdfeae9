package live

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/internal/testproc"
)

// configData renders testdata/basic and returns its ConfigMap data.
func configData(t *testing.T, opts render.Options) map[string]string {
	t.Helper()
	opts.ChartDir = "../testdata/basic"
	opts.Namespace = "kof"
	set, err := render.Chart(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	cm := set.Get("ConfigMap", "kof", "basic-config")
	if cm == nil {
		t.Fatalf("no ConfigMap; kinds %v", set.KindSummary())
	}
	data, _, err := unstructured.NestedStringMap(cm.Object, "data")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestLookupLiveClusterMatchesFixtures(t *testing.T) {
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
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kof",
		Labels: map[string]string{"istio-injection": "enabled"}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "kof"},
		Data: map[string][]byte{"username": []byte("admin")}}
	for _, obj := range []client.Object{ns, secret} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}

	live := configData(t, render.Options{RESTConfig: cfg})
	want := map[string]string{"secretFound": "true", "username": "admin", "istio": "enabled", "secretCount": "1"}
	for k, v := range want {
		if live[k] != v {
			t.Errorf("live %s = %q, want %q", k, live[k], v)
		}
	}

	var fixtures []*unstructured.Unstructured
	for _, obj := range []client.Object{ns, secret} {
		m, err := runtimeToUnstructured(c, obj)
		if err != nil {
			t.Fatal(err)
		}
		fixtures = append(fixtures, m)
	}
	offline := configData(t, render.Options{Lookup: fixtures})
	if diff := cmp.Diff(live, offline); diff != "" {
		t.Errorf("live vs fixtures (-live +fixtures):\n%s", diff)
	}
}

// runtimeToUnstructured reads obj back from the server as an unstructured object with apiVersion and kind.
func runtimeToUnstructured(c client.Client, obj client.Object) (*unstructured.Unstructured, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, err
	}
	return u, nil
}
