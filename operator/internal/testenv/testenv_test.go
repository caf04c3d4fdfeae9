package testenv

import (
	"context"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// TestStart checks that the control plane starts with the KOF and KCM CRDs served.
func TestStart(t *testing.T) {
	env, err := Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()
	ctx := context.Background()
	psg := &kofv1.PromxyServerGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec:       kofv1.PromxyServerGroupSpec{ClusterName: "c", Targets: []string{"vmauth:8427"}},
	}
	if err := env.Client.Create(ctx, psg); err != nil {
		t.Fatalf("create PromxyServerGroup: %v", err)
	}
	if psg.Spec.Scheme != "https" {
		t.Errorf("defaulted scheme = %q, want https", psg.Spec.Scheme)
	}
	bad := psg.DeepCopy()
	bad.ResourceVersion, bad.Name, bad.Spec.Scheme = "", "bad", "ftp"
	if err := env.Client.Create(ctx, bad); err == nil {
		t.Error("create with scheme ftp: want a validation error")
	}
	var mcs kcmv1.MultiClusterServiceList
	if err := env.Client.List(ctx, &mcs); err != nil {
		t.Errorf("list MultiClusterServices (KCM CRD installed?): %v", err)
	}
}
