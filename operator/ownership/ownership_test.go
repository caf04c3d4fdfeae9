package ownership

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// entry returns a managedFields entry of manager with the given operation and fieldsV1 JSON.
func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestOwned(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{
			"name": "kof-r1", "namespace": "kcm-system",
			"labels": map[string]any{"mine": "1", "helm": "2"},
			"ownerReferences": []any{
				map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "u-other"},
				map[string]any{"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
					"name": "r1", "uid": "u-r1", "controller": true},
			},
			"finalizers": []any{"a/b", "c/d"},
		},
		"spec": map[string]any{
			"targets":     []any{"vmauth.r1:443"},
			"http_client": map[string]any{"tls_config": map[string]any{"insecure_skip_verify": true}},
			"other":       "not mine",
		},
		"data": map[string]any{"k": "v", "empty": ""},
	}
	managed := []metav1.ManagedFieldsEntry{
		entry("kof-operator", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:other":{}}}`),
		entry("helm", metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:helm":{}}}}`),
		entry("kof-operator", metav1.ManagedFieldsOperationApply, `{
			"f:metadata":{"f:labels":{"f:mine":{}},"f:finalizers":{"v:\"c/d\"":{}},
				"f:ownerReferences":{"k:{\"uid\":\"u-r1\"}":{".":{},"f:controller":{},"f:kind":{},"f:name":{},"f:uid":{}}}},
			"f:spec":{"f:targets":{},"f:http_client":{"f:tls_config":{"f:insecure_skip_verify":{}}}},
			"f:data":{".":{},"f:k":{},"f:empty":{}}}`),
	}
	got, err := Owned(live, managed, "kof-operator")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{
			"labels":     map[string]any{"mine": "1"},
			"finalizers": []any{"c/d"},
			"ownerReferences": []any{map[string]any{"kind": "ClusterDeployment", "name": "r1", "uid": "u-r1",
				"controller": true}},
		},
		"spec": map[string]any{
			"targets":     []any{"vmauth.r1:443"},
			"http_client": map[string]any{"tls_config": map[string]any{"insecure_skip_verify": true}},
		},
		"data": map[string]any{"k": "v", "empty": ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Owned (-want +got):\n%s", d)
	}

	// The regression of a field the operator stopped setting: desired without insecure_skip_verify differs from
	// what the operator owns, so Apply writes and server-side apply removes the field.
	desired := map[string]any{
		"metadata": want["metadata"],
		"spec": map[string]any{"targets": []any{"vmauth.r1:443"},
			"http_client": map[string]any{"tls_config": map[string]any{}}},
		"data": want["data"],
	}
	if Same(got, desired) {
		t.Error("Same = true for a dropped insecure_skip_verify; the stale field would stay")
	}
	if !Same(got, want) {
		t.Error("Same = false for identical owned fields; every resync would write")
	}

	if got, err := Owned(live, managed, "nobody"); err != nil || got != nil {
		t.Errorf("Owned of a manager without an Apply entry = %v, %v; want nil", got, err)
	}
	if _, err := Owned(live, []metav1.ManagedFieldsEntry{entry("kof-operator", metav1.ManagedFieldsOperationApply,
		`{"f:spec":`)}, "kof-operator"); err == nil {
		t.Error("Owned of malformed fieldsV1: want an error")
	}
}

func TestSame(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"empty map equals absent", map[string]any{"a": map[string]any{}}, map[string]any{}, true},
		{"empty list equals absent", map[string]any{"a": []any{}}, map[string]any{}, true},
		{"empty string is a value", map[string]any{"a": ""}, map[string]any{}, false},
		{"false is a value", map[string]any{"a": false}, map[string]any{}, false},
		{"list order matters", []any{"a", "b"}, []any{"b", "a"}, false},
		{"nested nil dropped", map[string]any{"a": map[string]any{"b": nil}}, nil, true},
	}
	for _, tt := range tests {
		if got := Same(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Same = %v, want %v", tt.name, got, tt.want)
		}
		// Digest agrees with Same: the cache compares digests where Same would compare values.
		if da, db := Digest(tt.a), Digest(tt.b); (da == db) != tt.want || len(da) != 22 {
			t.Errorf("%s: Digest %q and %q, want equal = %v (22 characters each)", tt.name, da, db, tt.want)
		}
	}
}

func TestPrune(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{"http_client": map[string]any{"tls_config": nil, "basic_auth": map[string]any{}},
			"targets": []any{}, "list": []any{map[string]any{"a": nil, "b": "x"}}},
		"data": map[string]any{"empty": ""},
	}
	Prune(obj)
	want := map[string]any{"spec": map[string]any{"targets": []any{}, "list": []any{map[string]any{"b": "x"}}},
		"data": map[string]any{"empty": ""}}
	if d := cmp.Diff(want, obj); d != "" {
		t.Errorf("Prune (-want +got):\n%s", d)
	}
}

// Digest encodes in one pass what Same compares: maps by key whatever their order, numbers as JSON prints them, and
// nothing for nil, empty maps and empty lists at any depth; a value JSON cannot encode has no digest.
func TestDigest(t *testing.T) {
	base := map[string]any{"b": []any{"x", int64(2), 2.5, true, nil}, "a": map[string]any{"c": "d"}}
	tests := []struct {
		name string
		v    any
		same bool
	}{
		{"another key order and empties", map[string]any{"a": map[string]any{"c": "d", "e": map[string]any{}}, "f": []any{},
			"b": []any{"x", float64(2), 2.5, true, nil}}, true},
		{"a string for a number", map[string]any{"a": map[string]any{"c": "d"}, "b": []any{"x", "2", 2.5, true, nil}}, false},
		{"another fraction", map[string]any{"a": map[string]any{"c": "d"}, "b": []any{"x", int64(2), 2.25, true, nil}}, false},
		{"a key moved down", map[string]any{"a": map[string]any{"c": "d", "b": []any{"x", int64(2), 2.5, true, nil}}}, false},
		{"a list element more", map[string]any{"a": map[string]any{"c": "d"}, "b": []any{"x", int64(2), 2.5, true, nil, nil}}, false},
	}
	want := Digest(base)
	for _, tt := range tests {
		if got := Digest(tt.v); (got == want) != tt.same || len(got) != 22 {
			t.Errorf("%s: Digest %q, base %q; want equal = %v", tt.name, got, want, tt.same)
		}
	}
	if d := Digest(map[string]any{"a": math.NaN()}); d != "" {
		t.Errorf("Digest of NaN = %q, want none", d)
	}
}
