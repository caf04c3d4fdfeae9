package cacheconfig

import (
	"testing"
	"unsafe"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
)

// ours is the operator's server-side apply entry owning the label managed-by and data.a.
var ours = metav1.ManagedFieldsEntry{Manager: kofv1.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
	FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:` + kofv1.ManagedByLabel + `":{}}},"f:data":{"f:a":{}}}`)}}

// other is another manager's entry.
var other = metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate,
	FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:b":{}}}`)}}

// The cache keeps, of the managedFields, the digest of what the operator owns: the annotation holds
// apply.OwnedDigest of the object as it came, no managedFields entry is left, and the rest of the object is intact.
func TestKeepOwnedDigest(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns",
		Labels:        map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy},
		Annotations:   map[string]string{"user": "kept"},
		ManagedFields: []metav1.ManagedFieldsEntry{other, ours}},
		Data: map[string]string{"a": "1", "b": "2"}}
	want, ok := apply.OwnedDigest(cm.DeepCopy())
	if !ok || want == "" {
		t.Fatalf("OwnedDigest = %q, %t; want a digest", want, ok)
	}
	out, err := KeepOwnedDigest(cm)
	if err != nil || out != any(cm) {
		t.Fatalf("transform returned %v, %v", out, err)
	}
	if cm.ManagedFields != nil || cm.Annotations[apply.DigestAnnotation] != want || cm.Annotations["user"] != "kept" ||
		cm.Data["a"] != "1" || cm.Data["b"] != "2" {
		t.Errorf("after the transform: managedFields %v, annotations %v, data %v; want none, the digest %q and the "+
			"user's, data intact", cm.ManagedFields, cm.Annotations, cm.Data, want)
	}
	// The digest follows the owned values: another value of data.a, another digest; a value only helm owns, the same.
	changed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy},
		ManagedFields: []metav1.ManagedFieldsEntry{ours}}, Data: map[string]string{"a": "2", "b": "2"}}
	helmOnly := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy},
		ManagedFields: []metav1.ManagedFieldsEntry{ours}}, Data: map[string]string{"a": "1", "b": "3"}}
	if d, _ := apply.OwnedDigest(changed); d == want {
		t.Errorf("a changed owned value kept the digest %q", d)
	}
	if d, _ := apply.OwnedDigest(helmOnly); d != want {
		t.Errorf("a change of a field the operator does not own changed the digest: %q, want %q", d, want)
	}
}

// An object the operator applied nothing to keeps no managedFields and loses a digest annotation someone else set
// (apply would otherwise trust it); an object whose operator entry cannot be read keeps that entry alone, so that
// apply reads it, and gets no digest.
func TestKeepOwnedDigestWithoutDigest(t *testing.T) {
	forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Annotations:   map[string]string{apply.DigestAnnotation: "forged", "user": "kept"},
		ManagedFields: []metav1.ManagedFieldsEntry{other}}}
	if _, err := KeepOwnedDigest(forged); err != nil {
		t.Fatal(err)
	}
	if _, ok := forged.Annotations[apply.DigestAnnotation]; ok || forged.Annotations["user"] != "kept" || len(forged.ManagedFields) != 0 {
		t.Errorf("annotations %v, managedFields %v; want the user's annotation alone and no entry", forged.Annotations, forged.ManagedFields)
	}
	bad := ours
	bad.FieldsV1 = &metav1.FieldsV1{Raw: []byte(`not json`)}
	broken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{other, bad}}}
	if _, err := KeepOwnedDigest(broken); err != nil {
		t.Fatal(err)
	}
	if _, ok := broken.Annotations[apply.DigestAnnotation]; ok || len(broken.ManagedFields) != 1 || broken.ManagedFields[0].Manager != kofv1.FieldManager {
		t.Errorf("annotations %v, managedFields %v; want no digest and the operator's entry alone", broken.Annotations, broken.ManagedFields)
	}
	if out, err := KeepOwnedDigest("not an object"); err != nil || out != "not an object" {
		t.Errorf("non-object: %v, %v", out, err)
	}
}

// VMUsers and MultiClusterServices keep their metadata and the digest alone; a child ConfigMap loses its data, and
// every other ConfigMap (here a regional one and a user's with the child prefix but no owner) keeps it.
func TestMetadataOnlyKinds(t *testing.T) {
	labels := map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy}
	user := &vmapi.VMUser{ObjectMeta: metav1.ObjectMeta{Name: "u", Labels: labels, ManagedFields: []metav1.ManagedFieldsEntry{ours}}}
	user.Spec.Username = ptr.To("kof")
	mcs := &kcmv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: labels, ManagedFields: []metav1.ManagedFieldsEntry{ours}}}
	mcs.Spec.ServiceSpec.Priority = 5
	mcs.Status.Conditions = []metav1.Condition{{Type: "Ready"}}
	for _, o := range []any{user, mcs} {
		if _, err := MetadataAndDigest(o); err != nil {
			t.Fatal(err)
		}
	}
	if user.Spec.Username != nil || user.Name != "u" || user.Labels[kofv1.ManagedByLabel] == "" || user.Annotations[apply.DigestAnnotation] == "" {
		t.Errorf("VMUser after the transform: %+v; want its metadata and digest alone", user)
	}
	if mcs.Spec.ServiceSpec.Priority != 0 || len(mcs.Status.Conditions) != 0 || mcs.Name != "m" || mcs.Annotations[apply.DigestAnnotation] == "" {
		t.Errorf("MultiClusterService after the transform: %+v; want its metadata and digest alone", mcs)
	}

	owner := metav1.OwnerReference{APIVersion: kcmv1.GroupVersion.String(), Kind: kcmv1.ClusterDeploymentKind, Name: "c1",
		UID: "u1", Controller: ptr.To(true)}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigMap("c1"), OwnerReferences: []metav1.OwnerReference{owner},
		Labels:        map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy, kofv1.RegionalClusterNameLabel: "r1"},
		ManagedFields: []metav1.ManagedFieldsEntry{ours}}, Data: map[string]string{"a": "1"}}
	regional := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.RegionalConfigMap("cluster-config-r"),
		OwnerReferences: []metav1.OwnerReference{owner},
		Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy, kofv1.ClusterRoleLabel: kofv1.RoleRegional,
			kofv1.RegionalClusterNameLabel: "r1"},
		ManagedFields: []metav1.ManagedFieldsEntry{ours}}, Data: map[string]string{"a": "1"}}
	users := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names.ChildConfigMap("c2"),
		Labels: map[string]string{kofv1.ManagedByLabel: kofv1.ManagedBy, kofv1.RegionalClusterNameLabel: "r1"}},
		Data: map[string]string{"a": "1"}}
	for _, cm := range []*corev1.ConfigMap{child, regional, users} {
		if _, err := ConfigMaps(cm); err != nil {
			t.Fatal(err)
		}
	}
	if child.Data != nil || child.Annotations[apply.DigestAnnotation] == "" {
		t.Errorf("child ConfigMap: data %v, annotations %v; want no data and the digest", child.Data, child.Annotations)
	}
	if regional.Data["a"] != "1" || users.Data["a"] != "1" {
		t.Errorf("regional data %v, user's data %v; want both kept", regional.Data, users.Data)
	}
}

// Two objects decoded apart share their namespace, label and annotation names, label values and owner references
// once cached (one copy of each string), and keep every value.
func TestCachedMetadataSharesStrings(t *testing.T) {
	decoded := func(name string) *corev1.ConfigMap { // fresh strings, as a decoder makes them
		fresh := func(s string) string { return string([]byte(s)) }
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fresh("ns-a"),
			Labels:      map[string]string{fresh(kofv1.ManagedByLabel): fresh(kofv1.ManagedBy)},
			Annotations: map[string]string{fresh("note"): fresh(name)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("k0rdent.mirantis.com/v1beta1"),
				Kind: fresh("ClusterDeployment"), Name: fresh("c1"), UID: "0b9d7b8e-5a3c-4b1e-9d2f-1234567890ab"}}}}
	}
	a, b := decoded("a"), decoded("b")
	for _, o := range []*corev1.ConfigMap{a, b} {
		if _, err := KeepOwnedDigest(o); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are two copies, want one", what, x, y)
		}
	}
	same("namespace", a.Namespace, b.Namespace)
	for k, v := range a.Labels {
		for k2, v2 := range b.Labels {
			same("label name", k, k2)
			same("label value", v, v2)
		}
	}
	for k := range a.Annotations {
		for k2 := range b.Annotations {
			same("annotation name", k, k2)
		}
	}
	ra, rb := a.OwnerReferences[0], b.OwnerReferences[0]
	same("owner apiVersion", ra.APIVersion, rb.APIVersion)
	same("owner kind", ra.Kind, rb.Kind)
	same("owner name", ra.Name, rb.Name)
	same("owner uid", string(ra.UID), string(rb.UID))
	if a.Annotations["note"] != "a" || b.Annotations["note"] != "b" || a.Labels[kofv1.ManagedByLabel] != kofv1.ManagedBy {
		t.Errorf("values changed: %v %v %v", a.Annotations, b.Annotations, a.Labels)
	}
}
