package discovery

import (
	"strings"
	"testing"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// FuzzClusterData feeds arbitrary spec.config JSON and annotation values through FromClusterDeployment and
// RegionalData: they must never panic, and when RegionalData succeeds every endpoint it publishes is a valid URL.
func FuzzClusterData(f *testing.F) {
	f.Add(`{"region":"us-east-2"}`, "r.example.com", `{"dial_timeout":"5s"}`, "https://x.example.com/vls", "member")
	f.Add(`{"clusterAnnotations":{"k0rdent.mirantis.com/kof-regional-domain":"a.b"}}`, "", "", "", "")
	f.Add(`null`, "bad/domain", "{", "not a url", "")
	f.Add(`[1,2]`, " ", `{"basic_auth":{"credentials_secret_name":"s"}}`, "http://", "member")
	f.Fuzz(func(t *testing.T, config, domain, httpConfig, readLogs, istio string) {
		cd := cd("r", role("regional"), map[string]string{
			kofv1.RegionalDomainAnnotation:   domain,
			kofv1.HTTPConfigAnnotation:       httpConfig,
			kofv1.ReadLogsEndpointAnnotation: readLogs,
		}, config)
		cd.Labels[kofv1.IstioRoleLabel] = istio
		c, err := FromClusterDeployment(cd, tpl("infrastructure-aws"))
		if err != nil {
			if !strings.Contains(err.Error(), "spec.config") {
				t.Fatalf("config error %q does not name spec.config", err)
			}
			return
		}
		data, ignored, err := RegionalData(c)
		for _, e := range ignored {
			if !strings.Contains(e.Error(), "annotation") {
				t.Fatalf("ignored setting %q does not name an annotation", e)
			}
		}
		if err != nil {
			if !strings.Contains(err.Error(), "annotation") {
				t.Fatalf("error %q does not name an annotation", err)
			}
			return
		}
		if len(data) != 17 {
			t.Fatalf("%d keys, want 17", len(data))
		}
		for _, k := range []string{KeyReadMetrics, KeyReadLogs, KeyReadAuditLogs, KeyReadTraces} {
			if u := data[k]; !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				t.Fatalf("%s = %q is not an http(s) URL", k, u)
			}
		}
	})
}
