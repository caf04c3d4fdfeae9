package sveltos

import (
	"encoding/base64"
	"fmt"
	"slices"

	"dario.cat/mergo"
	"sigs.k8s.io/yaml"
)

// TemplateAnnotation marks a valuesFrom ConfigMap or Secret whose values are themselves templates.
// Source: libsveltos api/v1beta1 (PolicyTemplateAnnotation).
const TemplateAnnotation = "projectsveltos.io/template"

// MergeValues merges each overlay over base in order, as Sveltos merges valuesFrom documents over the inline
// values: maps are merged key by key, every other value (lists included) is replaced by the overlay's, empty
// ones too (false, 0, "", [] and null win over the base).
// base is modified and returned (a nil base starts empty). It returns mergo's error, if any.
// Source: addon-controller controllers/handlers_helm.go (mergo.Merge with mergo.WithOverride).
func MergeValues(base map[string]any, overlays ...map[string]any) (map[string]any, error) {
	if base == nil {
		base = map[string]any{}
	}
	for i, o := range overlays {
		if err := mergo.Merge(&base, o, mergo.WithOverride); err != nil {
			return nil, fmt.Errorf("merge values document %d: %w", i, err)
		}
	}
	return base, nil
}

// valuesDoc is one values document taken from a valuesFrom object, with where it came from.
type valuesDoc struct {
	where string
	text  string
}

// mergeValuesFrom fetches the valuesFrom objects and merges their documents over values: first every plain
// document, then every templated one (instantiated once), each object's keys in sorted order.
// Source: addon-controller controllers/handlers_helm.go (getHelmChartInstantiatedValues) and
// handlers_utils.go (getValuesFrom).
func (e *engine) mergeValuesFrom(list []ValuesFrom, values map[string]any) (map[string]any, error) {
	var plain, templated []valuesDoc
	cc := clusterContext{Cluster: e.cluster, ClusterNamespace: e.p.Cluster.GetNamespace(), ClusterName: e.p.Cluster.GetName()}
	for i, vf := range list {
		stage := fmt.Sprintf("valuesFrom[%d]", i)
		ns, err := renderRefTemplate(vf.Namespace, cc, e.base)
		if err != nil {
			return nil, e.fail(stage+".namespace", 0, vf.Namespace, "", err)
		}
		name, err := renderRefTemplate(vf.Name, cc, e.base)
		if err != nil {
			return nil, e.fail(stage+".name", 0, vf.Name, "", err)
		}
		if vf.Kind != "ConfigMap" && vf.Kind != "Secret" {
			continue // Sveltos reads only these two kinds and skips anything else
		}
		obj, ok := e.ix.get("v1", vf.Kind, ns, name)
		if !ok {
			if vf.Optional {
				continue
			}
			return nil, e.fail(stage, 0, "", "", &MissingObjectError{Kind: vf.Kind, Namespace: ns, Name: name})
		}
		content, err := normalize(obj.Object)
		if err != nil {
			return nil, e.fail(stage, 0, "", "", err)
		}
		docs, err := documents(content, vf.Kind, fmt.Sprintf("%s %s (%s %s/%s)", stage, "%s", vf.Kind, ns, name))
		if err != nil {
			return nil, e.fail(stage, 0, "", "", err)
		}
		if _, ok := obj.GetAnnotations()[TemplateAnnotation]; ok {
			templated = append(templated, docs...)
		} else {
			plain = append(plain, docs...)
		}
	}
	for _, d := range plain {
		if err := e.mergeDoc(values, d, d.text); err != nil {
			return nil, err
		}
	}
	for _, d := range templated {
		text, err := e.execute(d.text, e.templateName(e.svc.Name), e.pass2)
		if err != nil {
			line := errorLine(err, templateLine)
			return nil, e.fail(d.where, line, lineOf(d.text, line), "", err)
		}
		if err := e.mergeDoc(values, d, text); err != nil {
			return nil, err
		}
	}
	return values, nil
}

// mergeDoc parses text (the document d, possibly instantiated) and merges it over values.
func (e *engine) mergeDoc(values map[string]any, d valuesDoc, text string) error {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		line := errorLine(err, yamlLine)
		return e.fail(d.where, line, lineOf(text, line), "each valuesFrom key must hold a YAML mapping", err)
	}
	if _, err := MergeValues(values, m); err != nil {
		return e.fail(d.where, 0, "", "", err)
	}
	return nil
}

// documents returns the data values of a ConfigMap or Secret (Secret data base64-decoded) in key order.
// whereFmt has one %s for the key.
func documents(obj map[string]any, kind, whereFmt string) ([]valuesDoc, error) {
	data, _ := obj["data"].(map[string]any)
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	docs := make([]valuesDoc, 0, len(keys))
	for _, k := range keys {
		s, _ := data[k].(string)
		if kind == "Secret" {
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("data.%s: not base64: %w", k, err)
			}
			s = string(raw)
		}
		docs = append(docs, valuesDoc{where: fmt.Sprintf(whereFmt, "key "+k), text: s})
	}
	return docs, nil
}
