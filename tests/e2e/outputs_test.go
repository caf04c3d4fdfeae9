package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/internal/harness"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// offlineOutputs is harness.OfflineOutputs for in, failing the test on its error.
func offlineOutputs(t *testing.T, in *harness.Installation) map[string]*unstructured.Unstructured {
	t.Helper()
	out, err := in.OfflineOutputs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveOutputs is harness.LiveOutputs on the shared API server, failing the test on its error.
func liveOutputs(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out, err := harness.LiveOutputs(context.Background(), c())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// predictedAll is harness.PredictedOutputs on the shared API server, failing the test on its error.
func predictedAll(t *testing.T, offline map[string]*unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	out, err := harness.PredictedOutputs(context.Background(), c(), offline)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffOutputs is harness.DiffOutputs, failing the test on its error.
func diffOutputs(t *testing.T, offline map[string]map[string]any, live map[string]*unstructured.Unstructured) []string {
	t.Helper()
	out, err := harness.DiffOutputs(offline, live)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertOfflineMatchesLive waits until the objects the live operator made are those the offline preview predicts
// for in's scenario (names, labels, data, spec), and shows that the comparison catches one planted difference.
func assertOfflineMatchesLive(t *testing.T, in *harness.Installation) {
	t.Helper()
	offline := offlineOutputs(t, in)
	want := predictedAll(t, offline)
	var diffs []string
	eventually(t, operatorWait, func() string {
		diffs = diffOutputs(t, want, liveOutputs(t))
		if len(diffs) == 0 {
			return ""
		}
		return fmt.Sprintf("%s: %d of %d predicted objects differ from the live operator's:\n%s", in.Scenario.Name,
			len(diffs), len(offline), strings.Join(diffs, "\n"))
	})
	t.Logf("%s: %d operator objects predicted offline equal the live ones", in.Scenario.Name, len(offline))

	// A planted difference in the offline path only: one key of one ConfigMap.
	planted := map[string]*unstructured.Unstructured{}
	var targets []string
	for id, o := range offline {
		planted[id] = o
		if o.GetKind() == "ConfigMap" && o.GetLabels()[kofv1.RegionalClusterNameLabel] != "" {
			targets = append(targets, id) // a child ConfigMap
		}
	}
	if len(targets) == 0 {
		t.Fatalf("%s: no child ConfigMap to plant a difference in", in.Scenario.Name)
	}
	sort.Strings(targets)
	target := targets[0]
	changed := planted[target].DeepCopy()
	if err := unstructured.SetNestedField(changed.Object, "https://planted.example.com/vm/insert", "data",
		"write_metrics_endpoint"); err != nil {
		t.Fatal(err)
	}
	planted[target] = changed
	got := diffOutputs(t, predictedAll(t, planted), liveOutputs(t))
	if len(got) != 1 || !strings.HasPrefix(got[0], target+" differs") || !strings.Contains(got[0], "planted.example.com") {
		t.Errorf("%s: a planted write_metrics_endpoint in %s gives differences %q, want exactly that one",
			in.Scenario.Name, target, got)
	}
}

// Scenarios 05 and 08: the management cluster stores its data on itself (M2M) or on regional-1 (M2R); the
// operator's objects are the ones the offline preview predicts.
func TestOfflinePreviewMatchesLiveOperatorM2MAndM2R(t *testing.T) {
	for _, name := range []string{"05-m2m", "08-m2r"} {
		t.Run(name, func(t *testing.T) {
			in := installScenario(t, name)
			waitOperator(t, in)
			assertOfflineMatchesLive(t, in)
			deleteClusters(t, in)
			uninstallLeavesCRDsAndNoOperatorObjects(t, in)
		})
	}
}
