package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper answers ConfigMap mappings and counts the questions; other kinds are not served.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	if gk.Kind != "ConfigMap" {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &meta.RESTMapping{GroupVersionKind: gk.WithVersion("v1"), Scope: meta.RESTScopeNamespace}, nil
}

// A mapping is asked of the underlying mapper once; a kind it does not serve is asked again every time, so that
// a CRD installed later is found.
func TestMemoizeKeepsOnlyAnswers(t *testing.T) {
	under := &countingMapper{}
	m := Memoize(under)
	cm := schema.GroupKind{Kind: "ConfigMap"}
	for range 3 {
		r, err := m.RESTMapping(cm, "v1")
		if err != nil || r.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Fatalf("mapping %+v, %v", r, err)
		}
	}
	if under.calls != 1 {
		t.Errorf("underlying mapper asked %d times for one kind, want 1", under.calls)
	}
	other := schema.GroupKind{Group: "example.com", Kind: "Later"}
	for range 2 {
		if _, err := m.RESTMapping(other, "v1"); !meta.IsNoMatchError(err) {
			t.Fatalf("unserved kind: %v, want a no-match error", err)
		}
	}
	if under.calls != 3 {
		t.Errorf("underlying mapper asked %d times, want 3 (errors are not kept)", under.calls)
	}
	if _, err := m.RESTMapping(cm); err != nil || under.calls != 4 {
		t.Errorf("other versions are another question: calls %d, err %v", under.calls, err)
	}
}
