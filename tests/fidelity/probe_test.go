package fidelity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/sveltos"
)

// The probe release: KOF's values are written to survive both template passes alike, so they cannot tell whether
// the emulator runs the passes Sveltos runs. The probe's values can: an escaped action comes out of the first pass
// as an action the second pass executes (double pass: the cluster's name), and stays literal text with one pass.
// kof-operators with delivery none renders nothing and takes any values under a passthrough key.
const (
	probeRelease = "fidelity-probe"
	probeValues  = `delivery: none
prometheus-operator-crds:
  values:
    escaped: '{{ "{{" }} .Cluster.metadata.name {{ "}}" }}'
    name: {{ .Cluster.metadata.name }}
`
)

// probe deploys the probe release to tg through a ClusterProfile of its own and checks that addon-controller
// installed the values the emulator predicts in mode, and that the other mode predicts different values (the probe
// tells the modes apart).
func probe(t *testing.T, tg *target, cluster *unstructured.Unstructured, mode sveltos.Mode) {
	t.Helper()
	p := &addonv1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Name: probeRelease + "-" + tg.ref.Name},
		Spec: addonv1.Spec{ClusterRefs: []corev1.ObjectReference{tg.ref}, SyncMode: addonv1.SyncModeContinuous,
			HelmCharts: []addonv1.HelmChart{{RepositoryURL: shared.charts.URL, RepositoryName: "kof-operators",
				ChartName: "kof-operators/kof-operators", ChartVersion: operatorsVersion(t, tg), ReleaseName: probeRelease,
				ReleaseNamespace: probeRelease, Values: probeValues, HelmChartAction: addonv1.HelmChartActionInstall}}}}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(addonv1.GroupVersion.WithKind(addonv1.ClusterProfileKind))
	unstructured.RemoveNestedField(u.Object, "status")
	if err := tg.cell.mgmt.Client.Create(context.Background(), u, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("create ClusterProfile %s: %v", u.GetName(), err)
	}
	predict := func(m sveltos.Mode) (map[string]any, error) {
		res, err := sveltos.Instantiate(sveltos.Input{Profile: u.GetName(), Service: probeRelease,
			ServiceNamespace: probeRelease, Cluster: cluster, Values: probeValues, Mode: m})
		return res.Values, err
	}
	want, err := predict(mode)
	if err != nil {
		t.Fatalf("emulator, probe in mode %v: %v", mode, err)
	}
	if rel := waitRelease(t, tg, &fleet.Service{Name: probeRelease, Namespace: probeRelease}); rel != nil {
		if d := cmp.Diff(normalize(t, want), normalize(t, rel.Config)); d != "" {
			t.Errorf("cluster %s probe release: values differ (-emulator +addon-controller):\n%s", tg.cluster.Name, d)
		}
	}
	other := sveltos.SinglePass
	if mode == sveltos.SinglePass {
		other = sveltos.DoublePass
	}
	if got, err := predict(other); err == nil && cmp.Diff(normalize(t, want), normalize(t, got)) == "" {
		t.Errorf("the probe's values are the same in modes %v and %v; it cannot tell them apart", mode, other)
	}
}

// operatorsVersion returns the version of the kof-operators chart tg receives.
func operatorsVersion(t *testing.T, tg *target) string {
	t.Helper()
	for _, s := range tg.services {
		if s.Chart == "kof-operators" {
			return s.Version
		}
	}
	t.Fatalf("cluster %s receives no kof-operators; the probe needs its version", tg.cluster.Name)
	return ""
}
