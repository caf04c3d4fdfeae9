package endpoints

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

func TestParseHTTPConfig(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    kofv1.HTTPClientConfig
		wantErr string
	}{
		{name: "empty", raw: "  "},
		{
			name: "full",
			raw:  `{"dial_timeout":"10s","tls_config":{"insecure_skip_verify":true},"basic_auth":{"credentials_secret_name":"creds","username_key":"u","password_key":"p"}}`,
			want: kofv1.HTTPClientConfig{
				DialTimeout: "10s",
				TLSConfig:   kofv1.TLSConfig{InsecureSkipVerify: true},
				BasicAuth:   kofv1.BasicAuth{CredentialsSecretName: "creds", UsernameKey: "u", PasswordKey: "p"},
			},
		},
		{name: "malformed", raw: `{"dial_timeout":`, wantErr: "kof-http-config: invalid JSON"},
		{name: "unknown key", raw: `{"dial_timout":"5s"}`, wantErr: `unknown field "dial_timout"`},
		{name: "bad duration", raw: `{"dial_timeout":"5 seconds"}`, wantErr: `dial_timeout "5 seconds"`},
		{name: "negative duration", raw: `{"dial_timeout":"-5s"}`, wantErr: "positive duration"},
		{name: "secret without keys", raw: `{"basic_auth":{"credentials_secret_name":"x"}}`, wantErr: "username_key and password_key"},
		{name: "trailing", raw: `{} {}`, wantErr: "trailing data"},
		{name: "not object", raw: `[1]`, wantErr: "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHTTPConfig(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatHTTPConfigRoundTrip(t *testing.T) {
	in := kofv1.HTTPClientConfig{DialTimeout: "5s", TLSConfig: kofv1.TLSConfig{InsecureSkipVerify: true}}
	s, err := FormatHTTPConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"dial_timeout":"5s","tls_config":{"insecure_skip_verify":true},"basic_auth":{}}`; s != want {
		t.Errorf("FormatHTTPConfig = %s, want %s", s, want)
	}
	if s0, _ := FormatHTTPConfig(kofv1.HTTPClientConfig{}); s0 != "" {
		t.Errorf("FormatHTTPConfig(zero) = %q, want empty", s0)
	}
}

// FuzzParseHTTPConfig checks that any annotation value either fails cleanly or yields a valid config that survives
// a format/parse round trip unchanged.
func FuzzParseHTTPConfig(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"dial_timeout":"5s"}`, `{"tls_config":{"insecure_skip_verify":true}}`,
		`{"basic_auth":{"credentials_secret_name":"a","username_key":"u","password_key":"p"}}`,
		`{"dial_timeout":1}`, `null`, `{"dial_timeout":"1h2m3.5s"}`, "\x00", `{"basic_auth":null}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := ParseHTTPConfig(raw)
		if err != nil {
			if !strings.Contains(err.Error(), kofv1.HTTPConfigAnnotation) {
				t.Fatalf("error %q does not name the annotation", err)
			}
			return
		}
		if err := CheckHTTPConfig(cfg); err != nil {
			t.Fatalf("accepted config fails CheckHTTPConfig: %v", err)
		}
		s, err := FormatHTTPConfig(cfg)
		if err != nil {
			t.Fatalf("FormatHTTPConfig: %v", err)
		}
		back, err := ParseHTTPConfig(s)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", s, err)
		}
		if back != cfg {
			t.Fatalf("round trip changed config: %+v != %+v", back, cfg)
		}
	})
}
