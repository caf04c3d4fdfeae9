package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// MetadataWriter sends the operator's server-side applies and reads back only the metadata of the answer
// (PartialObjectMetadata), which is all Apply keeps of it (the resource version, for Written): the API server then
// encodes, and the operator decodes, the object's metadata instead of the whole object it answers each apply with.
// Each resource gets its own client with the rate limits of the config, as controller-runtime's client has one
// per kind. Build it with NewMetadataWriter; it is safe for concurrent use.
type MetadataWriter struct {
	config *rest.Config
	mapper meta.RESTMapper

	mu      sync.Mutex
	clients map[schema.GroupVersionResource]metadata.Interface
}

// NewMetadataWriter returns a MetadataWriter sending with config (its QPS and Burst apply per resource) and mapping
// kinds to resources with mapper.
func NewMetadataWriter(config *rest.Config, mapper meta.RESTMapper) *MetadataWriter {
	return &MetadataWriter{config: rest.CopyConfig(config), mapper: mapper,
		clients: map[schema.GroupVersionResource]metadata.Interface{}}
}

// apply server-side applies obj (of kind gvk, with its name and, when namespaced, namespace) under FieldManager with
// ForceOwnership and returns the resource version the API server answered. Errors are the mapping's, the client's
// or the API server's.
func (m *MetadataWriter) apply(ctx context.Context, gvk schema.GroupVersionKind, obj *unstructured.Unstructured) (string, error) {
	mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", err
	}
	cl, err := m.client(mapping.Resource)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(obj.Object) // JSON is YAML: the apply patch body controller-runtime sends too
	if err != nil {
		return "", err
	}
	var ri metadata.ResourceInterface = cl.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = cl.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	got, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)})
	if err != nil {
		return "", err
	}
	return got.ResourceVersion, nil
}

// client returns the metadata client of resource gvr, made on first use.
func (m *MetadataWriter) client(gvr schema.GroupVersionResource) (metadata.Interface, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[gvr]; ok {
		return c, nil
	}
	c, err := metadata.NewForConfig(m.config)
	if err != nil {
		return nil, fmt.Errorf("metadata client for %s: %w", gvr, err)
	}
	m.clients[gvr] = c
	return c, nil
}
