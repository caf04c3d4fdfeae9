package exporters

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"kof.dev/kof/chartlib/render"
)

// signingMount checks that the signing key reaches the container only as a read-only file from the named Secret
// (never an env value) and that SIGNING_KEY_FILE points at it.
func signingMount(t *testing.T, res *render.Result, secret, key string) corev1.Container {
	t.Helper()
	cj := cronJob(t, res, "audit-logs-exporter")
	c := checkCronJob(t, cj, "")
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "signing-key" {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil || vol.Secret == nil || vol.Secret.SecretName != secret || len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != key {
		t.Fatalf("signing key volume = %+v, want Secret %s key %s", vol, secret, key)
	}
	if len(c.VolumeMounts) != 1 || !c.VolumeMounts[0].ReadOnly || c.VolumeMounts[0].MountPath != "/etc/kof-audit/signing" {
		t.Errorf("signing key mount = %+v", c.VolumeMounts)
	}
	env := envOf(c)
	if env["SIGNING_KEY_FILE"].Value != "/etc/kof-audit/signing/signing.key" {
		t.Errorf("SIGNING_KEY_FILE = %q", env["SIGNING_KEY_FILE"].Value)
	}
	for _, e := range c.Env {
		if strings.Contains(e.Name, "SIGNING_KEY") && e.Name != "SIGNING_KEY_FILE" {
			t.Errorf("signing key material in env %s", e.Name)
		}
	}
	return c
}

func checkAuditMinIO(t *testing.T, res *render.Result) {
	c := signingMount(t, res, "audit-logs-exporter-signing-key", "signing.key")
	if c.Image != "ghcr.io/k0rdent/kof/audit-logs-exporter:2.0.0" {
		t.Errorf("image %s", c.Image)
	}
	env := envOf(c)
	for k, v := range map[string]string{"AUDIT_LOGS_URL": "http://vlselect-audit-logs:9471", "S3_BUCKET": "kof-audit", "S3_USE_PATH_STYLE": "true",
		"SIGNING_ALGORITHM": "ed25519", "COMPLIANCE_MODE": "false", "TENANT_FIELD": "tenant"} {
		if env[k].Value != v {
			t.Errorf("env %s = %q, want %q", k, env[k].Value, v)
		}
	}
	noInlineSecrets(t, c, "S3_ACCESS_KEY", "S3_SECRET_KEY")
	if ref := env["S3_SECRET_KEY"].ValueFrom.SecretKeyRef; ref.Name != "audit-logs-exporter-s3-credentials" {
		t.Errorf("S3 keys from %s, want the user guide's Secret audit-logs-exporter-s3-credentials", ref.Name)
	}
	notes := res.Files["audit-logs-exporter/templates/NOTES.txt"]
	for _, want := range []string{"audit/keys/<key id>.pub", "BEGIN PUBLIC KEY", "kof audit verify", "--from=cronjob/audit-logs-exporter"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
}

func checkAuditComplianceIRSA(t *testing.T, res *render.Result) {
	c := signingMount(t, res, "kof-audit-signing", "ed25519.pem")
	env := envOf(c)
	if env["COMPLIANCE_MODE"].Value != "true" || c.Image != "registry.example.com/k0rdent/kof/audit-logs-exporter:2.0.0" {
		t.Errorf("compliance %q, image %s", env["COMPLIANCE_MODE"].Value, c.Image)
	}
	if _, ok := env["S3_ACCESS_KEY"]; ok {
		t.Error("no Secret: S3_ACCESS_KEY must be absent (default AWS credential chain)")
	}
	if !strings.Contains(res.Files["audit-logs-exporter/templates/NOTES.txt"], "required (complianceMode: true)") {
		t.Error("NOTES do not say object lock is required")
	}
}

func checkAuditHMAC(t *testing.T, res *render.Result) {
	c := signingMount(t, res, "audit-hmac-key", "signing.key")
	if envOf(c)["SIGNING_ALGORITHM"].Value != "hmac-sha256" {
		t.Error("SIGNING_ALGORITHM not hmac-sha256")
	}
	if _, err := res.MustGet("Secret", namespace, "audit-logs-exporter-s3-credentials"); err != nil {
		t.Error(err)
	}
}
