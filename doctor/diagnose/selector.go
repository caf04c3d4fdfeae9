package diagnose

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Term is one requirement of a label selector checked against a cluster's labels.
type Term struct {
	// Requirement is the term in label-selector syntax, e.g. `k0rdent.mirantis.com/kof-cluster-role in (child)`.
	Requirement string `json:"requirement"`
	// Key is the label the term reads.
	Key string `json:"key"`
	// Matches reports whether the cluster's labels satisfy the term.
	Matches bool `json:"matches"`
	// Why says, for a failing term, what the cluster has instead: `label <key> is "<value>"` or `label <key> is
	// not set`.
	Why string `json:"why,omitempty"`
}

// ExplainSelector checks every term of sel against lbls. A MultiClusterService's spec.clusterSelector is a
// metav1.LabelSelector whose terms are ANDed: each matchLabels entry is an `=` term and each matchExpressions entry
// an In, NotIn, Exists or DoesNotExist term (k8s.io/apimachinery labels.Requirement, whose Matches decides each
// one); the selector matches when every term does, and an empty selector matches every cluster. It returns whether
// the selector matches and every term in key order, failing ones explained. The error is the selector's own (an
// unknown operator, an invalid key or value), naming spec.clusterSelector.
func ExplainSelector(sel metav1.LabelSelector, lbls map[string]string) (bool, []Term, error) {
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return false, nil, fmt.Errorf("spec.clusterSelector: %w", err)
	}
	reqs, _ := s.Requirements()
	set := labels.Set(lbls)
	terms := make([]Term, 0, len(reqs))
	all := true
	for _, r := range reqs {
		t := Term{Requirement: r.String(), Key: r.Key(), Matches: r.Matches(set)}
		if !t.Matches {
			all = false
			t.Why = why(r, lbls)
		}
		terms = append(terms, t)
	}
	sort.SliceStable(terms, func(i, j int) bool { return terms[i].Key < terms[j].Key })
	return all, terms, nil
}

// why describes what the labels hold for the failing requirement r.
func why(r labels.Requirement, lbls map[string]string) string {
	v, ok := lbls[r.Key()]
	switch {
	case !ok:
		return fmt.Sprintf("label %s is not set", r.Key())
	case r.Operator() == selection.DoesNotExist:
		return fmt.Sprintf("label %s is set (to %q)", r.Key(), v)
	default:
		return fmt.Sprintf("label %s is %q", r.Key(), v)
	}
}

// Failing returns the failing terms of terms.
func Failing(terms []Term) []Term {
	var out []Term
	for _, t := range terms {
		if !t.Matches {
			out = append(out, t)
		}
	}
	return out
}
