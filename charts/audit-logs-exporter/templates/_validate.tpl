{{/*
audit-logs-exporter.validate: cross-field checks; each failure names the keys and the fix. Input: the root
context. Output: nothing (fails the render).
*/}}
{{- define "audit-logs-exporter.validate" -}}
{{- $s3 := .Values.s3 -}}
{{- if not $s3.bucket -}}
{{- fail "audit-logs-exporter: s3.bucket is required; set the bucket the audit trail goes to" -}}
{{- end -}}
{{- if ne (empty $s3.testCredentials.accessKey) (empty $s3.testCredentials.secretKey) -}}
{{- fail "audit-logs-exporter: s3.testCredentials.accessKey and s3.testCredentials.secretKey must be set together" -}}
{{- end -}}
{{- if and $s3.existingSecret $s3.testCredentials.accessKey -}}
{{- fail "audit-logs-exporter: s3.existingSecret and s3.testCredentials are both set; keep s3.existingSecret and remove s3.testCredentials" -}}
{{- end -}}
{{- if not .Values.signing.existingSecret -}}
{{- fail "audit-logs-exporter: signing.existingSecret is required; create a Secret with the signing key (docs/audit-logs.md) and name it here" -}}
{{- end -}}
{{- if not (has .Values.signing.algorithm (list "ed25519" "hmac-sha256")) -}}
{{- fail (printf "audit-logs-exporter: signing.algorithm %q: use ed25519 or hmac-sha256" .Values.signing.algorithm) -}}
{{- end -}}
{{- if and .Values.signing.publicKey (ne .Values.signing.algorithm "ed25519") -}}
{{- fail "audit-logs-exporter: signing.publicKey is set but signing.algorithm is not ed25519; remove signing.publicKey" -}}
{{- end -}}
{{- end -}}
