package apply

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/operator/ownership"
)

// unchanged decides by the cache's digest when the object has one and no managedFields: equal for the desired
// object the digest was taken of (OwnedDigest of the live object, as the cache takes it), different once a desired
// value changes; an object read from the API server (managedFields present) is compared by its managedFields even
// when it carries the annotation.
func TestUnchangedByDigest(t *testing.T) {
	desired := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", Labels: map[string]string{"l": "1"}},
			Data:       map[string]string{"a": v}}
	}
	want := func(v string) *unstructured.Unstructured { // as Apply prepares the desired object
		u, err := toUnstructured(desired(v))
		if err != nil {
			t.Fatal(err)
		}
		ownership.Prune(u.Object)
		return u
	}
	entry := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:l":{}}},"f:data":{"f:a":{}}}`)}}
	live := desired("1")
	live.ResourceVersion, live.UID = "7", "u"
	live.Data["b"] = "someone else's"
	live.ManagedFields = []metav1.ManagedFieldsEntry{entry}
	d, ok := OwnedDigest(live)
	if !ok {
		t.Fatal("no digest of an object the operator applied")
	}
	if d != ownership.Digest(appliedFields(want("1").Object)) {
		t.Fatalf("digest of the live object %q differs from the desired object's", d)
	}
	cached := live.DeepCopy()
	cached.ManagedFields = nil
	cached.Annotations = map[string]string{DigestAnnotation: d}
	for _, c := range []struct {
		name    string
		current *corev1.ConfigMap
		value   string
		same    bool
	}{
		{"cached, same", cached, "1", true},
		{"cached, changed", cached, "2", false},
		{"live with a forged digest", func() *corev1.ConfigMap {
			o := live.DeepCopy()
			o.Annotations = map[string]string{DigestAnnotation: ownership.Digest(appliedFields(want("2").Object))}
			return o
		}(), "2", false},
		{"live, same", live, "1", true},
	} {
		got, err := unchanged(c.current, want(c.value), ownership.Digest(appliedFields(want(c.value).Object)))
		if err != nil || got != c.same {
			t.Errorf("%s: unchanged = %t, %v; want %t", c.name, got, err, c.same)
		}
	}
}

// An object FieldManager owns nothing in (a ConfigMap the chart made, cached without managedFields, or read with
// only the chart's entry) is unchanged for a desired object that sets nothing but its name (the rules ConfigMap
// without rules, which was applied again on every reconcile), and changed for one that sets a field; an object whose
// fields the operator owns is changed for a desired object that sets nothing (the apply removes them).
func TestUnchangedWhenNothingIsOwned(t *testing.T) {
	want := func(data map[string]string) (*unstructured.Unstructured, string) {
		u, err := toUnstructured(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "rules", Namespace: "kof"}, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		ownership.Prune(u.Object)
		return u, ownership.Digest(appliedFields(u.Object))
	}
	chart := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rules", Namespace: "kof", ResourceVersion: "3",
		Labels: map[string]string{"app": "kof"}}, Data: map[string]string{"chart.yaml": "x"}}
	cached := chart.DeepCopy() // as cacheconfig.KeepOwnedDigest leaves an object the operator applied nothing to
	live := chart.DeepCopy()
	live.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:app":{}}},"f:data":{"f:chart.yaml":{}}}`)}}}
	emptyEntry := live.DeepCopy() // the operator applied an object with no fields before
	emptyEntry.ManagedFields = append(emptyEntry.ManagedFields, metav1.ManagedFieldsEntry{Manager: FieldManager,
		Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{}`)}})
	owning := live.DeepCopy()
	owning.Data["a.yaml"] = "rule"
	owning.ManagedFields = append(owning.ManagedFields, metav1.ManagedFieldsEntry{Manager: FieldManager,
		Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a.yaml":{}}}`)}})
	for _, c := range []struct {
		name    string
		current *corev1.ConfigMap
		data    map[string]string
		same    bool
	}{
		{"cached, nothing owned, nothing wanted", cached, nil, true},
		{"live, helm's entry only, nothing wanted", live, nil, true},
		{"live, the operator's empty entry, nothing wanted", emptyEntry, nil, true},
		{"cached, nothing owned, a key wanted", cached, map[string]string{"a.yaml": "rule"}, false},
		{"live, nothing owned, a key wanted", live, map[string]string{"a.yaml": "rule"}, false},
		{"live, a key owned, nothing wanted", owning, nil, false},
	} {
		u, d := want(c.data)
		got, err := unchanged(c.current, u, d)
		if err != nil || got != c.same {
			t.Errorf("%s: unchanged = %t, %v; want %t", c.name, got, err, c.same)
		}
	}
}
