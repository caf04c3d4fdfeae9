package release

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Reference is one image reference found in a rendered object.
type Reference struct {
	// Object is `Kind namespace/name`; Field the path of the reference inside it.
	Object, Field string
	// Ref is the reference as rendered: `[registry/]repository[:tag][@digest]`.
	Ref string
}

// Parts splits a reference into its name (`[registry/]repository`), tag and digest ("" when absent).
func Parts(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// ImageName returns the last path element of ref's repository: the image name KOF binaries are published under.
func ImageName(ref string) string {
	n, _, _ := Parts(ref)
	return n[strings.LastIndex(n, "/")+1:]
}

// References returns every image reference in objs, in object order and then by field: each string field named
// `image` (containers, init and ephemeral containers, the OpenTelemetry and Grafana kinds) and each `image` mapping
// with `repository` and optional `tag` (the VictoriaMetrics operator kinds) read as `repository[:tag]`.
func References(objs []*unstructured.Unstructured) []Reference {
	var out []Reference
	for _, o := range objs {
		id := fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		var found []Reference
		walkImages(o.Object, "", func(field, ref string) {
			found = append(found, Reference{Object: id, Field: field, Ref: ref})
		})
		sort.Slice(found, func(i, j int) bool { return found[i].Field < found[j].Field })
		out = append(out, found...)
	}
	return out
}

func walkImages(v any, path string, found func(field, ref string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			p := path + "." + k
			if k == "image" {
				switch img := c.(type) {
				case string:
					if img != "" {
						found(p[1:], img)
					}
					continue
				case map[string]any:
					if repo, ok := img["repository"].(string); ok && repo != "" {
						if tag, ok := img["tag"].(string); ok && tag != "" {
							repo += ":" + tag
						}
						found(p[1:], repo)
						continue
					}
				}
			}
			walkImages(c, p, found)
		}
	case []any:
		for i, c := range t {
			walkImages(c, path+"["+strconv.Itoa(i)+"]", found)
		}
	}
}
