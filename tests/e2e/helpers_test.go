package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/internal/harness"
	"kof.dev/kof/internal/testproc"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// shared is set once by TestMain before any test runs.
var shared *env

// installScenario installs the scenario on the shared control plane and stops its operator when the test ends.
func installScenario(t *testing.T, name string) *harness.Installation {
	t.Helper()
	sc, err := harness.LoadScenario(shared.scenariosDir, name)
	if err != nil {
		t.Fatal(err)
	}
	in, err := shared.session.Install(context.Background(), sc, nil)
	t.Cleanup(func() {
		if in != nil {
			if err := in.Stop(); err != nil {
				t.Errorf("stop operator: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatalf("install %s: %v", name, err)
	}
	return in
}

// waitOperator waits for every object the operator must make and fails the test for each one missing (then
// stops it: later checks would only repeat the gap). A failure reported before the call does not stop the test
// here, so a later step is still checked and reported.
func waitOperator(t *testing.T, in *harness.Installation) []harness.Expected {
	t.Helper()
	got, err := in.WaitOperator(context.Background(), operatorWait)
	if err != nil {
		t.Fatalf("wait for operator: %v", err)
	}
	missing := 0
	for _, e := range got {
		if !e.Found {
			missing++
			t.Errorf("kof-operator made no %s for cluster %s within %s", e, e.Cluster, operatorWait)
		}
	}
	if missing > 0 {
		t.FailNow()
	}
	return got
}

func c() client.Client { return shared.session.ControlPlane.Client }

func configMap(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	data, err := tryConfigMap(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tryConfigMap returns the data of ConfigMap ns/name, or the error naming it (for waits: it may not exist yet).
func tryConfigMap(ns, name string) (map[string]string, error) {
	var cm corev1.ConfigMap
	if err := c().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		return nil, fmt.Errorf("get ConfigMap %s/%s: %w", ns, name, err)
	}
	return cm.Data, nil
}

// credentials returns every operator-made Secret as `namespace/name` → UID + data, to compare across an upgrade.
func credentials(t *testing.T) map[string]string {
	t.Helper()
	var list corev1.SecretList
	if err := c().List(context.Background(), &list,
		client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		var b strings.Builder
		b.WriteString(string(s.UID))
		for _, k := range []string{"username", "password"} {
			b.WriteString(" " + k + "=" + string(s.Data[k]))
		}
		out[s.Namespace+"/"+s.Name] = b.String()
	}
	return out
}

// releaseObjects returns the objects of the deployed Helm release name in namespace, by manifest key.
func releaseObjects(t *testing.T, name, namespace string) map[manifest.Key]*unstructured.Unstructured {
	t.Helper()
	rel, err := shared.session.Helm.Get(name, namespace)
	if err != nil || rel == nil {
		t.Fatalf("release %s/%s: %v (found %v)", namespace, name, err, rel != nil)
	}
	set, err := manifest.Parse(map[string]string{"manifest": rel.Manifest})
	if err != nil {
		t.Fatalf("parse release %s/%s: %v", namespace, name, err)
	}
	out := map[manifest.Key]*unstructured.Unstructured{}
	for _, o := range set.Objects() {
		if o.GetNamespace() == "" && !clusterScoped(t, o) {
			o.SetNamespace(namespace)
		}
		out[manifest.KeyOf(o)] = o
	}
	return out
}

// exists reports whether obj (by apiVersion, kind, namespace and name) is on the API server.
func exists(t *testing.T, obj *unstructured.Unstructured) bool {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(obj.GroupVersionKind())
	err := c().Get(context.Background(), client.ObjectKeyFromObject(obj), u)
	if err == nil {
		return true
	}
	if client.IgnoreNotFound(err) != nil {
		t.Fatalf("get %s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return false
}

func clusterScoped(t *testing.T, obj *unstructured.Unstructured) bool {
	t.Helper()
	m, err := c().RESTMapper().RESTMapping(obj.GroupVersionKind().GroupKind(), obj.GroupVersionKind().Version)
	if err != nil {
		t.Fatalf("REST mapping of %s: %v", obj.GroupVersionKind(), err)
	}
	return m.Scope.Name() == "root"
}

// operatorClusterScoped lists every cluster-scoped object labelled managed-by kof-operator, over every
// cluster-scoped kind the API server serves, as `Kind name`.
func operatorClusterScoped(t *testing.T) []string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(shared.session.ControlPlane.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if r.Namespaced || strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") {
				continue
			}
			ul := &unstructured.UnstructuredList{}
			ul.SetAPIVersion(l.GroupVersion)
			ul.SetKind(r.Kind + "List")
			if err := c().List(context.Background(), ul,
				client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
				t.Fatalf("list %s %s: %v", l.GroupVersion, r.Kind, err)
			}
			for _, o := range ul.Items {
				out = append(out, o.GetKind()+" "+o.GetName())
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// eventually waits until cond returns "" (testproc.Eventually), failing the test with its last message after timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	testproc.Eventually(t, timeout, "condition", func(context.Context) error {
		if msg := cond(); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
}

// crdExists reports whether the CRD name is installed.
func crdExists(t *testing.T, name string) bool {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	err := c().Get(context.Background(), client.ObjectKey{Name: name}, &crd)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err == nil
}

// deleteClusters deletes every ClusterDeployment of the scenario (the user removing the clusters from KOF).
func deleteClusters(t *testing.T, in *harness.Installation) {
	t.Helper()
	for _, o := range in.Scenario.Clusters {
		if o.GetKind() != harness.KindClusterDeployment {
			continue
		}
		if err := c().Delete(context.Background(), o.DeepCopy()); client.IgnoreNotFound(err) != nil {
			t.Fatalf("delete ClusterDeployment %s/%s: %v", o.GetNamespace(), o.GetName(), err)
		}
	}
	eventually(t, operatorWait, func() string {
		for _, o := range in.Scenario.Clusters {
			if o.GetKind() != harness.KindClusterDeployment {
				continue
			}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.GroupVersionKind())
			err := c().Get(context.Background(), client.ObjectKeyFromObject(o), u)
			switch {
			case err == nil:
				return "ClusterDeployment " + o.GetName() + " still exists (operator finalizer not removed)"
			case !apierrors.IsNotFound(err) && !harness.Retryable(err):
				t.Fatalf("get ClusterDeployment %s: %v", o.GetName(), err)
			case err != nil && !apierrors.IsNotFound(err):
				return "ClusterDeployment " + o.GetName() + ": " + err.Error()
			}
		}
		return ""
	})
}
