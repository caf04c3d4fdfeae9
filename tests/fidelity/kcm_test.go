package fidelity

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/internal/harness"
)

// kcmInputs creates on c's management cluster what KCM turns into ServiceSets and Sveltos ClusterProfiles for the
// scenario: every ServiceTemplate and ServiceTemplateChain kof render shows there with their HelmRepositories and
// plain-resource sources, a Credential for each ClusterDeployment (KCM reads the one spec.credential names), and
// every MultiClusterService. A third-party chart needs the internet, which the test has not: its HelmRepository
// is pointed at a repository serving a stand-in chart of the same name and version that installs nothing, so KCM
// and Sveltos deliver it and the KOF services that depend on it (a service enters the ServiceSet only once its
// dependencies are deployed) as they would with the real chart.
func kcmInputs(t *testing.T, c *cell, sc *harness.Scenario, f *fleet.Fleet) {
	t.Helper()
	ctx := context.Background()
	inputs, _ := templateInputs(t, f)
	standIns := standInRepository(t, inputs)
	for _, o := range inputs {
		if o.GetKind() != kindHelmRepository {
			continue
		}
		if url, _, _ := unstructured.NestedString(o.Object, "spec", "url"); url != shared.charts.URL {
			_ = unstructured.SetNestedField(o.Object, standIns.URL, "spec", "url")
			_ = unstructured.SetNestedField(o.Object, "default", "spec", "type")
		}
	}
	seen := map[string]bool{}
	for _, o := range sc.Clusters {
		if o.GetKind() != harness.KindClusterDeployment {
			continue
		}
		cred := credentialOf(o)
		if seen[o.GetNamespace()+"/"+cred] {
			continue
		}
		seen[o.GetNamespace()+"/"+cred] = true
		// The identity holds nothing: the cluster's provider, which would read it, does not run here.
		identity := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": cred + "-identity", "namespace": o.GetNamespace()}}}
		credential := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kcmv1.GroupVersion.String(), "kind": kcmv1.CredentialKind,
			"metadata": map[string]any{"name": cred, "namespace": o.GetNamespace()},
			// KCM reads a Credential's region (none: the management cluster's own) and checks that its identity
			// exists.
			"spec": map[string]any{"identityRef": map[string]any{"apiVersion": "v1", "kind": "Secret",
				"name": cred + "-identity", "namespace": o.GetNamespace()}},
		}}
		inputs = append(inputs, identity, credential)
	}
	for _, s := range f.Clusters[0].Services {
		if s.Objects == nil {
			continue
		}
		for _, o := range s.Objects.OfKind(kcmv1.MultiClusterServiceKind) {
			inputs = append(inputs, o.DeepCopy())
		}
	}
	for _, o := range inputs {
		ensureNamespace(t, c.mgmt, o.GetNamespace())
		if err := harness.CreateStrict(ctx, c.mgmt.Client, o); err != nil {
			t.Fatal(err)
		}
	}
}

// standInRepository serves, for the scenario's run, one stand-in chart (no templates) per chart and version a
// ServiceTemplate of inputs takes from a HelmRepository other than the test's, and stops it when the test ends.
func standInRepository(t *testing.T, inputs []*unstructured.Unstructured) *harness.ChartRepository {
	t.Helper()
	var charts []*chart.Chart
	seen := map[string]bool{}
	for _, o := range inputs {
		if o.GetKind() != kindServiceTemplate {
			continue
		}
		repo, _, _ := unstructured.NestedString(o.Object, "spec", "helm", "chartSpec", "sourceRef", "name")
		name, _, _ := unstructured.NestedString(o.Object, "spec", "helm", "chartSpec", "chart")
		version, _, _ := unstructured.NestedString(o.Object, "spec", "helm", "chartSpec", "version")
		i := slices.IndexFunc(inputs, func(h *unstructured.Unstructured) bool {
			url, _, _ := unstructured.NestedString(h.Object, "spec", "url")
			return h.GetKind() == kindHelmRepository && h.GetName() == repo && url != shared.charts.URL
		})
		if i < 0 || seen[name+"@"+version] {
			continue
		}
		seen[name+"@"+version] = true
		charts = append(charts, &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name,
			Version: version, Type: "application",
			Description: "Stand-in for a third-party chart the fidelity test cannot fetch; it installs nothing."}})
	}
	empty := t.TempDir()
	dir := filepath.Join(t.TempDir(), "stand-ins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := harness.ServeCharts(empty, dir, charts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// credentialOf returns the Credential ClusterDeployment cd names, or `<name>-credential` for one that names none:
// KCM makes a Sveltos profile only for a ClusterDeployment whose Credential exists (a real one always names one;
// kof render does not read it).
func credentialOf(cd *unstructured.Unstructured) string {
	if cred, _, _ := unstructured.NestedString(cd.Object, "spec", "credential"); cred != "" {
		return cred
	}
	return cd.GetName() + "-credential"
}

// collectOrphanCharts deletes the Flux HelmCharts KCM made on c's management cluster for templates that no longer
// exist, as the garbage
// collector of a real cluster would (KCM makes one HelmChart per ServiceTemplate, owned by it; the test's API
// server runs no garbage collector). Without it a template created again later would be judged by the chart its
// predecessor fetched.
func collectOrphanCharts(t *testing.T, c *cell) {
	t.Helper()
	ctx := context.Background()
	charts := &unstructured.UnstructuredList{}
	charts.SetGroupVersionKind(schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1",
		Kind: "HelmChartList"})
	if err := c.mgmt.Client.List(ctx, charts, client.InNamespace(harness.KCMNamespace)); err != nil {
		t.Errorf("list HelmCharts: %v", err)
		return
	}
	for i := range charts.Items {
		hc := &charts.Items[i]
		for _, ref := range hc.GetOwnerReferences() {
			if ref.Kind != kcmv1.ServiceTemplateKind {
				continue
			}
			owner := &kcmv1.ServiceTemplate{}
			err := c.mgmt.Client.Get(ctx, client.ObjectKey{Namespace: hc.GetNamespace(), Name: ref.Name}, owner)
			if apierrors.IsNotFound(err) || (err == nil && (owner.UID != ref.UID || owner.DeletionTimestamp != nil)) {
				if err := c.mgmt.Client.Delete(ctx, hc); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("delete HelmChart %s: %v", hc.GetName(), err)
				}
			}
		}
	}
}
