package collector

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kind is a section of a collector config that defines components.
type Kind string

// The component kinds of a collector config, in the order the builder manifest lists them.
const (
	Receivers  Kind = "receivers"
	Processors Kind = "processors"
	Exporters  Kind = "exporters"
	Extensions Kind = "extensions"
	Connectors Kind = "connectors"
)

// CollectorKind is the kind of the OpenTelemetry operator's collector objects, whose spec.config is a collector
// config.
const CollectorKind = "OpenTelemetryCollector"

// Kinds returns every component kind in manifest order.
func Kinds() []Kind { return []Kind{Receivers, Processors, Exporters, Extensions, Connectors} }

// TypeOf returns the component type of a component identifier `type[/name]` (for `otlphttp/logs`: `otlphttp`).
func TypeOf(id string) string {
	t, _, _ := strings.Cut(id, "/")
	return t
}

// Config is one collector config and where it was rendered.
type Config struct {
	// Source names the config for messages, e.g. `01-regional-child/child-1/kof-collectors: kof/kof-collectors-node`.
	Source string
	// Body is the config as the OpenTelemetryCollector's spec.config holds it.
	Body map[string]any
	// Env is the collector container's environment as the pod would see it (PodEnv); the config's `${env:X}`
	// references resolve against it.
	Env map[string]string
	// Mounts are the container's volume mount paths (spec.volumeMounts[].mountPath).
	Mounts []string
}

// FromObjects takes the objects of one render and a source prefix and returns the config of every
// OpenTelemetryCollector among them, in the order given. An OpenTelemetryCollector without a spec.config map is an
// error naming it.
func FromObjects(source string, objs []*unstructured.Unstructured) ([]Config, error) {
	var out []Config
	for _, o := range objs {
		if o.GetKind() != CollectorKind {
			continue
		}
		body, ok, err := unstructured.NestedMap(o.Object, "spec", "config")
		if err != nil || !ok {
			return nil, fmt.Errorf("%s: %s %s/%s: spec.config is not a map (err %v)", source, CollectorKind,
				o.GetNamespace(), o.GetName(), err)
		}
		env, err := PodEnv(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		var mounts []string
		vms, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeMounts")
		for _, vm := range vms {
			if p, _ := vm.(map[string]any)["mountPath"].(string); p != "" {
				mounts = append(mounts, p)
			}
		}
		out = append(out, Config{Source: fmt.Sprintf("%s: %s/%s", source, o.GetNamespace(), o.GetName()), Body: body,
			Env: env, Mounts: mounts})
	}
	return out, nil
}

// PodEnv takes an OpenTelemetryCollector and returns the environment its collector container gets on a node, by
// name: literal values as given; field references as the kubelet fills them (spec.nodeName `node-1`,
// status.hostIP and status.podIP `127.0.0.1`, metadata.name the operator's `<name>-collector-0`, metadata.namespace
// the object's); Secret and ConfigMap key references a stand-in `<secret|configmap>:<name>/<key>` (their content is
// on the cluster, never in a render). Any other source is an error naming the variable.
func PodEnv(o *unstructured.Unstructured) (map[string]string, error) {
	env := map[string]string{}
	list, _, _ := unstructured.NestedSlice(o.Object, "spec", "env")
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		from, hasFrom := m["valueFrom"].(map[string]any)
		if !hasFrom {
			env[name], _ = m["value"].(string)
			continue
		}
		field, _, _ := unstructured.NestedString(from, "fieldRef", "fieldPath")
		secret, _, _ := unstructured.NestedString(from, "secretKeyRef", "name")
		secretKey, _, _ := unstructured.NestedString(from, "secretKeyRef", "key")
		cm, _, _ := unstructured.NestedString(from, "configMapKeyRef", "name")
		cmKey, _, _ := unstructured.NestedString(from, "configMapKeyRef", "key")
		switch {
		case field == "spec.nodeName":
			env[name] = "node-1"
		case field == "status.hostIP" || field == "status.podIP":
			env[name] = "127.0.0.1"
		case field == "metadata.name":
			env[name] = o.GetName() + "-collector-0"
		case field == "metadata.namespace":
			env[name] = o.GetNamespace()
		case secret != "":
			env[name] = "secret:" + secret + "/" + secretKey
		case cm != "":
			env[name] = "configmap:" + cm + "/" + cmKey
		default:
			return nil, fmt.Errorf("%s %s/%s: env %s: unsupported valueFrom %v", CollectorKind, o.GetNamespace(),
				o.GetName(), name, from)
		}
	}
	return env, nil
}

// Usage is, per kind, the sorted component types some config uses.
type Usage map[Kind][]string

// Count returns the number of component types in u.
func (u Usage) Count() int {
	n := 0
	for _, ts := range u {
		n += len(ts)
	}
	return n
}

// Used takes collector configs and returns the component types they define, per kind. A section that is not a map
// is an error naming the config and the section.
func Used(cfgs []Config) (Usage, error) {
	seen := map[Kind]map[string]bool{}
	for _, c := range cfgs {
		for _, k := range Kinds() {
			raw, ok := c.Body[string(k)]
			if !ok || raw == nil {
				continue
			}
			section, ok := raw.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is a %T, want a map of components", c.Source, k, raw)
			}
			for id := range section {
				if seen[k] == nil {
					seen[k] = map[string]bool{}
				}
				seen[k][TypeOf(id)] = true
			}
		}
	}
	u := Usage{}
	for k, types := range seen {
		for t := range types {
			u[k] = append(u[k], t)
		}
		sort.Strings(u[k])
	}
	return u, nil
}
