package diagnose

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	roleLabel    = "k0rdent.mirantis.com/kof-cluster-role"
	versionLabel = "k0rdent.mirantis.com/kof-version"
	istioLabel   = "k0rdent.mirantis.com/istio-role"
)

func TestExplainSelector(t *testing.T) {
	sel := metav1.LabelSelector{
		MatchLabels: map[string]string{roleLabel: "child"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: istioLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
			{Key: versionLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"1.0.0"}},
		},
	}
	cases := []struct {
		name    string
		labels  map[string]string
		matches bool
		failing []Term
	}{
		{"every term holds", map[string]string{roleLabel: "child", versionLabel: "1.0.0"}, true, nil},
		{"wrong value", map[string]string{roleLabel: "regional", versionLabel: "1.0.0"}, false,
			[]Term{{Requirement: roleLabel + "=child", Key: roleLabel, Why: `label ` + roleLabel + ` is "regional"`}}},
		{"missing label", map[string]string{roleLabel: "child"}, false,
			[]Term{{Requirement: versionLabel + " in (1.0.0)", Key: versionLabel,
				Why: "label " + versionLabel + " is not set"}}},
		{"label that must be absent", map[string]string{roleLabel: "child", versionLabel: "1.0.0", istioLabel: "member"},
			false, []Term{{Requirement: "!" + istioLabel, Key: istioLabel,
				Why: "label " + istioLabel + ` is set (to "member")`}}},
		{"two failing terms", nil, false, []Term{
			{Requirement: roleLabel + "=child", Key: roleLabel, Why: "label " + roleLabel + " is not set"},
			{Requirement: versionLabel + " in (1.0.0)", Key: versionLabel, Why: "label " + versionLabel + " is not set"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, terms, err := ExplainSelector(sel, c.labels)
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.matches {
				t.Errorf("matches = %v, want %v", ok, c.matches)
			}
			if len(terms) != 3 {
				t.Errorf("%d terms, want 3: %+v", len(terms), terms)
			}
			if diff := cmp.Diff(c.failing, Failing(terms)); diff != "" {
				t.Errorf("failing terms (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainSelectorEmptyMatchesEverything(t *testing.T) {
	ok, terms, err := ExplainSelector(metav1.LabelSelector{}, map[string]string{"a": "b"})
	if err != nil || !ok || len(terms) != 0 {
		t.Errorf("empty selector: matches %v, terms %v, err %v; want true, none, nil", ok, terms, err)
	}
}

func TestExplainSelectorInvalid(t *testing.T) {
	_, _, err := ExplainSelector(metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: roleLabel, Operator: "Near", Values: []string{"x"}}}}, nil)
	if err == nil {
		t.Fatal("an unknown operator is accepted")
	}
	if want := "spec.clusterSelector: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q does not name spec.clusterSelector", err)
	}
}
