package parity

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/operator/names"
)

// one checks a single chart directory of testdata.
func one(t *testing.T, dir string) *Report {
	t.Helper()
	rep := &Report{Checked: map[string][]string{}}
	if err := CheckChart(context.Background(), dir, DefaultHelpers(), DefaultCases(), rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestGoodHelpersMatch(t *testing.T) {
	rep := one(t, "testdata/good")
	if diff := cmp.Diff(map[string][]string{"good": {"kof.names.childVMUserBase", "kof.names.adler32"}}, rep.Checked); diff != "" {
		t.Errorf("checked (-want +got):\n%s", diff)
	}
	if want := 2 * len(DefaultCases()); rep.Comparisons != want {
		t.Errorf("comparisons = %d, want %d", rep.Comparisons, want)
	}
	for _, m := range rep.Mismatches {
		t.Errorf("%s", m)
	}
}

func TestBadHelperReported(t *testing.T) {
	rep := one(t, "testdata/bad")
	got := map[string]bool{}
	for _, m := range rep.Mismatches {
		got[m.Case] = true
		if m.Want != names.ChildVMUserBase(namespaceOf(m.Case), clusterOf(m.Case)) {
			t.Errorf("%s: Want is not the Go result", m)
		}
	}
	// Cut at 30: every name whose readable part exceeds 29 characters differs; so does the empty readable part.
	for _, c := range []string{"253 characters", "63 characters", "64 characters", "40 characters",
		"'-' at the 29th character", "no readable character"} {
		if !got[c] {
			t.Errorf("case %q not reported; mismatches: %v", c, rep.Mismatches)
		}
	}
	for _, c := range []string{"short", "contract vector child-adopted", "unicode", "dotted", "upper-case"} {
		if got[c] {
			t.Errorf("case %q reported although the cut does not apply", c)
		}
	}
	layer2 := 0
	for _, m := range rep.Mismatches {
		if m.Helper == "kof.names.childVMUserBaseExpr" {
			layer2++
		}
	}
	if layer2 == 0 {
		t.Errorf("the planted layer-2 expression defect is not reported: %v", rep.Mismatches)
	}
	m := rep.Mismatches[0]
	if !strings.Contains(m.String(), "bad: kof.names.childVMUserBase (dict \"cluster\"") {
		t.Errorf("String() = %q", m.String())
	}
}

func clusterOf(caseName string) string {
	for _, c := range DefaultCases() {
		if c.Name == caseName {
			return c.Cluster
		}
	}
	return ""
}

func namespaceOf(caseName string) string {
	for _, c := range DefaultCases() {
		if c.Name == caseName {
			return c.Namespace
		}
	}
	return ""
}

func TestChartsWithoutHelpers(t *testing.T) {
	if rep := one(t, "testdata/plain"); len(rep.Checked) != 0 || rep.Comparisons != 0 {
		t.Errorf("plain chart checked: %+v", rep)
	}
	_, err := Check(context.Background(), "testdata/empty", DefaultHelpers(), DefaultCases())
	if err == nil || !strings.Contains(err.Error(), "no chart") {
		t.Errorf("zero charts: %v", err)
	}
	rep, err := Check(context.Background(), "testdata", DefaultHelpers(), DefaultCases())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checked) != 2 {
		t.Errorf("checked %v, want good and bad", rep.Checked)
	}
}

func TestContractVectors(t *testing.T) {
	for _, c := range []struct{ ns, cluster, want string }{
		{"kcm-system", "child-adopted", "child-adopted-eea83bde02"},
		{"kcm-system", "c7", "c7-b7f0a206d3"},
	} {
		if got := names.ChildVMUserBase(c.ns, c.cluster); got != c.want {
			t.Errorf("ChildVMUserBase(%q) = %q, want %q", c.cluster, got, c.want)
		}
	}
}

// TestRepositoryCharts runs the check over the repository's charts: at least one defines the helpers.
func TestRepositoryCharts(t *testing.T) {
	rep, err := Check(context.Background(), "../../charts", DefaultHelpers(), DefaultCases())
	if err != nil {
		t.Fatal(err)
	}
	// The one source of the name rules (charts/partials) reaches every chart that names per-cluster objects, at
	// layer 1 and layer 2 (no chart names objects of earlier releases: kof.names.adler32 is testdata's only).
	want := distinct(DefaultHelpers())
	delete(want, "kof.names.adler32")
	for _, chart := range []string{"kof-child", "kof-regional", "kof-storage"} {
		if got := len(rep.Checked[chart]); got != len(want) {
			t.Errorf("%s: %d helpers checked (%v), want all %d", chart, got, rep.Checked[chart], len(want))
		}
	}
	t.Logf("%d comparisons, %d mismatches", rep.Comparisons, len(rep.Mismatches))
	for _, m := range rep.Mismatches {
		t.Errorf("%s", m)
	}
}

// distinct returns the distinct helper names.
func distinct(hs []Helper) map[string]bool {
	out := map[string]bool{}
	for _, h := range hs {
		out[h.Name] = true
	}
	return out
}
