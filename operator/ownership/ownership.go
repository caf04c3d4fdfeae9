// Package ownership tells which fields of a live Kubernetes object a field manager owns by server-side apply, and
// whether two JSON objects are the same once server-side apply's empty values are dropped. The operator writes
// only when what it owns differs from what it wants (operator/internal/apply); tests compare what the operator
// wrote with what operator/outputs predicts. Source: Kubernetes server-side apply, "Field management"
// (https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management).
package ownership

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Owned returns the part of live (an object as a JSON map) whose fields manager owns by server-side apply: the
// fields listed in its managedFields entry of operation Apply on the main resource, with their live values. It
// returns nil when manager has applied nothing, and an error when that entry's fieldsV1 cannot be read.
//
// The projection follows the field set alone, without a schema: `f:` names a map field, `k:` the list element
// whose key fields match, `v:` a set element, `i:` an index; a leaf takes the live value whole (an atomic list or
// map included).
func Owned(live map[string]any, managed []metav1.ManagedFieldsEntry, manager string) (map[string]any, error) {
	for _, e := range managed {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" ||
			e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", manager, err)
		}
		out, _ := project(live, set).(map[string]any)
		return out, nil
	}
	return nil, nil
}

// project returns the part of v that set covers (nil when none).
func project(v any, set *fieldpath.Set) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		set.Members.Iterate(func(pe fieldpath.PathElement) {
			if pe.FieldName != nil {
				if fv, ok := x[*pe.FieldName]; ok {
					out[*pe.FieldName] = fv
				}
			}
		})
		set.Children.Iterate(func(pe fieldpath.PathElement) {
			child, _ := set.Children.Get(pe)
			if pe.FieldName == nil {
				return
			}
			if fv, ok := x[*pe.FieldName]; ok {
				if p := project(fv, child); p != nil {
					out[*pe.FieldName] = p
				}
			}
		})
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		var out []any
		for i, item := range x {
			if p, ok := projectItem(i, item, set); ok {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	default:
		return nil
	}
}

// projectItem returns the owned part of list element item (at index i) and whether set names it.
func projectItem(i int, item any, set *fieldpath.Set) (any, bool) {
	var found any
	ok := false
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		if ok || !matches(pe, i, item) {
			return
		}
		child, _ := set.Children.Get(pe)
		found, ok = project(item, child), true
		if pe.Key != nil {
			found = withKeys(found, item, *pe.Key)
		}
	})
	if ok {
		return found, true
	}
	set.Members.Iterate(func(pe fieldpath.PathElement) {
		if ok || !matches(pe, i, item) {
			return
		}
		// A listed element without listed fields is owned whole (an atomic element, such as an owner reference).
		found, ok = item, true
	})
	return found, ok
}

// matches reports whether path element pe selects list element item at index i.
func matches(pe fieldpath.PathElement, i int, item any) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == i
	case pe.Value != nil:
		return value.Equals(*pe.Value, value.NewValueInterface(item))
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			fv, ok := m[f.Name]
			if !ok || !value.Equals(f.Value, value.NewValueInterface(fv)) {
				return false
			}
		}
		return true
	}
	return false
}

// withKeys adds the key fields of item to the projected element p, so that an owned element always carries the
// keys that identify it.
func withKeys(p, item any, keys value.FieldList) any {
	m, _ := p.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	src, _ := item.(map[string]any)
	for _, f := range keys {
		if v, ok := src[f.Name]; ok {
			m[f.Name] = v
		}
	}
	return m
}

// Same reports whether two JSON values are equal once nil values, empty maps and empty lists are dropped
// (server-side apply keeps no trace of an empty map or list it was sent).
func Same(a, b any) bool { return reflect.DeepEqual(normalize(a), normalize(b)) }

// Digest returns a short digest of the JSON value v (base64url of the first 16 bytes of the SHA-256 of a canonical
// encoding of v once normalized as Same normalizes): two values Same reports equal have the same digest. The
// encoding is written in one pass over v, without the normalized copy (map keys sorted; a number the same as JSON
// would print it the same, so int64(1) and float64(1) agree; nil, empty maps and empty lists left out as Same leaves
// them out). It returns "" when v holds a value JSON cannot encode.
func Digest(v any) string {
	bp := digestBuffers.Get().(*[]byte)
	b, ok := appendCanonical((*bp)[:0], v)
	sum := sha256.Sum256(b)
	*bp = b[:0]
	digestBuffers.Put(bp)
	if !ok {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// digestBuffers holds the encoding buffers of Digest.
var digestBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// empty reports whether normalize(v) is nil: v is nil, an empty list, or a map whose every value is empty.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !empty(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

// appendCanonical appends the canonical encoding of normalize(v) to b (Digest): a tag byte per value, strings and
// map keys length-prefixed, map entries by key. It returns false for a value JSON cannot encode.
func appendCanonical(b []byte, v any) ([]byte, bool) {
	if empty(v) {
		return append(b, 'n'), true
	}
	switch x := v.(type) {
	case map[string]any:
		var small [16]string
		keys := small[:0]
		for k, e := range x {
			if !empty(e) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b = binary.AppendUvarint(append(b, 'm'), uint64(len(keys)))
		ok := true
		for _, k := range keys {
			b = append(binary.AppendUvarint(b, uint64(len(k))), k...)
			if b, ok = appendCanonical(b, x[k]); !ok {
				return b, false
			}
		}
		return b, true
	case []any:
		b = binary.AppendUvarint(append(b, 'l'), uint64(len(x)))
		ok := true
		for _, e := range x {
			if b, ok = appendCanonical(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case string:
		return append(binary.AppendUvarint(append(b, 's'), uint64(len(x))), x...), true
	case bool:
		if x {
			return append(b, 't'), true
		}
		return append(b, 'f'), true
	case int64:
		return binary.AppendVarint(append(b, 'i'), x), true
	case int:
		return binary.AppendVarint(append(b, 'i'), int64(x)), true
	case int32:
		return binary.AppendVarint(append(b, 'i'), int64(x)), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return b, false // JSON has no such number
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return binary.AppendVarint(append(b, 'i'), int64(x)), true
		}
		return binary.BigEndian.AppendUint64(append(b, 'd'), math.Float64bits(x)), true
	}
	j, err := json.Marshal(normalize(v)) // any other type: its JSON
	if err != nil {
		return b, false
	}
	return append(binary.AppendUvarint(append(b, 'j'), uint64(len(j))), j...), true
}

// normalize returns v without nil values, empty maps and empty lists, at any depth (nil when nothing is left).
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if n := normalize(e); n != nil {
				out[k] = n
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	default:
		return v
	}
}

// Prune removes nil values and empty maps from obj at any depth, giving the form the operator applies: a struct field
// whose zero value Go encodes as null or {} is no field the operator sets, and an apply that sends null for a field
// it owned fails validation (`must be of type object: "null"`) instead of removing it.
func Prune(obj map[string]any) {
	for k, v := range obj {
		switch x := v.(type) {
		case nil:
			delete(obj, k)
		case map[string]any:
			Prune(x)
			if len(x) == 0 {
				delete(obj, k)
			}
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok {
					Prune(m)
				}
			}
		}
	}
}
