package outputs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/vmapi"
)

// ChildTenant takes a child ClusterDeployment's labels and returns its tenant: the label
// `k0rdent.mirantis.com/kof-tenant-id`, else kofv1.DefaultTenant (docs/contract.md, "Cluster roles and labels").
func ChildTenant(labels map[string]string) string {
	if t := labels[kofv1.TenantLabel]; t != "" {
		return t
	}
	return kofv1.DefaultTenant
}

// TenantLabel is the label (metrics) and field (logs, audit logs) the VMUser routes put each child's tenant in, and
// filter reads by; traces carry it as the resource attribute `tenant` (docs/contract.md, "VMUser routes").
const TenantLabel = "tenant"

// route is one VMUser route: the path regexp, where it goes, and the tenant filter (query arg name and value format).
type route struct {
	path, url, arg, format string
}

// routes lists the eight routes in the order of docs/contract.md, "VMUser routes".
func routes(u config.StorageURLs) []route {
	return []route{
		{"/vm/insert/.*", u.VMInsert, "extra_label", TenantLabel + "=%s"},
		{"/vm/select/.*", u.VMSelect, "extra_filters", "{" + TenantLabel + `="%s"}`},
		{"/vli/.*", u.VLInsert, "extra_fields", TenantLabel + "=%s"},
		{"/vls/.*", u.VLSelect, "extra_filters", `"` + TenantLabel + `":="%s"`},
		{"/vlai/.*", u.VLAuditInsert, "extra_fields", TenantLabel + "=%s"},
		{"/vlas/.*", u.VLAuditSelect, "extra_filters", `"` + TenantLabel + `":="%s"`},
		{"/vti/.*", u.VTInsert, "extra_fields", "resource_attr:" + TenantLabel + "=%s"},
		{"/vts/.*", u.VTSelect, "extra_filters", `"resource_attr:` + TenantLabel + `":="%s"`},
	}
}

// TargetRefs returns the eight VMUser routes to the storage URLs u, each dropping the first path part. A non-empty
// tenant adds its filter to every route as a query arg; "" (regional admin) adds none. Source: docs/contract.md,
// "VMUser routes".
func TargetRefs(u config.StorageURLs, tenant string) []vmapi.TargetRef {
	var out []vmapi.TargetRef
	for _, r := range routes(u) {
		t := vmapi.TargetRef{
			Static:       &vmapi.StaticRef{URL: r.url},
			Paths:        []string{r.path},
			URLMapCommon: vmapi.URLMapCommon{DropSrcPathPrefixParts: ptr.To(1)},
		}
		if tenant != "" {
			t.QueryArgs = []vmapi.QueryArg{{Name: r.arg, Values: []string{fmt.Sprintf(r.format, tenant)}}}
		}
		out = append(out, t)
	}
	return out
}

// VMUser takes a namespace, a VMUser bundle base (names.ChildVMUserBase or names.AdminVMUserBase), the tenant (""
// for an admin bundle) and the storage URLs, and returns the bundle's VMUser `kof-vmuser-<base>` labelled Labels():
// username = base, password from the bundle's credentials Secret (CredentialsSecret, key PasswordKey), routes
// TargetRefs.
func VMUser(namespace, base, tenant string, u config.StorageURLs) *vmapi.VMUser {
	return &vmapi.VMUser{
		TypeMeta:   metav1.TypeMeta{APIVersion: vmapi.V1beta1.String(), Kind: "VMUser"},
		ObjectMeta: metav1.ObjectMeta{Name: names.VMUser(base), Namespace: namespace, Labels: Labels()},
		Spec: vmapi.VMUserSpec{
			Username:    ptr.To(base),
			PasswordRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: names.VMUserSecret(base)}, Key: PasswordKey},
			TargetRefs:  TargetRefs(u, tenant),
		},
	}
}
