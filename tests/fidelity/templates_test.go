package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/doctor/diagnose"
	"kof.dev/kof/internal/harness"
)

// Kinds KCM judges and the objects they read.
const (
	kindServiceTemplate      = "ServiceTemplate"
	kindServiceTemplateChain = "ServiceTemplateChain"
	kindHelmRepository       = "HelmRepository"
)

// plantedVersion is a chart version no repository serves: the planted bad ServiceTemplate asks for it.
const plantedVersion = "0.0.0-not-served"

// TestKCMJudgesServiceTemplates creates every ServiceTemplate and ServiceTemplateChain kof render shows on the
// management cluster of each scenario, with the HelmRepositories and plain-resource sources they read, and lets
// KCM's own template controllers judge them: every template of a KOF chart or of KOF's plain resources and every
// chain must be valid; a third-party chart's template must be judged invalid only because its chart cannot be
// fetched here (the proxy refuses every outside address). A planted template whose chart version the repository
// does not serve must be invalid, with KCM's message naming that version. The scenarios take turns on one cell
// without managed clusters (KCM's template controllers need no component deployed; the cell starts after the
// replays' cells, while they replay), each deleting its templates when it ends.
func TestKCMJudgesServiceTemplates(t *testing.T) {
	c := useCell(t, templatesCell, false)
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) { judgeTemplates(t, c, name) })
	}
}

func judgeTemplates(t *testing.T, c *cell, name string) {
	ctx := context.Background()
	f := renderScenario(t, name)
	inputs, local := templateInputs(t, f)
	planted := plantedTemplate(t, inputs)
	inputs = append(inputs, planted)
	t.Cleanup(func() {
		for i := len(inputs) - 1; i >= 0; i-- {
			if err := c.mgmt.Client.Delete(ctx, inputs[i]); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s: %v", key(inputs[i]), err)
			}
		}
		collectOrphanCharts(t, c)
	})
	var want []string
	for _, o := range inputs {
		ensureNamespace(t, c.mgmt, o.GetNamespace())
		if err := harness.CreateStrict(ctx, c.mgmt.Client, o); err != nil {
			t.Fatal(err)
		}
		if k := o.GetKind(); k == kindServiceTemplate || k == kindServiceTemplateChain {
			want = append(want, k+"/"+o.GetName())
		}
	}
	states, err := harness.WaitServiceTemplates(ctx, c.mgmt.Client, harness.KCMNamespace, want,
		harness.TemplateWait, c.kcm)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		switch {
		case s.Kind == kindServiceTemplate && s.Name == planted.GetName():
			if s.Valid || !strings.Contains(s.Error, plantedVersion) {
				t.Errorf("planted %s: KCM says valid=%t, error %q; want invalid, naming version %s", s.Name, s.Valid,
					s.Error, plantedVersion)
			}
		case s.Kind == kindServiceTemplateChain || local[s.Name]:
			if !s.Valid {
				t.Errorf("%s (log: %s)", s, c.kcm.LogPath)
			}
		case s.Valid:
			t.Errorf("%s: a third-party chart cannot be fetched here, yet KCM says valid", s)
		case !strings.Contains(s.Error, "failed to download"):
			// KCM's message when source-controller has no artifact of the chart (TemplateReconciler).
			t.Errorf("%s: want KCM's failure to download the third-party chart", s)
		}
	}
	ns := planted.GetNamespace()
	if ns == "" {
		ns = harness.KCMNamespace
	}
	doctorReportsInvalidTemplate(t, c.mgmt.Kubeconfig, "ServiceTemplate "+ns+"/"+planted.GetName(), plantedVersion)
}

// doctorReportsInvalidTemplate runs `kof doctor --output json` (bin/kof) on the management cluster of kubeconfig
// and fails t unless it exits 1 with a ServiceTemplateInvalid error finding on object whose field is
// status.validationError and whose message carries KCM's verdict, naming version.
func doctorReportsInvalidTemplate(t *testing.T, kubeconfig, object, version string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(shared.bin, "kof"), "doctor", "--kubeconfig", kubeconfig, "--output", "json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("kof doctor: %v; want exit status 1 (an error finding)\n%s", err, errOut.String())
	}
	var d struct {
		Findings []diagnose.Finding `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("kof doctor --output json: %v\n%s", err, out.String())
	}
	for _, f := range d.Findings {
		if f.Code != diagnose.CodeServiceTemplateInvalid || f.Object != object {
			continue
		}
		if f.Severity != diagnose.SeverityError || f.Field != "status.validationError" || !strings.Contains(f.Message, version) {
			t.Errorf("kof doctor on %s: %+v; want an error on status.validationError naming version %s", object, f, version)
		}
		return
	}
	t.Errorf("kof doctor reports no %s on %s; its findings: %+v", diagnose.CodeServiceTemplateInvalid, object, d.Findings)
}

// renderScenario runs kof render for scenario name with the charts served by the test's repository, as replay does.
func renderScenario(t *testing.T, name string) *fleet.Fleet {
	t.Helper()
	sc, err := harness.LoadScenario(filepath.Join(shared.root, "tests", "scenarios", "testdata"), name)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"global": map[string]any{"helmRepo": map[string]any{"kofManaged": map[string]any{
		"url": shared.charts.URL}}}}
	f, err := fleet.Render(context.Background(), fleet.Options{ChartsDir: filepath.Join(shared.root, "charts"),
		ValuesFiles: []string{sc.ValuesFile}, Values: values, NamespaceObject: sc.Namespace, Clusters: sc.Clusters,
		SveltosClusters: true})
	if err != nil {
		t.Fatalf("kof render: %v", err)
	}
	return f
}

// templateInputs returns, from the management cluster's rendered objects, every ServiceTemplate and
// ServiceTemplateChain, the HelmRepositories of KCM's system namespace their charts come from and the ConfigMaps
// and Secrets plain-resource templates name (HelmRepositories and sources first), and the names of the templates
// KCM must find valid here: those of a chart the test's repository serves, and those of plain resources.
func templateInputs(t *testing.T, f *fleet.Fleet) ([]*unstructured.Unstructured, map[string]bool) {
	t.Helper()
	var all []*unstructured.Unstructured
	for _, s := range f.Clusters[0].Services {
		if s.Objects != nil {
			all = append(all, s.Objects.Objects()...)
		}
	}
	find := func(kind, ns, name string) *unstructured.Unstructured {
		for _, o := range all {
			if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
				return o
			}
		}
		return nil
	}
	var sources, templates []*unstructured.Unstructured
	seen := map[string]bool{}
	add := func(list *[]*unstructured.Unstructured, o *unstructured.Unstructured) {
		if !seen[key(o)] {
			seen[key(o)] = true
			*list = append(*list, o.DeepCopy())
		}
	}
	local := map[string]bool{}
	for _, o := range all {
		switch o.GetKind() {
		case kindServiceTemplateChain:
			add(&templates, o)
		case kindServiceTemplate:
			add(&templates, o)
			if kind, _, _ := unstructured.NestedString(o.Object, "spec", "resources", "localSourceRef", "kind"); kind != "" {
				name, _, _ := unstructured.NestedString(o.Object, "spec", "resources", "localSourceRef", "name")
				src := find(kind, o.GetNamespace(), name)
				if src == nil {
					t.Fatalf("ServiceTemplate %s: %s %s/%s is not among the management cluster's objects", o.GetName(),
						kind, o.GetNamespace(), name)
				}
				add(&sources, src)
				local[o.GetName()] = true
				continue
			}
			repo, _, _ := unstructured.NestedString(o.Object, "spec", "helm", "chartSpec", "sourceRef", "name")
			hr := find(kindHelmRepository, o.GetNamespace(), repo)
			if hr == nil {
				t.Fatalf("ServiceTemplate %s: HelmRepository %s/%s is not among the management cluster's objects",
					o.GetName(), o.GetNamespace(), repo)
			}
			add(&sources, hr)
			if url, _, _ := unstructured.NestedString(hr.Object, "spec", "url"); url == shared.charts.URL {
				local[o.GetName()] = true
			}
		}
	}
	if len(templates) == 0 {
		t.Fatal("kof render shows no ServiceTemplate on the management cluster")
	}
	return append(sources, templates...), local
}

// plantedTemplate returns a copy of the first ServiceTemplate of a KOF chart among inputs, renamed, asking for
// plantedVersion of its chart, labelled as KOF's (app.kubernetes.io/part-of: kof, which kof doctor checks) and
// without the rest of the chart's labels and annotations.
func plantedTemplate(t *testing.T, inputs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	i := slices.IndexFunc(inputs, func(o *unstructured.Unstructured) bool {
		repo, _, _ := unstructured.NestedString(o.Object, "spec", "helm", "chartSpec", "sourceRef", "name")
		return o.GetKind() == kcmv1.ServiceTemplateKind && repo != "" && strings.HasPrefix(o.GetName(), "kof-")
	})
	if i < 0 {
		t.Fatal("no ServiceTemplate of a KOF chart to plant a bad copy of")
	}
	p := inputs[i].DeepCopy()
	p.SetName(p.GetName() + "-planted")
	p.SetLabels(map[string]string{"app.kubernetes.io/part-of": "kof"})
	p.SetAnnotations(nil)
	_ = unstructured.SetNestedField(p.Object, plantedVersion, "spec", "helm", "chartSpec", "version")
	return p
}
