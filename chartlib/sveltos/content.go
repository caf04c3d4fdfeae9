package sveltos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Content is the data of a ConfigMap or Secret that a profile deploys as plain resources (a Sveltos policyRef; a
// KCM ServiceTemplate with spec.resources and a local ConfigMap or Secret source).
type Content struct {
	// Service names the KCM service that deploys the content; used in errors.
	Service string
	// Source names the object holding the content, e.g. "ConfigMap kcm-system/creds"; used in errors.
	Source string
	// Data maps each key to its text: one or more YAML documents separated by `---` lines (Secret data decoded).
	Data map[string]string
	// Template is true when the object carries TemplateAnnotation: each key is then instantiated once, with the
	// profile's .Cluster and .MgmtResources, before it is parsed.
	Template bool
}

// InstantiateContent returns the objects Sveltos deploys from c for p.Cluster: every key of c.Data in key order,
// instantiated once when c.Template (text/template with missingkey=error, the functions and data of a values text,
// templateResourceRefs resolved from p.Objects), then split into YAML documents; empty documents are skipped. There
// is no double pass: Sveltos executes resource templates once. It returns an *Error naming the service, the
// cluster, the source key and the line on any template or YAML failure, and for a document that is not a Kubernetes
// object (no apiVersion or kind). Source: addon-controller v1.9.0 controllers/handlers_utils.go (collectContent,
// instantiateTemplate) and controllers/template_instantiation.go (instantiateTemplateValues).
func InstantiateContent(p Profile, c Content) ([]*unstructured.Unstructured, error) {
	p.Services = []Service{{Name: c.Service}}
	e, err := newEngine(p)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(c.Data))
	for k := range c.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	data := e.data()
	var out []*unstructured.Unstructured
	for _, k := range keys {
		stage := fmt.Sprintf("%s key %s", c.Source, k)
		text := c.Data[k]
		if c.Template {
			text, err = e.execute(text, e.templateName(c.Service), data)
			if err != nil {
				line := errorLine(err, templateLine)
				return nil, e.fail(stage, line, lineOf(c.Data[k], line), "", err)
			}
		}
		objs, err := documentsOf(text)
		if err != nil {
			return nil, e.fail(stage, errorLine(err, yamlLine), "", "each document must be a Kubernetes object", err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// documentsOf parses every non-empty YAML document of text into an object with apiVersion and kind.
func documentsOf(text string) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		o := &unstructured.Unstructured{Object: m}
		if o.GetAPIVersion() == "" || o.GetKind() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", i)
		}
		out = append(out, o)
	}
}
