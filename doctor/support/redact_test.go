package support

import (
	"strings"
	"testing"
)

// TestRedactText checks each shape a credential is written in, and that references to credentials (Secret names,
// key names, files) and ordinary text stay.
func TestRedactText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"yaml", "password: hunter2\n", "password: REDACTED\n"},
		{"yaml quoted", "apiKey: 'k-123'\n", "apiKey: 'REDACTED'\n"},
		{"json", `{"password":"p4ss","user":"admin"}`, `{"password":"REDACTED","user":"admin"}`},
		{"escaped json", `{\"secret_key\":\"wJalrX\"}`, `{\"secret_key\":\"REDACTED\"}`},
		{"logfmt", `level=info msg=login token=abc123 user=bob`, `level=info msg=login token=REDACTED user=bob`},
		{"env", `S3_SECRET_ACCESS_KEY=wJalrXUtnFEMI`, `S3_SECRET_ACCESS_KEY=REDACTED`},
		{"flag", `--client-secret=xyz`, `--client-secret=REDACTED`},
		{"dotted", `basic_auth.password: x1`, `basic_auth.password: REDACTED`},
		{"bearer", `Authorization: Bearer abcdefghij`, `Authorization: Bearer REDACTED`},
		{"basic", `header basic dXNlcjpwYXNz`, `header basic REDACTED`},
		{"jwt", `t eyJhbGciOiJI.eyJzdWIiOiIx.sig_-x end`, `t REDACTED end`},
		{"aws key id", `id AKIAABCDEFGHIJKLMNOP.`, `id REDACTED.`},
		{"url", `https://admin:s3cr3t@minio:9000/b`, `https://REDACTED@minio:9000/b`},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
			"-----BEGIN RSA PRIVATE KEY-----REDACTED-----END RSA PRIVATE KEY-----"},
		{"secret name stays", `secretName: promxy`, `secretName: promxy`},
		{"key reference stays", `{"credentials_secret_name":"c","username_key":"u","password_key":"p"}`,
			`{"credentials_secret_name":"c","username_key":"u","password_key":"p"}`},
		{"token file stays", `bearer_token_file: /var/run/token`, `bearer_token_file: /var/run/token`},
		{"block opener stays", "secretRef:\n  name: x\n", "secretRef:\n  name: x\n"},
		{"map value stays", `secret: {name: x}`, `secret: {name: x}`},
		{"plain text", `reconciled ClusterDeployment kcm-system/child-1`, `reconciled ClusterDeployment kcm-system/child-1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Redactor
			got := r.Text(tc.in)
			if got != tc.want {
				t.Fatalf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if changed := got != tc.in; changed != (r.Count > 0) {
				t.Fatalf("Count = %d after %q → %q", r.Count, tc.in, got)
			}
			again := Redactor{}
			if twice := again.Text(got); twice != got || again.Count != 0 {
				t.Fatalf("not idempotent: %q → %q (%d)", got, twice, again.Count)
			}
		})
	}
}

// TestRedactObject checks that a multi-line value under a credential key is replaced whole and that strings
// elsewhere go through Text.
func TestRedactObject(t *testing.T) {
	var r Redactor
	obj := map[string]any{"data": map[string]any{"password": "line1\nline2", "config.yaml": "user: a\ntoken: t0k\n"},
		"list": []any{"https://u:pw@h/x", 3}, "secretName": "s"}
	r.Object(obj)
	data := obj["data"].(map[string]any)
	if data["password"] != Redacted || strings.Contains(data["config.yaml"].(string), "t0k") ||
		obj["list"].([]any)[0] != "https://REDACTED@h/x" || obj["secretName"] != "s" || r.Count != 3 {
		t.Fatalf("redacted object %v (count %d)", obj, r.Count)
	}
}
