package endpoints

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// ParseHTTPConfig parses the `k0rdent.mirantis.com/kof-http-config` annotation: JSON
// `{dial_timeout, tls_config:{insecure_skip_verify}, basic_auth:{credentials_secret_name, username_key, password_key}}`
// (docs/contract.md, "Annotations on a ClusterDeployment"). An empty or blank value yields the zero config. Unknown keys,
// trailing data, a dial_timeout that is not a positive Go duration and a basic_auth with a Secret name but no keys are
// errors naming the annotation and the offending field.
func ParseHTTPConfig(raw string) (kofv1.HTTPClientConfig, error) {
	var cfg kofv1.HTTPClientConfig
	if strings.TrimSpace(raw) == "" {
		return cfg, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return kofv1.HTTPClientConfig{}, fmt.Errorf("annotation %s: invalid JSON: %w; want "+
			`{"dial_timeout":"5s","tls_config":{"insecure_skip_verify":false},"basic_auth":{...}}`,
			kofv1.HTTPConfigAnnotation, err)
	}
	if dec.More() {
		return kofv1.HTTPClientConfig{}, fmt.Errorf("annotation %s: trailing data after the JSON object",
			kofv1.HTTPConfigAnnotation)
	}
	if err := CheckHTTPConfig(cfg); err != nil {
		return kofv1.HTTPClientConfig{}, fmt.Errorf("annotation %s: %w", kofv1.HTTPConfigAnnotation, err)
	}
	return cfg, nil
}

// CheckHTTPConfig returns an error naming the field when dial_timeout is set but not a positive Go duration, or when
// basic_auth names a Secret without both keys.
func CheckHTTPConfig(cfg kofv1.HTTPClientConfig) error {
	if cfg.DialTimeout != "" {
		d, err := time.ParseDuration(cfg.DialTimeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("dial_timeout %q: want a positive duration such as 5s", cfg.DialTimeout)
		}
	}
	ba := cfg.BasicAuth
	if ba.CredentialsSecretName != "" && (ba.UsernameKey == "" || ba.PasswordKey == "") {
		return fmt.Errorf("basic_auth: username_key and password_key are required with credentials_secret_name")
	}
	return nil
}

// FormatHTTPConfig returns the canonical JSON of cfg as stored in the regional ConfigMap key `kof_http_config`
// ("" for the zero config, so that clusters without the annotation keep an empty key).
func FormatHTTPConfig(cfg kofv1.HTTPClientConfig) (string, error) {
	if cfg == (kofv1.HTTPClientConfig{}) {
		return "", nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cfg); err != nil {
		return "", fmt.Errorf("encode http config: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
