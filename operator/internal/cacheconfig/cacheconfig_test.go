package cacheconfig

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

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
