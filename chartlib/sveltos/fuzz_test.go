package sveltos

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzInstantiate feeds arbitrary values texts to Lint and Instantiate (both modes). It checks that nothing
// panics, that findings point at lines of the text, that failures are *Error values naming the MCS, service
// and cluster, that instantiation is deterministic, and that a text Lint finds clean renders the same values
// in both modes. Seeds: testdata/fuzz/FuzzInstantiate and the f.Add calls below.
func FuzzInstantiate(f *testing.F) {
	for _, seed := range []string{
		"a: 1\n",
		"a:\n  b: {{ .Cluster.metadata.name }}\n",
		"a:\n  b: {{ .Cluster.metadata.labels | toYaml | nindent 4 }}\n",
		"{{- $v := fromYaml \"x: [\" }}\nerr: {{ hasKey $v \"Error\" }}\n",
		"a: {{ index .Cluster.metadata.labels \"k0rdent.mirantis.com/kof-cluster-role\" }} \n",
		"name: \"{{ \"{{\" }} .Cluster.metadata.name {{ \"}}\" }}\"\n",
		"x: {{ getField \"ChildConfig\" \"data.regional_cluster_name\" }}\ny: {{ (getResource \"ChildConfig\").data | toJson }}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, values string) {
		findings := Lint(values)
		lines := strings.Count(values, "\n") + 1
		for _, fd := range findings {
			if fd.Line < 1 || fd.Line > lines {
				t.Fatalf("finding %v outside the text's %d lines", fd, lines)
			}
		}
		results := map[Mode]Result{}
		for _, mode := range modes() {
			res, err := Instantiate(input(t, values, mode))
			again, errAgain := Instantiate(input(t, values, mode))
			if errString(err) != errString(errAgain) || !cmp.Equal(res.Values, again.Values) {
				t.Fatalf("%s: two runs differ: %v / %v", mode, err, errAgain)
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Profile == "" || e.Service == "" || e.Cluster == "" {
					t.Fatalf("%s: error %T %v does not name the MCS, service and cluster", mode, err, err)
				}
				continue
			}
			results[mode] = res
		}
		single, okSingle := results[SinglePass]
		double, okDouble := results[DoublePass]
		if len(findings) == 0 && okSingle && okDouble && !cmp.Equal(single.Values, double.Values) {
			t.Fatalf("lint-clean text renders differently:\n%s", cmp.Diff(single.Values, double.Values))
		}
	})
}

// errString is err's text, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
