// Package apply writes the operator's children with server-side apply under one field manager, and only when the
// desired object differs from what that field manager owns in the live object, so that a resync writes nothing
// and a field the operator stops setting is removed by the next apply (docs/design.md, decision 5).
package apply

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/ownership"
)

// FieldManager is the one field manager of every write the KOF operator makes (kofv1.FieldManager).
const FieldManager = kofv1.FieldManager

// Applier applies desired objects. Reader is where live objects are read from (the manager's cached client, or the
// same client as Writer in tests); Writer performs the server-side apply.
type Applier struct {
	Reader client.Reader
	Writer client.Client
	// Written, when set, skips re-applying what this process just applied while Reader (a cache) lags behind.
	Written *Written
	// Metadata, when set, sends the applies instead of Writer and reads back only the answer's metadata
	// (MetadataWriter); Writer still names the kinds.
	Metadata *MetadataWriter
}

// Apply server-side applies desired (ForceOwnership, field manager FieldManager) unless the fields FieldManager owns
// in the live object (read through Reader, whose objects must keep their managedFields) are exactly the fields of
// desired with the same values. A field the operator set before and desired no longer sets therefore makes a
// write, and server-side apply removes it. desired must carry its name and, when namespaced, namespace; its kind
// is set from the Writer's scheme. It returns whether a write happened and the API error, if any.
func (a Applier) Apply(ctx context.Context, desired client.Object) (bool, error) {
	gvk, err := a.Writer.GroupVersionKindFor(desired)
	if err != nil {
		return false, fmt.Errorf("kind of %T: %w", desired, err)
	}
	want, err := toUnstructured(desired)
	if err != nil {
		return false, err
	}
	want.SetGroupVersionKind(gvk)
	ownership.Prune(want.Object)

	key := gvk.Kind + "/" + client.ObjectKeyFromObject(desired).String()
	digest := ownership.Digest(appliedFields(want.Object))
	current, ok := reflectNew(desired)
	err = a.Reader.Get(ctx, client.ObjectKeyFromObject(desired), current)
	switch {
	case digest != "" && err == nil && a.Written.fresh(key, digest, current):
		return false, nil
	case err == nil && ok:
		same, cerr := unchanged(current, want, digest)
		if cerr != nil {
			return false, cerr
		}
		if same {
			return false, nil
		}
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("get %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	}
	var rv string
	if a.Metadata != nil {
		rv, err = a.Metadata.apply(ctx, gvk, want)
	} else {
		err = a.Writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(want), client.FieldOwner(FieldManager), client.ForceOwnership)
		rv = want.GetResourceVersion()
	}
	if err != nil {
		return false, fmt.Errorf("apply %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	}
	if digest != "" {
		a.Written.record(key, digest, rv)
	}
	return true, nil
}

// Own makes owner the controller of the desired object obj (an owner reference with controller true and
// blockOwnerDeletion false, so that deleting obj never waits on its owner), the one way the operator sets owner
// references. owner's kind comes from the Writer's scheme; owner and obj must share a namespace unless owner is
// cluster-scoped. The error is controller-runtime's (unknown kind, another controller, cross-namespace).
func (a Applier) Own(obj, owner client.Object) error {
	if err := controllerutil.SetControllerReference(owner, obj, a.Writer.Scheme(),
		controllerutil.WithBlockOwnerDeletion(false)); err != nil {
		return fmt.Errorf("owner of %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind,
			client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// Delete deletes obj (name and namespace set) when it exists in Reader, ignoring NotFound. It returns whether a
// delete was sent.
func (a Applier) Delete(ctx context.Context, obj client.Object) (bool, error) {
	if err := a.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return false, nil
	}
	if err := a.Writer.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("delete %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return true, nil
}

// reflectNew returns a new empty object of obj's type.
func reflectNew(obj client.Object) (client.Object, bool) {
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer {
		return nil, false
	}
	n, ok := reflect.New(t.Elem()).Interface().(client.Object)
	return n, ok
}

// toUnstructured converts obj to its JSON map without status, creationTimestamp and the server-owned metadata, so
// that it can be applied and compared.
func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"} {
			delete(md, k)
		}
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// DigestAnnotation is where the operator's informer cache keeps, on each object it holds, the digest of the fields
// FieldManager owns in it (OwnedDigest), in place of the object's managedFields (operator/internal/cacheconfig).
// The annotation exists only in the cache: every write of the operator is a server-side apply of a desired object
// or a merge patch of a change, neither of which sends it.
const DigestAnnotation = "kof.k0rdent.mirantis.com/cached-owned-digest"

// OwnedDigest returns the ownership.Digest of the fields FieldManager owns by server-side apply in obj (read from
// its managedFields, as Apply compares them), and false when FieldManager has applied nothing to obj or its
// managedFields entry cannot be read.
func OwnedDigest(obj client.Object) (string, bool) {
	owned, err := ownedFields(obj)
	if err != nil || owned == nil {
		return "", false
	}
	d := ownership.Digest(owned)
	return d, d != ""
}

// unchanged reports whether the fields FieldManager owns in current equal the fields of want (whose
// ownership.Digest is digest): by the digest the cache recorded (DigestAnnotation, on an object the cache stripped
// of managedFields; an object read from the API server always has them), else from current's managedFields
// (ownership.Owned, ownership.Same). When FieldManager owns nothing in current, want is unchanged exactly when it
// sets nothing either (an apply of no fields, such as a rules ConfigMap without rules, would change nothing).
func unchanged(current client.Object, want *unstructured.Unstructured, digest string) (bool, error) {
	if d, ok := current.GetAnnotations()[DigestAnnotation]; ok && len(current.GetManagedFields()) == 0 {
		return d != "" && d == digest, nil
	}
	owned, err := ownedFields(current)
	if err != nil {
		return false, err
	}
	if owned == nil {
		owned = map[string]any{}
	}
	return ownership.Same(owned, appliedFields(want.Object)), nil
}

// ownedFields returns the part of obj FieldManager owns by server-side apply (ownership.Owned of obj without
// status and server-set metadata), nil when it owns nothing. obj's managedFields are taken out while it is
// converted (they are read, not projected) and put back, so obj must not be read by another goroutine meanwhile.
func ownedFields(obj client.Object) (map[string]any, error) {
	mf := obj.GetManagedFields()
	obj.SetManagedFields(nil)
	cur, err := toUnstructured(obj)
	obj.SetManagedFields(mf)
	if err != nil {
		return nil, err
	}
	return ownership.Owned(cur.Object, mf, FieldManager)
}

// appliedFields returns obj without the fields server-side apply never records as owned: apiVersion, kind,
// metadata.name and metadata.namespace.
func appliedFields(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			if k != "name" && k != "namespace" {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}
