package mgmt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/render"
)

// contains reports whether s contains sub.
func contains(s, sub string) bool { return strings.Contains(s, sub) }

func checkPropagationDefaults(t *testing.T, res *render.Result) {
	if res.Len() != 0 {
		t.Errorf("disabled kof-propagation renders %v, want nothing", res.KindSummary())
	}
}

func checkPropagationVMUserBundle(t *testing.T, res *render.Result) {
	if diff := cmp.Diff(map[string]int{"Secret": 1, "VMUser": 1}, res.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	secret := mustGet(t, res, "Secret", namespace, "kof-vmuser-creds-child-1-0123456789")
	if got := str(t, secret, "stringData", "username"); got != "child-1-0123456789" {
		t.Errorf("Secret username %q, want it passed through", got)
	}
	vmuser := mustGet(t, res, "VMUser", "", "kof-vmuser-child-1-0123456789")
	labels := vmuser.GetLabels()
	if labels["k0rdent.mirantis.com/kof-generated"] != "true" || labels["app.kubernetes.io/instance"] != "kof-propagation" {
		t.Errorf("VMUser labels %v, want its own labels and the chart's", labels)
	}
	if _, ok := vmuser.Object["status"]; ok {
		t.Error("propagated VMUser keeps its status")
	}
	if _, ok := vmuser.Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Error("propagated VMUser keeps metadata.creationTimestamp")
	}
	if got := str(t, vmuser, "spec", "passwordRef", "name"); got != secret.GetName() {
		t.Errorf("VMUser passwordRef %q, want the propagated Secret", got)
	}
}

// TestPropagationRejectsNonObjects: an entry without kind fails, naming the index and field.
func TestPropagationRejectsNonObjects(t *testing.T) {
	err := renderError(t, renderSpec{chart: "kof-propagation", values: map[string]any{"propagation": map[string]any{
		"enabled": true,
		"data":    []any{map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "x"}}},
	}}})
	if !contains(err.Error(), "propagation.data[0].kind") {
		t.Errorf("error %q does not name propagation.data[0].kind", err)
	}
}
