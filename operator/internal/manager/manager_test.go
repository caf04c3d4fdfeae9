package manager

import (
	"runtime/debug"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// The operator's API client gets the configured limits (client-go's defaults would throttle a large fleet), and a
// bad limit is an error naming the flag and the chart value, the input left unchanged.
func TestWithClientLimits(t *testing.T) {
	in := &rest.Config{Host: "https://api.example", QPS: 5, Burst: 10}
	out, err := WithClientLimits(in, DefaultQPS, DefaultBurst)
	if err != nil {
		t.Fatal(err)
	}
	if out.QPS != 50 || out.Burst != 100 || out.Host != in.Host {
		t.Errorf("limits qps %g burst %d host %q, want 50, 100, %q", out.QPS, out.Burst, out.Host, in.Host)
	}
	if in.QPS != 5 || in.Burst != 10 {
		t.Errorf("the input was changed: qps %g burst %d", in.QPS, in.Burst)
	}
	for _, tt := range []struct {
		qps   float64
		burst int
		want  string
	}{
		{0, 10, "--kube-api-qps=0"}, {-1, 10, "operator.kubeAPI.qps"}, {20, 0, "--kube-api-burst=0"},
		{20, 10, "operator.kubeAPI.burst"},
	} {
		if _, err := WithClientLimits(in, tt.qps, tt.burst); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("qps %g burst %d: error %v, want one naming %s", tt.qps, tt.burst, err, tt.want)
		}
	}
}

// The cache keeps only the operator's managedFields entries: another manager's are dropped, the operator's kept as
// they are, and an object with none of the operator's is left without managedFields.
func TestKeepOwnManagedFields(t *testing.T) {
	ours := metav1.ManagedFieldsEntry{Manager: kofv1.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}
	other := metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{other, ours, other}}}
	out, err := KeepOwnManagedFields(cm)
	if err != nil || out != any(cm) {
		t.Fatalf("transform returned %v, %v", out, err)
	}
	if got := cm.ManagedFields; len(got) != 1 || got[0].Manager != kofv1.FieldManager || string(got[0].FieldsV1.Raw) != `{"f:data":{}}` {
		t.Errorf("managedFields %+v, want only the operator's entry", got)
	}
	cd := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{other}}}
	if _, err := KeepOwnManagedFields(cd); err != nil || cd.ManagedFields != nil {
		t.Errorf("managedFields %+v (err %v), want none", cd.ManagedFields, err)
	}
	if out, err := KeepOwnManagedFields("not an object"); err != nil || out != "not an object" {
		t.Errorf("non-object: %v, %v", out, err)
	}
}

// A negative --gc-percent is an error naming the flag and the chart value; 0 leaves the runtime's setting.
func TestSetGCPercent(t *testing.T) {
	err := SetGCPercent(-5)
	if err == nil || !strings.Contains(err.Error(), "--gc-percent=-5") || !strings.Contains(err.Error(), "operator.gcPercent") {
		t.Errorf("SetGCPercent(-5) = %v, want an error naming the flag and the value", err)
	}
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	if err := SetGCPercent(0); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(77); got != 77 {
		t.Errorf("SetGCPercent(0) changed the GC percent to %d", got)
	}
	if err := SetGCPercent(DefaultGCPercent); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(77); got != DefaultGCPercent {
		t.Errorf("GC percent %d, want %d", got, DefaultGCPercent)
	}
}
