package outputs

import (
	"testing"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
)

func TestChildTenantDefaultsToPlatform(t *testing.T) {
	if got := ChildTenant(nil); got != kofv1.DefaultTenant {
		t.Errorf("no label: %q, want %q", got, kofv1.DefaultTenant)
	}
	if got := ChildTenant(map[string]string{kofv1.TenantLabel: "team-a"}); got != "team-a" {
		t.Errorf("label team-a: %q", got)
	}
}

func TestVMUserNamesCredentialsAndRoutes(t *testing.T) {
	u := VMUser("kcm-system", "child-1-88d4e15081", "PLATFORM", config.StorageURLs{VMInsert: "http://vminsert-cluster:8480/"})
	if u.Name != "kof-vmuser-child-1-88d4e15081" || u.Namespace != "kcm-system" {
		t.Errorf("VMUser %s/%s", u.Namespace, u.Name)
	}
	if *u.Spec.Username != "child-1-88d4e15081" || u.Spec.PasswordRef.Name != "kof-vmuser-creds-child-1-88d4e15081" ||
		u.Spec.PasswordRef.Key != PasswordKey {
		t.Errorf("credentials: username %q, passwordRef %+v", *u.Spec.Username, u.Spec.PasswordRef)
	}
	if len(u.Spec.TargetRefs) != 8 || u.Spec.TargetRefs[0].QueryArgs[0].Values[0] != "tenant=PLATFORM" {
		t.Errorf("routes %+v", u.Spec.TargetRefs)
	}
}
