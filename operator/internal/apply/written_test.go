package apply

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/operator/ownership"
)

// TestWrittenSkipsOnlyWhileTheCacheLags checks that an apply is skipped only for the fields last applied and only
// while the cached object is older than the written one or the written one, and that the entry is dropped once the
// cache holds the written version or a newer one, or the fields changed (the cache's digest decides from then on).
func TestWrittenSkipsOnlyWhileTheCacheLags(t *testing.T) {
	digest := ownership.Digest(map[string]any{"data": map[string]any{"k": "v"}})
	other := ownership.Digest(map[string]any{"data": map[string]any{"k": "w"}})
	live := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	}
	for _, c := range []struct {
		name   string
		key    string
		digest string
		rv     string
		want   bool
		kept   bool
	}{
		{"cache older, same fields", "ConfigMap/ns/a", digest, "9", true, true},
		{"cache holds the written version", "ConfigMap/ns/a", digest, "10", true, false},
		{"cache newer (someone else wrote)", "ConfigMap/ns/a", digest, "11", false, false},
		{"other fields", "ConfigMap/ns/a", other, "9", false, false},
		{"other object", "ConfigMap/ns/b", digest, "9", false, true},
		{"unparsable version", "ConfigMap/ns/a", digest, "x", false, false},
	} {
		var w Written
		w.record("ConfigMap/ns/a", digest, "10")
		if got := w.fresh(c.key, c.digest, live(c.rv)); got != c.want {
			t.Errorf("%s: fresh = %v, want %v", c.name, got, c.want)
		}
		if _, kept := w.m["ConfigMap/ns/a"]; kept != c.kept {
			t.Errorf("%s: entry kept = %v, want %v", c.name, kept, c.kept)
		}
	}
	var none *Written
	if none.fresh("ConfigMap/ns/a", digest, live("9")) {
		t.Error("nil Written skips a write")
	}
	var w Written
	w.record("ConfigMap/ns/a", digest, "10")
	w.Forget("ConfigMap", client.ObjectKey{Namespace: "ns", Name: "a"})
	if w.fresh("ConfigMap/ns/a", digest, live("9")) {
		t.Error("a forgotten object still skips a write")
	}
}
