package ui

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/internal/harness"
)

// Scenario 02 (regionless): every cluster is healthy and kof doctor exits 0; the children write to the management
// cluster. It replaces scenario 01 on the control plane, so it runs after the tests that need scenario 01.
func TestDoctorRegionless(t *testing.T) {
	ctx := context.Background()
	deleteDeployments(t)
	if err := shared.installScenario(ctx, "02-regionless"); err != nil {
		t.Fatal(err)
	}
	d := settled(t)
	for _, name := range []string{"child-1", "child-2"} {
		c := d.Cluster(name)
		if c.Regional != "mgmt/mgmt" || len(c.Endpoints) == 0 ||
			c.Endpoints[0].Write != "https://vmauth.mothership.kof.example.com/vm/insert/0/prometheus/api/v1/write" {
			t.Errorf("%s: regional %q, endpoints %+v; want the management cluster's", name, c.Regional, c.Endpoints)
		}
	}
	if code, out := doctor(t); code != 0 {
		t.Errorf("kof doctor on scenario 02: exit %d, want 0:\n%s", code, out)
	}
}

// deleteDeployments deletes every ClusterDeployment and waits until the operator has removed its finalizers.
func deleteDeployments(t *testing.T) {
	t.Helper()
	c := shared.session.ControlPlane.Client
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("k0rdent.mirantis.com/v1beta1")
	list.SetKind(harness.KindClusterDeployment + "List")
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if err := client.IgnoreNotFound(c.Delete(context.Background(), &list.Items[i])); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(settleWait)
	for {
		err := c.List(context.Background(), list)
		if err != nil && !harness.Retryable(err) {
			t.Fatal(err)
		}
		if err == nil && len(list.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var left []string
			for _, cd := range list.Items {
				left = append(left, cd.GetNamespace()+"/"+cd.GetName())
			}
			t.Fatalf("ClusterDeployments %v still exist %s after deletion (last list error: %v)", left, settleWait, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
