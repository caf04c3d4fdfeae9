// Package apply writes the operator's children with server-side apply under one field manager, and only when the
// desired object differs from the live one, so that a resync writes nothing (docs/design.md, decision 5).
package apply

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the one field manager of every write the KOF operator makes.
const FieldManager = "kof-operator"

// Applier applies desired objects. Reader is where live objects are read from (the manager's cached client, or the
// same client as Writer in tests); Writer performs the server-side apply.
type Applier struct {
	Reader client.Reader
	Writer client.Client
}

// Apply server-side applies desired unless every field it sets already has that value in the live object (read
// through Reader). desired must carry its kind (set by this function from the Writer's scheme), name and, when
// namespaced, namespace. It returns whether a write happened and the API error, if any.
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

	current, ok := reflectNew(desired)
	err = a.Reader.Get(ctx, client.ObjectKeyFromObject(desired), current)
	switch {
	case err == nil && ok:
		cur, cerr := toUnstructured(current)
		if cerr != nil {
			return false, cerr
		}
		if Contains(cur.Object, want.Object) {
			return false, nil
		}
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("get %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	}
	if err := a.Writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(want),
		client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("apply %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(desired), err)
	}
	return true, nil
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

// Contains reports whether every field set in want has the same value in have: maps are compared key by key
// (extra keys in have are ignored, being defaults or other managers' fields), lists element by element with equal
// length, scalars by equality (an absent field in have equals a zero scalar in want).
func Contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		for k, wv := range w {
			if !Contains(h[k], wv) {
				return false
			}
		}
		return true
	case []any:
		h, _ := have.([]any)
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !Contains(h[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return true
	default:
		if have == nil {
			return isZero(w)
		}
		return reflect.DeepEqual(have, want)
	}
}

func isZero(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case float64:
		return x == 0
	default:
		return false
	}
}
