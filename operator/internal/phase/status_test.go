package phase

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

func groupFields(g *kofv1.PromxyServerGroup) (*int64, *[]metav1.Condition) {
	return &g.Status.ObservedGeneration, &g.Status.Conditions
}

// PatchStatus writes the condition, its Ready copy and the observed generation once, reports a Ready change only
// when there is one, and leaves a deleted object alone.
func TestPatchStatus(t *testing.T) {
	s := runtime.NewScheme()
	if err := kofv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	g := &kofv1.PromxyServerGroup{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "kof", Generation: 3}}
	cl := fake.NewClientBuilder().WithScheme(s).WithObjects(g).WithStatusSubresource(g).Build()
	ctx := context.Background()
	c := metav1.Condition{Type: kofv1.ConditionPromxyConfigured, Status: metav1.ConditionTrue,
		Reason: kofv1.ReasonSucceeded, Message: "part of the promxy config", ObservedGeneration: 3}

	read := func() *kofv1.PromxyServerGroup {
		got := &kofv1.PromxyServerGroup{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(g), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	changed, err := PatchStatus(ctx, cl, nil, "PromxyServerGroup", read(), groupFields, c)
	if err != nil || !changed {
		t.Fatalf("first publish: changed %v, err %v; want a Ready change", changed, err)
	}
	got := read()
	ready := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionReady)
	own := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionPromxyConfigured)
	if got.Status.ObservedGeneration != 3 || ready == nil || own == nil || ready.Reason != c.Reason ||
		ready.Message != c.Message || own.Status != metav1.ConditionTrue {
		t.Fatalf("status after publish = %+v", got.Status)
	}

	rv := got.ResourceVersion
	if changed, err := PatchStatus(ctx, cl, nil, "PromxyServerGroup", got, groupFields, c); err != nil || changed {
		t.Errorf("same condition again: changed %v, err %v; want no change", changed, err)
	}
	if read().ResourceVersion != rv {
		t.Error("same condition again: the status was patched")
	}

	c.Message = "other"
	if changed, err := PatchStatus(ctx, cl, nil, "PromxyServerGroup", read(), groupFields, c); err != nil || !changed {
		t.Errorf("new message: changed %v, err %v; want a Ready change", changed, err)
	}

	gone := read()
	if err := cl.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	c.Message = "after deletion"
	if changed, err := PatchStatus(ctx, cl, nil, "PromxyServerGroup", gone, groupFields, c); err != nil || changed {
		t.Errorf("deleted object: changed %v, err %v; want neither", changed, err)
	}
}

// With Statuses, a reconcile that reads the object as it was before this process's last status patch (a lagging
// cache) neither patches the same status again nor reports a Ready change (a second Event); a new condition is still
// patched, and an object that holds the patched version is compared as usual.
func TestPatchStatusBehindCache(t *testing.T) {
	s := runtime.NewScheme()
	if err := kofv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	g := &kofv1.PromxyServerGroup{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "kof", Generation: 1}}
	cl := fake.NewClientBuilder().WithScheme(s).WithObjects(g).WithStatusSubresource(g).Build()
	ctx := context.Background()
	read := func() *kofv1.PromxyServerGroup {
		got := &kofv1.PromxyServerGroup{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(g), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	c := metav1.Condition{Type: kofv1.ConditionPromxyConfigured, Status: metav1.ConditionTrue,
		Reason: kofv1.ReasonSucceeded, Message: "part of the promxy config", ObservedGeneration: 1}

	// Without the memory, the object read before the patch gets the same status patched again.
	stale := read()
	if _, err := PatchStatus(ctx, cl, nil, "PromxyServerGroup", stale.DeepCopy(), groupFields, c); err != nil {
		t.Fatal(err)
	}
	rv := read().ResourceVersion
	if changed, err := PatchStatus(ctx, cl, nil, "PromxyServerGroup", stale.DeepCopy(), groupFields, c); err != nil || !changed {
		t.Fatalf("no memory, stale object: changed %v, err %v; want the Ready change reported again", changed, err)
	}
	if read().ResourceVersion == rv {
		t.Fatal("no memory, stale object: no second patch; the test no longer shows what Statuses prevents")
	}

	var mem Statuses
	c.Message = "with memory"
	stale = read()
	if changed, err := PatchStatus(ctx, cl, &mem, "PromxyServerGroup", stale.DeepCopy(), groupFields, c); err != nil || !changed {
		t.Fatalf("first patch with memory: changed %v, err %v", changed, err)
	}
	patched := read()
	for i := range 3 {
		if changed, err := PatchStatus(ctx, cl, &mem, "PromxyServerGroup", stale.DeepCopy(), groupFields, c); err != nil || changed {
			t.Fatalf("stale object, same condition (%d): changed %v, err %v; want neither", i, changed, err)
		}
	}
	if got := read(); got.ResourceVersion != patched.ResourceVersion {
		t.Fatalf("stale object, same condition: status patched again (resource version %s, want %s)", got.ResourceVersion, patched.ResourceVersion)
	}

	c.Status, c.Reason, c.Message = metav1.ConditionFalse, kofv1.ReasonApplyFailed, "broken"
	if changed, err := PatchStatus(ctx, cl, &mem, "PromxyServerGroup", stale.DeepCopy(), groupFields, c); err != nil || !changed {
		t.Fatalf("stale object, new condition: changed %v, err %v; want a Ready change", changed, err)
	}
	got := read()
	if ready := meta.FindStatusCondition(got.Status.Conditions, kofv1.ConditionReady); ready == nil || ready.Message != "broken" ||
		ready.Status != metav1.ConditionFalse {
		t.Fatalf("stale object, new condition: Ready = %+v", ready)
	}

	// The object at the patched version: compared as read, the entry dropped.
	if changed, err := PatchStatus(ctx, cl, &mem, "PromxyServerGroup", got, groupFields, c); err != nil || changed {
		t.Fatalf("current object, same condition: changed %v, err %v; want neither", changed, err)
	}
	if len(mem.m) != 0 {
		t.Errorf("memory after the cache caught up: %v; want empty", mem.m)
	}
}
