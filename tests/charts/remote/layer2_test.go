package remote

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/operator/names"
)

// kcmNamespace is where KCM keeps ClusterDeployments and the KOF operator its per-cluster objects.
const kcmNamespace = "kcm-system"

// mcsService is one service of a MultiClusterService, with the KCM api/v1beta1 JSON names.
type mcsService struct {
	Name       string               `json:"name"`
	Namespace  string               `json:"namespace"`
	Template   string               `json:"template"`
	Values     string               `json:"values"`
	ValuesFrom []sveltos.ValuesFrom `json:"valuesFrom"`
	DependsOn  []struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"dependsOn"`
}

// mcsSpec is the part of a MultiClusterService spec layer 2 needs.
type mcsSpec struct {
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`
	ServiceSpec     struct {
		Provider struct {
			SelfManagement bool `json:"selfManagement"`
		} `json:"provider"`
		Services             []mcsService                  `json:"services"`
		TemplateResourceRefs []sveltos.TemplateResourceRef `json:"templateResourceRefs"`
	} `json:"serviceSpec"`
}

// specOf decodes the spec of a rendered MultiClusterService.
func specOf(t testing.TB, mcs *unstructured.Unstructured) mcsSpec {
	t.Helper()
	raw, err := json.Marshal(mcs.Object["spec"])
	if err != nil {
		t.Fatalf("marshal MCS %s spec: %v", mcs.GetName(), err)
	}
	var spec mcsSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("decode MCS %s spec: %v", mcs.GetName(), err)
	}
	return spec
}

// selects reports whether the MCS selector matches the labels; an empty selector fails the test (KCM would
// select every cluster).
func selects(t testing.TB, mcs *unstructured.Unstructured, lbls map[string]string) bool {
	t.Helper()
	spec := specOf(t, mcs)
	if len(spec.ClusterSelector.MatchLabels) == 0 && len(spec.ClusterSelector.MatchExpressions) == 0 {
		t.Fatalf("MCS %s has an empty clusterSelector", mcs.GetName())
	}
	sel, err := metav1.LabelSelectorAsSelector(&spec.ClusterSelector)
	if err != nil {
		t.Fatalf("MCS %s selector: %v", mcs.GetName(), err)
	}
	return sel.Matches(labels.Set(lbls))
}

// loadObjects reads every object of a multi-document YAML file under testdata.
func loadObjects(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	objs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Unstructured)
	}
	return out
}

// deployment returns the ClusterDeployment name from objs.
func deployment(t testing.TB, objs []*unstructured.Unstructured, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "ClusterDeployment" && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no ClusterDeployment %s", name)
	return nil
}

// capiCluster returns the CAPI Cluster Sveltos shows for cd.
func capiCluster(t testing.TB, cd *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	c, err := sveltos.ClusterFromDeployment(cd, sveltos.KindCAPI)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// configMap returns a ConfigMap with string data.
func configMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     data,
	}}
}

// credentials returns a VMUser credentials Secret as the KOF operator writes it (docs/contract.md): keys username = base
// and password, base64-encoded as the API serves Secrets.
func credentials(ns, base, password string) *unstructured.Unstructured {
	enc := base64.StdEncoding.EncodeToString
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": names.VMUserSecret(base), "namespace": ns},
		"data":     map[string]any{"username": enc([]byte(base)), "password": enc([]byte(password))},
	}}
}

// childConfig returns the ChildConfig ConfigMap of a child bound to a regional cluster with domain, as the KOF
// operator writes it (its 17 data keys, docs/contract.md).
func childConfig(ns, child, regional, domain string) *unstructured.Unstructured {
	base := "https://vmauth." + domain
	return configMap(ns, names.ChildConfigMap(child), map[string]any{
		"regional_cluster_name":      regional,
		"regional_cluster_namespace": ns,
		"regional_cluster_cloud":     "aws",
		"istio_role":                 "",
		"kof_http_config":            "",
		"read_metrics_endpoint":      base + "/vm/select/0/prometheus",
		"write_metrics_endpoint":     base + "/vm/insert/0/prometheus/api/v1/write",
		"read_logs_endpoint":         base + "/vls",
		"write_logs_endpoint":        base + "/vli/insert/opentelemetry/v1/logs",
		"read_audit_logs_endpoint":   base + "/vlas",
		"write_audit_logs_endpoint":  base + "/vlai/insert/opentelemetry/v1/logs",
		"read_traces_endpoint":       base + "/vts",
		"write_traces_endpoint":      base + "/vti/insert/opentelemetry/v1/traces",
		"aws_region":                 "us-east-2",
		"azure_location":             "",
		"openstack_region":           "",
		"vsphere_datacenter":         "",
	})
}

// serviceResult is one service instantiated for one cluster: a Helm service's values, or the objects of a
// resources service (no values; its ServiceTemplate's ConfigMap, when among the objects, instantiated).
type serviceResult struct {
	service mcsService
	result  sveltos.Result
	objects []*unstructured.Unstructured
}

// instantiate runs layer 2 for every service of mcs and cluster, in service order. objects are the
// management-cluster objects templateResourceRefs and valuesFrom read. It returns the first error.
func instantiate(t testing.TB, mcs, cluster *unstructured.Unstructured, objects []*unstructured.Unstructured,
	mode sveltos.Mode) ([]serviceResult, error) {
	t.Helper()
	spec := specOf(t, mcs)
	var out []serviceResult
	for _, svc := range spec.ServiceSpec.Services {
		if svc.Values == "" {
			objs, err := instantiateResources(mcs, svc, cluster, objects)
			if err != nil {
				return out, err
			}
			out = append(out, serviceResult{service: svc, objects: objs})
			continue
		}
		res, err := sveltos.Instantiate(sveltos.Input{
			Profile:              mcs.GetName(),
			Service:              svc.Name,
			ServiceNamespace:     svc.Namespace,
			Cluster:              cluster,
			Values:               svc.Values,
			ValuesFrom:           svc.ValuesFrom,
			TemplateResourceRefs: spec.ServiceSpec.TemplateResourceRefs,
			Objects:              objects,
			Mode:                 mode,
		})
		if err != nil {
			return out, err
		}
		out = append(out, serviceResult{service: svc, result: res})
	}
	return out, nil
}

// instantiateResources returns the objects a resources service deploys: the ConfigMap named like its
// ServiceTemplate (the charts render both with one name) among objects, instantiated as Sveltos does; none when the
// ConfigMap is not among objects.
func instantiateResources(mcs *unstructured.Unstructured, svc mcsService, cluster *unstructured.Unstructured,
	objects []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	for _, o := range objects {
		if o.GetKind() != "ConfigMap" || o.GetName() != svc.Template {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(o.Object, "data")
		_, tmpl := o.GetAnnotations()[sveltos.TemplateAnnotation]
		var raw struct {
			Spec mcsSpec `json:"spec"`
		}
		b, _ := json.Marshal(mcs.Object)
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, err
		}
		return sveltos.InstantiateContent(sveltos.Profile{Name: mcs.GetName(), Cluster: cluster,
			TemplateResourceRefs: raw.Spec.ServiceSpec.TemplateResourceRefs, Objects: objects},
			sveltos.Content{Service: svc.Name, Source: "ConfigMap " + o.GetName(), Data: data, Template: tmpl})
	}
	return nil, nil
}

// mustInstantiate is instantiate failing the test on error.
func mustInstantiate(t testing.TB, mcs, cluster *unstructured.Unstructured, objects []*unstructured.Unstructured) []serviceResult {
	t.Helper()
	out, err := instantiate(t, mcs, cluster, objects, sveltos.DoublePass)
	if err != nil {
		var se *sveltos.Error
		if errors.As(err, &se) {
			t.Fatalf("instantiate %s for %s: %v\nline %d: %s", mcs.GetName(), cluster.GetName(), err, se.Line, se.Source)
		}
		t.Fatalf("instantiate %s for %s: %v", mcs.GetName(), cluster.GetName(), err)
	}
	return out
}

// valuesOf returns the instantiated values of the named service, failing the test when it is absent.
func valuesOf(t testing.TB, results []serviceResult, service string) map[string]any {
	t.Helper()
	for _, r := range results {
		if r.service.Name == service {
			return r.result.Values
		}
	}
	t.Fatalf("no service %s", service)
	return nil
}

// serviceNames returns the names of the services in results, in order.
func serviceNames(results []serviceResult) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.service.Name)
	}
	return out
}

// layer2Golden renders each KOF service (kof-storage, kof-collectors) of results with its instantiated values and
// returns the golden files of the instantiation, `services.txt` (each service and its ServiceTemplate, in order),
// `<service>/values.yaml` for every service and `<service>/manifest.yaml` for the rendered ones, with the rendered
// services by name. kof-operators is only checked to accept its values.
func layer2Golden(t testing.TB, results []serviceResult) (map[string][]byte, map[string]*renderedService) {
	t.Helper()
	files := map[string][]byte{}
	var services []byte
	rendered := map[string]*renderedService{}
	for _, r := range results {
		vals, err := yaml.Marshal(r.result.Values)
		if err != nil {
			t.Fatalf("marshal values of %s: %v", r.service.Name, err)
		}
		services = append(services, []byte(r.service.Name+" "+r.service.Template+"\n")...)
		if r.service.Values == "" {
			// A resources service: its objects, not values.
			var docs []byte
			for _, o := range r.objects {
				b, err := yaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				docs = append(append(docs, []byte("---\n")...), b...)
			}
			files[r.service.Name+"/manifest.yaml"] = docs
			continue
		}
		files[r.service.Name+"/values.yaml"] = vals
		if r.service.Name == "kof-operators" {
			// Another team's chart: only check that it accepts the values (schema) and renders.
			checkValid(t, "kof-operators (layer 2)", renderChart(t, renderSpec{chart: "kof-operators", values: r.result.Values}))
			continue
		}
		if r.service.Name != "kof-storage" && r.service.Name != "kof-collectors" {
			continue
		}
		res := renderChart(t, renderSpec{chart: r.service.Name, values: r.result.Values})
		checkValid(t, r.service.Name+" (layer 2)", res)
		rendered[r.service.Name] = &renderedService{values: r.result.Values, objects: res}
		files[r.service.Name+"/manifest.yaml"] = manifestYAML(t, res)
	}
	files["services.txt"] = services
	return files, rendered
}

// renderedService is a KOF chart rendered on a remote cluster with its layer-2 values.
type renderedService struct {
	values  map[string]any
	objects *render.Result
}
