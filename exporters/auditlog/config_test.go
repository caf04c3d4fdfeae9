package auditlog

import (
	"strings"
	"testing"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
)

// FromEnv reads the shared bucket and plan settings and the exporter's own, and names every bad variable at once.
func TestFromEnv(t *testing.T) {
	key := func(string) ([]byte, error) { return []byte(strings.Repeat("k", 32)), nil }
	env := map[string]string{
		EnvLogsURL: "http://vlselect:9471", EnvS3Bucket: "audit", EnvS3UsePathStyle: "true", EnvWindowDelay: "5m",
		EnvSigningAlg: evidence.AlgHMACSHA256, EnvSigningKeyFile: "/key", EnvComplianceMode: "true",
	}
	c, err := FromEnv(func(k string) string { return env[k] }, key)
	if err != nil {
		t.Fatal(err)
	}
	if c.S3 != (bucket.Config{Bucket: "audit", UsePathStyle: true}) || c.TenantField != DefaultTenantField ||
		c.Plan != (window.Plan{Delay: 5 * time.Minute, CatchUp: DefaultCatchUpHours}) || !c.ComplianceMode ||
		c.Signer == nil {
		t.Errorf("FromEnv = %+v", c)
	}
	env = map[string]string{EnvLogsURL: "vlselect", EnvS3InsecureSkip: "sure", EnvCatchUpHours: "0",
		EnvComplianceMode: "strict", EnvSigningKeyFile: "/key"}
	_, err = FromEnv(func(k string) string { return env[k] }, key)
	for _, want := range []string{`AUDIT_LOGS_URL "vlselect"`, `S3_INSECURE_SKIP_VERIFY "sure"`,
		`CATCH_UP_HOURS "0"`, `COMPLIANCE_MODE "strict"`, "s3.bucket: required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
}
