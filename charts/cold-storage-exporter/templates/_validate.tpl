{{/*
cold-storage-exporter.validate: cross-field checks; each failure names the keys and the fix. Input: the root
context. Output: nothing (fails the render).
*/}}
{{- define "cold-storage-exporter.validate" -}}
{{- $s3 := .Values.s3 -}}
{{- if not $s3.bucket -}}
{{- fail "cold-storage-exporter: s3.bucket is required; set the bucket the Parquet files go to" -}}
{{- end -}}
{{- if ne (empty $s3.testCredentials.accessKey) (empty $s3.testCredentials.secretKey) -}}
{{- fail "cold-storage-exporter: s3.testCredentials.accessKey and s3.testCredentials.secretKey must be set together" -}}
{{- end -}}
{{- if and $s3.existingSecret $s3.testCredentials.accessKey -}}
{{- fail "cold-storage-exporter: s3.existingSecret and s3.testCredentials are both set; keep s3.existingSecret and remove s3.testCredentials" -}}
{{- end -}}
{{- range $s := splitList "," .Values.sources -}}
{{- if not (has (trim $s) (list "metrics" "logs" "traces")) -}}
{{- fail (printf "cold-storage-exporter: sources: unknown source %q; use a comma-separated list of metrics, logs, traces" $s) -}}
{{- end -}}
{{- end -}}
{{- end -}}
