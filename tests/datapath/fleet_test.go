package datapath

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/collector"
	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/internal/vmauth"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// scenariosDir holds the user scenarios (shared with tests/scenarios).
var scenariosDir = filepath.Join("..", "scenarios", "testdata")

// rendered is one scenario's fleet with what the data path needs from it.
type rendered struct {
	fleet    *fleet.Fleet
	clusters []*unstructured.Unstructured
	storage  config.StorageURLs
}

// renderScenario renders scenario name as `kof render` does and reads the storage URLs the charts give the operator.
func renderScenario(t *testing.T, name string) *rendered {
	t.Helper()
	dir := filepath.Join(scenariosDir, name)
	clustersFile := filepath.Join(dir, "clusters.yaml")
	if _, err := os.Stat(clustersFile); err != nil {
		clustersFile = filepath.Join(scenariosDir, "clusters-standard.yaml")
	}
	r := &rendered{clusters: readObjects(t, clustersFile)}
	opts := fleet.Options{ChartsDir: filepath.Join("..", "..", "charts"),
		ValuesFiles: []string{filepath.Join(dir, "values.yaml")}, Clusters: r.clusters}
	if ns := filepath.Join(dir, "namespace.yaml"); fileExists(ns) {
		opts.NamespaceObject = readObjects(t, ns)[0]
	}
	f, err := fleet.Render(context.Background(), opts)
	if err != nil {
		t.Fatalf("render scenario %s: %v", name, err)
	}
	r.fleet = f
	r.storage = operatorStorage(t, f)
	return r
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.ParseDocuments(path, data)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		out = append(out, o.Unstructured)
	}
	return out
}

// operatorStorage returns the storage URLs of the kof-operator Deployment kof-mothership renders (its environment,
// read by operator/config as the operator reads it).
func operatorStorage(t *testing.T, f *fleet.Fleet) config.StorageURLs {
	t.Helper()
	for _, r := range f.Releases {
		if r.Objects == nil {
			continue
		}
		for _, d := range r.Objects.OfKind("Deployment") {
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				env := map[string]string{}
				list, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
				for _, e := range list {
					kv := e.(map[string]any)
					name, _ := kv["name"].(string)
					env[name], _ = kv["value"].(string)
					if _, ok := kv["valueFrom"]; ok {
						env[name] = d.GetNamespace()
					}
				}
				if _, ok := env[config.EnvVMInsertURL]; !ok {
					continue
				}
				cfg, err := config.Load(func(k string) string { return env[k] })
				if err != nil {
					t.Fatalf("kof-operator environment of %s/%s: %v", d.GetNamespace(), d.GetName(), err)
				}
				return cfg.Storage
			}
		}
	}
	t.Fatal("no kof-operator Deployment in the rendered releases")
	return config.StorageURLs{}
}

// clusterDeployment returns the ClusterDeployment name of the scenario.
func (r *rendered) clusterDeployment(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range r.clusters {
		if o.GetKind() == "ClusterDeployment" && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no ClusterDeployment %s", name)
	return nil
}

// secret returns key of Secret name: from the objects of service s, else from the operator's objects.
func (r *rendered) secret(t *testing.T, s *fleet.Service, name, key string) string {
	t.Helper()
	var objs []*unstructured.Unstructured
	if s != nil && s.Objects != nil {
		objs = s.Objects.OfKind("Secret")
	}
	objs = append(objs, r.fleet.Operator...)
	for _, o := range objs {
		if o.GetKind() != "Secret" || o.GetName() != name {
			continue
		}
		if v, ok, _ := unstructured.NestedString(o.Object, "stringData", key); ok {
			return v
		}
		if v, ok, _ := unstructured.NestedString(o.Object, "data", key); ok {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatalf("Secret %s key %s: %v", name, key, err)
			}
			return string(b)
		}
	}
	t.Fatalf("no Secret %s with key %s rendered", name, key)
	return ""
}

// vmauthConfig returns the vmauth config of a regional's vmauth serving the given bundles: the VMUsers the operator
// writes (outputs.VMUser) with the passwords of their credentials Secrets, translated by internal/vmauth.
func (r *rendered) vmauthConfig(t *testing.T, bundles ...bundleRef) []byte {
	t.Helper()
	var users []vmauth.User
	for _, b := range bundles {
		u := outputs.VMUser(b.namespace, b.base, b.tenant, r.storage)
		up, err := vmauth.Upstream(u)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, vmauth.User{VMUser: up,
			Password: r.secret(t, nil, u.Spec.PasswordRef.Name, u.Spec.PasswordRef.Key)})
	}
	cfg, err := vmauth.Translate(users)
	if err != nil {
		t.Fatal(err)
	}
	data, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// bundleRef names one VMUser bundle.
type bundleRef struct{ namespace, base, tenant string }

// childBundle returns the bundle of child cluster name, with its tenant as the operator derives it.
func (r *rendered) childBundle(t *testing.T, name string) bundleRef {
	cd := r.clusterDeployment(t, name)
	return bundleRef{cd.GetNamespace(), names.ChildVMUserBase(cd.GetNamespace(), name), outputs.ChildTenant(cd.GetLabels())}
}

// adminBundle returns the admin bundle of regional cluster name.
func (r *rendered) adminBundle(t *testing.T, name string) bundleRef {
	cd := r.clusterDeployment(t, name)
	return bundleRef{cd.GetNamespace(), names.AdminVMUserBase(cd.GetNamespace(), name), ""}
}

// nodeCollector returns the node collector of cluster's kof-collectors service, its config and its service.
func (r *rendered) nodeCollector(t *testing.T, cluster string) (*unstructured.Unstructured, collector.Config, *fleet.Service) {
	t.Helper()
	c := r.fleet.Cluster(cluster)
	if c == nil || c.Service("kof-collectors") == nil {
		t.Fatalf("cluster %s receives no kof-collectors", cluster)
	}
	s := c.Service("kof-collectors")
	if s.Objects == nil {
		t.Fatalf("kof-collectors of %s did not render: %v", cluster, s.Err)
	}
	for _, o := range s.Objects.OfKind(collector.CollectorKind) {
		if mode, _, _ := unstructured.NestedString(o.Object, "spec", "mode"); mode == "daemonset" {
			cfgs, err := collector.FromObjects(cluster, []*unstructured.Unstructured{o})
			if err != nil {
				t.Fatal(err)
			}
			return o, cfgs[0], s
		}
	}
	t.Fatalf("kof-collectors of %s renders no node collector", cluster)
	return nil, collector.Config{}, nil
}
