package render

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// clusterScopedKinds are the built-in kinds served without a namespace (`kubectl api-resources --namespaced=false`
// on Kubernetes 1.37, core and apis groups). Fixture kinds outside this list are cluster-scoped when none of their
// fixtures has a namespace.
func clusterScopedKinds() map[string]bool {
	return map[string]bool{
		"Namespace": true, "Node": true, "PersistentVolume": true, "ComponentStatus": true,
		"ClusterRole": true, "ClusterRoleBinding": true, "StorageClass": true, "CSIDriver": true, "CSINode": true,
		"VolumeAttachment": true, "PriorityClass": true, "RuntimeClass": true, "IngressClass": true,
		"CustomResourceDefinition": true, "APIService": true, "CertificateSigningRequest": true,
		"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
		"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
		"FlowSchema": true, "PriorityLevelConfiguration": true, "TokenReview": true, "SelfSubjectReview": true,
		"SubjectAccessReview": true, "SelfSubjectAccessReview": true, "SelfSubjectRulesReview": true,
		"DeviceClass": true, "ResourceSlice": true,
	}
}

// knownCustomKinds are the custom resource kinds a KOF management cluster always serves (the KCM CRDs, installed
// before KOF), with whether they are namespaced. Lookups of these kinds answer an empty list when no fixture has the
// kind, as an API server with the CRD installed and no objects of it does; other custom kinds are served only when a
// fixture has them.
func knownCustomKinds() map[schema.GroupVersionKind]bool {
	kcm := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "k0rdent.mirantis.com", Version: "v1beta1", Kind: kind}
	}
	return map[schema.GroupVersionKind]bool{
		kcm("ClusterDeployment"): true, kcm("ClusterTemplate"): true, kcm("ServiceTemplate"): true,
		kcm("Credential"): true, kcm("MultiClusterService"): false, kcm("ClusterTemplateChain"): true,
		kcm("ServiceTemplateChain"): true, kcm("Management"): false, kcm("Release"): false,
	}
}

// fixtureAPI answers the requests Helm's `lookup` makes (discovery of one group/version, get and list of one
// resource) from fixture objects, in process. It implements http.RoundTripper.
type fixtureAPI struct {
	// resources lists the APIResources served per group/version.
	resources map[schema.GroupVersion][]metav1.APIResource
	// objects holds the fixtures per group/version/resource.
	objects map[schema.GroupVersionResource][]*unstructured.Unstructured
}

// fixtureConfig returns a rest.Config whose transport is a fixtureAPI serving objs.
func fixtureConfig(objs []*unstructured.Unstructured) *rest.Config {
	return &rest.Config{Host: "http://fixtures.invalid", Transport: newFixtureAPI(objs)}
}

// newFixtureAPI indexes objs and the built-in kinds of client-go's scheme.
func newFixtureAPI(objs []*unstructured.Unstructured) *fixtureAPI {
	f := &fixtureAPI{
		resources: map[schema.GroupVersion][]metav1.APIResource{},
		objects:   map[schema.GroupVersionResource][]*unstructured.Unstructured{},
	}
	scoped := clusterScopedKinds()
	namespaced := map[schema.GroupVersionKind]bool{}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			namespaced[o.GroupVersionKind()] = true
		}
	}
	seen := map[schema.GroupVersionKind]bool{}
	add := func(gvk schema.GroupVersionKind, isNamespaced bool) {
		if seen[gvk] {
			return
		}
		seen[gvk] = true
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		f.resources[gvk.GroupVersion()] = append(f.resources[gvk.GroupVersion()], metav1.APIResource{
			Name: plural.Resource, Kind: gvk.Kind, Namespaced: isNamespaced, Verbs: metav1.Verbs{"get", "list"},
		})
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		add(gvk, namespaced[gvk] || (!scoped[gvk.Kind] && isBuiltin(gvk)))
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		f.objects[plural] = append(f.objects[plural], o)
	}
	for gvk, isNamespaced := range knownCustomKinds() {
		add(gvk, isNamespaced)
	}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") || gvk.Version == "__internal" {
			continue
		}
		add(gvk, !scoped[gvk.Kind])
	}
	return f
}

// isBuiltin reports whether gvk is a kind of client-go's scheme.
func isBuiltin(gvk schema.GroupVersionKind) bool { return scheme.Scheme.Recognizes(gvk) }

// RoundTrip serves one API request: GET of /api/v1 or /apis/<group>/<version> (discovery), or of a resource path
// (get by name, or list, optionally within a namespace). Other verbs get 405.
func (f *fixtureAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return status(req, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "fixtures are read-only")
	}
	gv, rest, ok := splitAPIPath(req.URL.Path)
	if !ok {
		return status(req, http.StatusNotFound, metav1.StatusReasonNotFound, "no such path "+req.URL.Path)
	}
	if len(rest) == 0 {
		list, found := f.resources[gv]
		if !found {
			return status(req, http.StatusNotFound, metav1.StatusReasonNotFound, "group version "+gv.String()+" not served")
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		return reply(req, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: gv.String(), APIResources: list,
		})
	}
	namespace := ""
	if len(rest) >= 3 && rest[0] == "namespaces" {
		namespace, rest = rest[1], rest[2:]
	}
	gvr := gv.WithResource(rest[0])
	if len(rest) == 2 {
		for _, o := range f.objects[gvr] {
			if o.GetName() == rest[1] && o.GetNamespace() == namespace {
				return reply(req, o.Object)
			}
		}
		return status(req, http.StatusNotFound, metav1.StatusReasonNotFound, rest[0]+" "+rest[1]+" not found")
	}
	items := []any{}
	kind := ""
	for _, r := range f.resources[gv] {
		if r.Name == gvr.Resource {
			kind = r.Kind
		}
	}
	for _, o := range f.objects[gvr] {
		if namespace == "" || o.GetNamespace() == namespace {
			items = append(items, o.Object)
			kind = o.GetKind()
		}
	}
	return reply(req, map[string]any{
		"apiVersion": gv.String(), "kind": kind + "List", "metadata": map[string]any{}, "items": items,
	})
}

// splitAPIPath splits `/api/v1/...` or `/apis/<group>/<version>/...` into the group/version and the remaining
// path segments.
func splitAPIPath(path string) (schema.GroupVersion, []string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		return schema.GroupVersion{Version: parts[1]}, parts[2:], true
	case len(parts) >= 3 && parts[0] == "apis":
		return schema.GroupVersion{Group: parts[1], Version: parts[2]}, parts[3:], true
	}
	return schema.GroupVersion{}, nil, false
}

// reply returns a 200 JSON response carrying body.
func reply(req *http.Request, body any) (*http.Response, error) {
	return jsonResponse(req, http.StatusOK, body)
}

// status returns an error response carrying a metav1.Status, which client-go turns into an API error.
func status(req *http.Request, code int, reason metav1.StatusReason, msg string) (*http.Response, error) {
	return jsonResponse(req, code, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg,
	})
}

// jsonResponse encodes body as the JSON response to req.
func jsonResponse(req *http.Request, code int, body any) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: code, Status: http.StatusText(code), Request: req,
		Header: http.Header{"Content-Type": []string{"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(data)), ContentLength: int64(len(data)),
	}, nil
}
