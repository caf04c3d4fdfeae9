package manager

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// NewRESTMapper is the manager's MapperProvider (ctrl.Options.MapperProvider): controller-runtime's dynamic REST
// mapper, with each successful RESTMapping kept (Memoize). It takes the API server configuration and HTTP client
// and returns the discovery error of controller-runtime's mapper.
func NewRESTMapper(cfg *rest.Config, hc *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, err
	}
	return Memoize(m), nil
}

// Memoize returns m with every successful RESTMapping answer kept for its group, kind and versions. The cache client
// asks for a mapping on every read when it spans several namespaces (to learn whether the kind is namespaced), and
// the dynamic mapper builds it anew each time: at 1,000 clusters that was a quarter of the operator's allocations.
// Errors (a kind not served yet) are not kept, so a CRD installed later is found; a kind whose scope changes while
// the operator runs needs a restart, as it does for the informers anyway.
func Memoize(m meta.RESTMapper) meta.RESTMapper { return &memoMapper{RESTMapper: m} }

type memoMapper struct {
	meta.RESTMapper
	mappings sync.Map // "<group>/<kind>/<versions...>" → *meta.RESTMapping
}

// RESTMapping implements meta.RESTMapper.
func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := gk.Group + "/" + gk.Kind + "/" + strings.Join(versions, ",")
	if v, ok := m.mappings.Load(key); ok {
		return v.(*meta.RESTMapping), nil
	}
	r, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mappings.Store(key, r)
	return r, nil
}
