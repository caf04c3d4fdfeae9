package promql

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"
)

//go:embed catalog.yaml
var catalogYAML []byte

// Component is one producer of metrics in catalog.yaml.
type Component struct {
	// Name is the component, e.g. `node-exporter`.
	Name string `json:"name"`
	// Source says where the names come from: the program and version, and the file that defines them.
	Source string `json:"source"`
	// Live is true when tests/dashboards runs the real program and checks that it serves every name listed.
	Live bool `json:"live,omitempty"`
	// Metrics are the metric names, as stored (counters with `_total`, summaries' `_count`/`_sum` series).
	Metrics []string `json:"metrics"`
}

// Catalog is the parsed catalog: components in file order, and each metric name's component.
type Catalog struct {
	Components []Component
	byName     map[string]string
}

// DefaultCatalog parses the embedded catalog.yaml. Errors: bad YAML, a component without name or source, or a metric
// listed twice (the error names both components).
func DefaultCatalog() (Catalog, error) { return ParseCatalog(catalogYAML) }

// ParseCatalog parses catalog YAML ({components: [{name, source, live, metrics}]}) with the same checks as
// DefaultCatalog.
func ParseCatalog(data []byte) (Catalog, error) {
	var doc struct {
		Components []Component `json:"components"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return Catalog{}, fmt.Errorf("parse metric catalog: %w", err)
	}
	c := Catalog{Components: doc.Components, byName: map[string]string{}}
	var errs []error
	for i, comp := range doc.Components {
		if comp.Name == "" || comp.Source == "" || len(comp.Metrics) == 0 {
			errs = append(errs, fmt.Errorf("metric catalog: components[%d] needs name, source and metrics", i))
		}
		for _, m := range comp.Metrics {
			if prev, ok := c.byName[m]; ok {
				errs = append(errs, fmt.Errorf("metric catalog: %q is listed by %s and %s; keep it under the component that produces it", m, prev, comp.Name))
				continue
			}
			c.byName[m] = comp.Name
		}
	}
	return c, errors.Join(errs...)
}

// Source returns the component that produces a metric name, and whether the catalog has it.
func (c Catalog) Source(metric string) (string, bool) {
	n, ok := c.byName[metric]
	return n, ok
}

// Component returns the named component and whether the catalog has it.
func (c Catalog) Component(name string) (Component, bool) {
	for _, comp := range c.Components {
		if comp.Name == name {
			return comp, true
		}
	}
	return Component{}, false
}

// Names returns every metric name of the catalog, sorted.
func (c Catalog) Names() []string {
	out := make([]string, 0, len(c.byName))
	for n := range c.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
