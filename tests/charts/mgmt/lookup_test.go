package mgmt

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceTemplate returns a ServiceTemplate fixture serving chart from repo at version 1.0.0.
func serviceTemplate(name, chart, repo string) *unstructured.Unstructured {
	return serviceTemplateAt(name, chart, repo, "1.0.0")
}

// serviceTemplateAt returns a ServiceTemplate fixture serving chart from repo at version.
func serviceTemplateAt(name, chart, repo, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1",
		"kind":       "ServiceTemplate",
		"metadata":   map[string]any{"name": name, "namespace": kcmNamespace},
		"spec": map[string]any{"helm": map[string]any{"chartSpec": map[string]any{
			"chart": chart, "version": version, "sourceRef": map[string]any{"kind": "HelmRepository", "name": repo},
		}}},
	}}
}

// TestMothershipUpgradeChains: earlier versions of a chart found in the cluster become upgrade sources of the new
// ServiceTemplate (a KOF chart from any repository); third-party templates from another repository (KCM's own) do
// not, and neither do templates of a higher version (regression: after a rollback to 2.0.0 the chain offered the
// newer release's kof-storage-2-1-0 as an upgrade to 2.0.0).
func TestMothershipUpgradeChains(t *testing.T) {
	res := renderChart(t, renderSpec{chart: "kof-mothership", lookup: []*unstructured.Unstructured{
		serviceTemplate("kof-storage-1-1-0", "kof-storage", "kof-repo"),
		serviceTemplate("kof-storage-1-0-0", "kof-storage", "kof-repo"),
		serviceTemplate("kof-storage-2-0-0", "kof-storage", "kof-repo"),
		serviceTemplateAt("kof-storage-2-1-0", "kof-storage", "kof-repo", "2.1.0"),
		serviceTemplateAt("kof-collectors-2-0-1-e2e-1", "kof-collectors", "kof-repo", "2.0.1-e2e.1"),
		serviceTemplateAt("kof-collectors-2-0-0-rc-1", "kof-collectors", "kof-repo", "2.0.0-rc.1"),
		serviceTemplate("kof-collectors-1-4-0", "kof-collectors", "kof"),
		serviceTemplate("cert-manager-v1-18-0", "cert-manager", "kof-templates-cert-manager"),
		serviceTemplate("cert-manager-1-16-0", "cert-manager", "kcm-templates"),
	}})
	// Every available upgrade names the target template and its version (regression: KCM got
	// `availableUpgrades: [{name: kof-storage-2-0-0}]` without the version).
	upgrade := func(from, to, version string) map[string]any {
		return map[string]any{"name": from, "availableUpgrades": []any{map[string]any{"name": to, "version": version}}}
	}
	for chain, want := range map[string][]any{
		"kof-storage-2-0-0": {
			map[string]any{"name": "kof-storage-2-0-0"},
			upgrade("kof-storage-1-0-0", "kof-storage-2-0-0", "2.0.0"),
			upgrade("kof-storage-1-1-0", "kof-storage-2-0-0", "2.0.0"),
		},
		"cert-manager-v1-19-1": {
			map[string]any{"name": "cert-manager-v1-19-1"},
			upgrade("cert-manager-v1-18-0", "cert-manager-v1-19-1", "v1.19.1"),
		},
		"kof-collectors-2-0-0": {
			map[string]any{"name": "kof-collectors-2-0-0"},
			upgrade("kof-collectors-1-4-0", "kof-collectors-2-0-0", "2.0.0"),
			upgrade("kof-collectors-2-0-0-rc-1", "kof-collectors-2-0-0", "2.0.0"),
		},
		"kof-operators-2-0-0": {map[string]any{"name": "kof-operators-2-0-0"}},
	} {
		obj := mustGet(t, res, "ServiceTemplateChain", kcmNamespace, chain)
		if diff := cmp.Diff(want, field(t, obj, "spec", "supportedTemplates")); diff != "" {
			t.Errorf("ServiceTemplateChain %s (-want +got):\n%s", chain, diff)
		}
		if obj.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("ServiceTemplateChain %s is not kept on uninstall", chain)
		}
	}
}

// TestMothershipChainsOnlyUpgrade: a ServiceTemplate of a higher chart version left in the cluster (kof-storage-2-1-0
// after a rollback of kof-mothership to 2.0.0), or of the same version, is never offered an "upgrade" to the current
// template (regression: the chain offered kof-storage-2-1-0 → kof-storage-2-0-0, a downgrade).
func TestMothershipChainsOnlyUpgrade(t *testing.T) {
	at := func(name, version string) *unstructured.Unstructured {
		st := serviceTemplate(name, "kof-storage", "kof-repo")
		if err := unstructured.SetNestedField(st.Object, version, "spec", "helm", "chartSpec", "version"); err != nil {
			t.Fatal(err)
		}
		return st
	}
	res := renderChart(t, renderSpec{chart: "kof-mothership", lookup: []*unstructured.Unstructured{
		at("kof-storage-2-1-0", "2.1.0"), at("kof-storage-2-0-0-rc1", "2.0.0"), at("kof-storage-1-9-0", "1.9.0"),
	}})
	obj := mustGet(t, res, "ServiceTemplateChain", kcmNamespace, "kof-storage-2-0-0")
	want := []any{
		map[string]any{"name": "kof-storage-2-0-0"},
		map[string]any{"name": "kof-storage-1-9-0", "availableUpgrades": []any{
			map[string]any{"name": "kof-storage-2-0-0", "version": "2.0.0"}}},
	}
	if diff := cmp.Diff(want, field(t, obj, "spec", "supportedTemplates")); diff != "" {
		t.Errorf("ServiceTemplateChain kof-storage-2-0-0 (-want +got):\n%s", diff)
	}
}

// TestMothershipKeepsOperatorOwnedData: an upgrade keeps the promxy config Secret and rules ConfigMap that
// kof-operator wrote, instead of resetting them to the bootstrap content.
func TestMothershipKeepsOperatorOwnedData(t *testing.T) {
	written := base64.StdEncoding.EncodeToString([]byte("promxy:\n  server_groups: [written-by-operator]\n"))
	res := renderChart(t, renderSpec{chart: "kof-mothership", lookup: []*unstructured.Unstructured{
		serviceTemplate("kof-storage-1-0-0", "kof-storage", "kof-repo"),
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": promxySecret, "namespace": namespace},
			"data":     map[string]any{"config.yaml": written},
		}},
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": promxyRules, "namespace": namespace},
			"data":     map[string]any{"kof-storage.yaml": "groups: []\n"},
		}},
	}})
	if got := str(t, mustGet(t, res, "Secret", namespace, promxySecret), "data", "config.yaml"); got != written {
		t.Errorf("promxy config Secret rewritten on upgrade: got %q, want the operator's %q", got, written)
	}
	rules := mustGet(t, res, "ConfigMap", namespace, promxyRules)
	if diff := cmp.Diff(map[string]any{"kof-storage.yaml": "groups: []\n"}, rules.Object["data"]); diff != "" {
		t.Errorf("promxy rules ConfigMap data (-want +got):\n%s", diff)
	}
}
