package vmauth

import (
	"strings"
	"testing"

	vmv1beta1 "github.com/VictoriaMetrics/operator/api/operator/v1beta1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/outputs"
)

// TestTranslateChildVMUser: the child VMUser KOF's operator writes becomes eight url_map routes whose url_prefix
// carries the tenant filter, dropping the first path part, with the bundle's username and password.
func TestTranslateChildVMUser(t *testing.T) {
	u := outputs.VMUser("kcm-system", "child-1-88d4e15081", "PLATFORM", config.StorageURLs{
		VMInsert: "http://vminsert-cluster:8480/", VMSelect: "http://vmselect-cluster:8481/",
		VLInsert: "http://vlinsert-logs:9481/", VLSelect: "http://vlselect-logs:9471/",
		VLAuditInsert: "http://vlinsert-audit-logs:9481/", VLAuditSelect: "http://vlselect-audit-logs:9471/",
		VTInsert: "http://vtinsert-traces:10481/", VTSelect: "http://vtselect-traces:10471/",
	})
	up, err := Upstream(u)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Translate([]User{{VMUser: up, Password: "secret-password-123"}})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Users[0]
	if got.Username != "child-1-88d4e15081" || got.Password != "secret-password-123" || len(got.URLMap) != 8 {
		t.Fatalf("user %+v", got)
	}
	want := URLMap{SrcPaths: []string{"/vm/insert/.*"}, URLPrefix: []string{"http://vminsert-cluster:8480/?extra_label=tenant%3DPLATFORM"},
		DropParts: ptr.To(1)}
	if diff := cmp.Diff(want, got.URLMap[0]); diff != "" {
		t.Errorf("metrics insert route (-want +got):\n%s", diff)
	}
	if p := got.URLMap[3].URLPrefix[0]; p != "http://vlselect-logs:9471/?extra_filters=%22tenant%22%3A%3D%22PLATFORM%22" {
		t.Errorf("logs select route url_prefix %q", p)
	}
}

func TestTranslateDefaultRouteAndSuffix(t *testing.T) {
	u := &vmv1beta1.VMUser{}
	u.Name = "admin"
	u.Spec.TargetRefs = []vmv1beta1.TargetRef{{Static: &vmv1beta1.StaticRef{URL: "http://vmselect:8481/base"},
		TargetPathSuffix: "/select/0?x=1", Paths: []string{"/"}}}
	cfg, err := Translate([]User{{VMUser: u}})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Users[0]
	if got.Username != "admin" || len(got.URLMap) != 0 || !cmp.Equal(got.URLPrefix, []string{"http://vmselect:8481/base/select/0?x=1"}) {
		t.Errorf("default route: %+v", got)
	}
}

func TestTranslateReportsEveryBadUser(t *testing.T) {
	bad := func(name string, refs ...vmv1beta1.TargetRef) User {
		u := &vmv1beta1.VMUser{}
		u.Name, u.Namespace, u.Spec.TargetRefs = name, "ns", refs
		return User{VMUser: u}
	}
	_, err := Translate([]User{
		bad("no-routes"),
		bad("crd", vmv1beta1.TargetRef{CRD: &vmv1beta1.CRDRef{Kind: "VMCluster/vminsert", NamespacedName: vmv1beta1.NamespacedName{Name: "x"}}}),
		bad("empty-static", vmv1beta1.TargetRef{Static: &vmv1beta1.StaticRef{}}, vmv1beta1.TargetRef{Static: &vmv1beta1.StaticRef{}}),
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"ns/no-routes: spec.targetRefs is empty", "ns/crd: spec.targetRefs[0]: crd reference",
		"ns/empty-static: spec.targetRefs[0]: static.url and static.urls are empty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
