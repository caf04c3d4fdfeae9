package outputs

import (
	"encoding/json"
	"strings"
	"testing"
	"text/template"

	"github.com/projectsveltos/libsveltos/lib/funcmap"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/operator/config"
)

// TestPropagationValuesInstantiate runs the propagation MCS values through both Sveltos template passes (values
// YAML-marshalled and executed, then executed again; docs/sveltos.md) with libsveltos' function map and a getField over a
// Secret, and checks the result is the kof-propagation values with the Secret's data.
func TestPropagationValuesInstantiate(t *testing.T) {
	m, err := Bundle{Base: "c1-0123456789", Namespace: "kcm-system", Tenant: "t1", Regional: "r1"}.Propagation(
		config.Config{ReleaseNamespace: "kof", PropagationTemplate: "kof-propagation-2-0-0",
			Storage: config.StorageURLs{VMInsert: "http://i", VMSelect: "http://s"}})
	if err != nil {
		t.Fatal(err)
	}
	secretData := map[string]any{"username": "YzE=", "password": "cGFzc3dvcmQ="}
	fm := funcmap.SveltosFuncMap(false)
	fm["getField"] = func(id, path string) any {
		if id != secretRef || path != "data" {
			return ""
		}
		return secretData
	}
	exec := func(s string) string {
		tpl, err := template.New("v").Option("missingkey=error").Funcs(fm).Parse(s)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		var b strings.Builder
		if err := tpl.Execute(&b, map[string]any{}); err != nil {
			t.Fatalf("execute: %v", err)
		}
		return b.String()
	}
	// Pass 1: the whole entry as YAML.
	entry, err := yaml.Marshal(map[string]string{"values": m.Spec.ServiceSpec.Services[0].Values})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := yaml.Unmarshal([]byte(exec(string(entry))), &back); err != nil {
		t.Fatalf("pass 1 output is not YAML: %v", err)
	}
	// Pass 2: the values alone.
	var values struct {
		Propagation struct {
			Enabled bool             `json:"enabled"`
			Data    []map[string]any `json:"data"`
		} `json:"propagation"`
	}
	if err := json.Unmarshal([]byte(exec(back["values"])), &values); err != nil {
		t.Fatalf("instantiated values are not JSON: %v", err)
	}
	if !values.Propagation.Enabled || len(values.Propagation.Data) != 2 {
		t.Fatalf("values = %+v", values)
	}
	sec, user := values.Propagation.Data[0], values.Propagation.Data[1]
	if sec["kind"] != "Secret" || user["kind"] != "VMUser" {
		t.Fatalf("kinds = %v, %v", sec["kind"], user["kind"])
	}
	if d, _ := sec["data"].(map[string]any); d["password"] != "cGFzc3dvcmQ=" {
		t.Errorf("propagated secret data = %v", sec["data"])
	}
	spec, _ := user["spec"].(map[string]any)
	refs, _ := spec["targetRefs"].([]any)
	first, _ := refs[1].(map[string]any)
	args, _ := first["query_args"].([]any)
	if len(refs) != 8 || len(args) != 1 || !strings.Contains(mustString(t, args[0]), `{tenant=\"t1\"}`) {
		t.Errorf("propagated VMUser routes = %v", refs)
	}
}

func mustString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
