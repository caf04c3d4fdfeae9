package bundle

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/operator/config"
)

func TestPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		p, err := Password()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) < 16 || strings.Trim(p, passwordChars) != "" {
			t.Fatalf("password %q: want >= 16 alphanumerics", p)
		}
		seen[p] = true
	}
	if len(seen) != 100 {
		t.Errorf("%d distinct passwords of 100", len(seen))
	}
}

func TestTargetRefs(t *testing.T) {
	u := config.StorageURLs{VMInsert: "http://i", VMSelect: "http://s", VLInsert: "http://li", VLSelect: "http://ls",
		VLAuditInsert: "http://ai", VLAuditSelect: "http://as", VTInsert: "http://ti", VTSelect: "http://ts"}
	refs := TargetRefs(u, "PLATFORM")
	got := map[string][2]string{}
	for _, r := range refs {
		got[r.Paths[0]] = [2]string{r.Static.URL, r.QueryArgs[0].Name + "=" + r.QueryArgs[0].Values[0]}
	}
	want := map[string][2]string{
		"/vm/insert/.*": {"http://i", "extra_label=tenant=PLATFORM"},
		"/vm/select/.*": {"http://s", `extra_filters={tenant="PLATFORM"}`},
		"/vli/.*":       {"http://li", "extra_fields=tenant=PLATFORM"},
		"/vls/.*":       {"http://ls", `extra_filters="tenant":="PLATFORM"`},
		"/vlai/.*":      {"http://ai", "extra_fields=tenant=PLATFORM"},
		"/vlas/.*":      {"http://as", `extra_filters="tenant":="PLATFORM"`},
		"/vti/.*":       {"http://ti", "extra_fields=resource_attr:tenant=PLATFORM"},
		"/vts/.*":       {"http://ts", `extra_filters="resource_attr:tenant":="PLATFORM"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	for _, r := range TargetRefs(u, "") {
		if len(r.QueryArgs) != 0 {
			t.Errorf("admin route %s has query args %v", r.Paths[0], r.QueryArgs)
		}
	}
}

func TestPropagationKeepsPasswordOut(t *testing.T) {
	c := config.Config{ReleaseNamespace: "kof", PropagationTemplate: "kof-propagation-2-0-0"}
	m, err := propagation(Spec{Base: "c1-0123456789", Namespace: "kcm-system", Tenant: "t", Regional: "r1"}, c)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Spec.ServiceSpec.Services[0].Values
	if !strings.Contains(v, `{{ getField "KOFVMUserSecret" "data" | toJson }}`) || strings.Contains(v, "\n") {
		t.Errorf("values = %s: want one line reading the Secret data through getField", v)
	}
	if got := m.Spec.ClusterSelector.MatchLabels["k0rdent.mirantis.com/kof-cluster-name"]; got != "r1" {
		t.Errorf("selector = %q, want r1", got)
	}
	if ref := m.Spec.ServiceSpec.TemplateResourceRefs[0].Resource; ref.Name != "kof-vmuser-creds-c1-0123456789" || ref.Namespace != "kcm-system" {
		t.Errorf("templateResourceRef = %+v", ref)
	}
}
