package apply

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWrittenSkipsOnlyWhileTheCacheLags checks that an apply is skipped only for the fields last applied and only
// while the cached object is the written one or older.
func TestWrittenSkipsOnlyWhileTheCacheLags(t *testing.T) {
	fields := map[string]any{"data": map[string]any{"k": "v"}}
	hash, ok := hashOf(fields)
	if !ok {
		t.Fatal("fields do not hash")
	}
	other, _ := hashOf(map[string]any{"data": map[string]any{"k": "w"}})
	live := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	var w Written
	w.record("ConfigMap/ns/a", hash, "10")
	for _, c := range []struct {
		name string
		key  string
		hash [32]byte
		rv   string
		want bool
	}{
		{"cache older, same fields", "ConfigMap/ns/a", hash, "9", true},
		{"cache holds the written version", "ConfigMap/ns/a", hash, "10", true},
		{"cache newer (someone else wrote)", "ConfigMap/ns/a", hash, "11", false},
		{"other fields", "ConfigMap/ns/a", other, "9", false},
		{"other object", "ConfigMap/ns/b", hash, "9", false},
		{"unparsable version", "ConfigMap/ns/a", hash, "x", false},
	} {
		if got := w.fresh(c.key, c.hash, live(c.rv)); got != c.want {
			t.Errorf("%s: fresh = %v, want %v", c.name, got, c.want)
		}
	}
	var none *Written
	if none.fresh("ConfigMap/ns/a", hash, live("9")) {
		t.Error("nil Written skips a write")
	}
	w.Forget("ConfigMap", client.ObjectKey{Namespace: "ns", Name: "a"})
	if w.fresh("ConfigMap/ns/a", hash, live("9")) {
		t.Error("a forgotten object still skips a write")
	}
}
