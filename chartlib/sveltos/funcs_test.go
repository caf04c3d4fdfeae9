package sveltos

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPinnedClock(t *testing.T) {
	values := `now: {{ now | date "2006-01-02T15:04:05Z07:00" }}
html: {{ htmlDate now }}
zone: {{ dateInZone "15:04" now "Asia/Tokyo" }}
epoch: {{ date "2006-01-02" 86400 }}
ago: {{ ago (now | dateModify "-90m") }}
todate: {{ toDate "2006-01-02 15:04" "2025-03-04 05:06" | date "2006-01-02T15:04:05Z07:00" }}
`
	in := input(t, values, DoublePass)
	in.Env.Now = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	want := map[string]any{
		"now": "2026-03-01T12:00:00Z", "html": "2026-03-01", "zone": "21:00", "epoch": "1970-01-02",
		"ago": "1h30m0s", "todate": "2025-03-04T05:06:00Z",
	}
	if diff := cmp.Diff(want, mustInstantiate(t, in).Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if got := (Environment{}).now(); !got.Equal(PinnedNow()) {
		t.Errorf("zero Environment clock %v, want %v", got, PinnedNow())
	}
}

func TestPinnedRandomness(t *testing.T) {
	values := `alpha: {{ randAlpha 8 }}
num: {{ randNumeric 6 | quote }}
ascii: {{ randAscii 5 | len }}
bytes: {{ randBytes 6 | b64dec | len }}
shuffled: {{ shuffle "abcdef" | len }}
uuid: {{ uuidv4 }}
`
	res := mustInstantiate(t, input(t, values, SinglePass)).Values
	alpha, _ := res["alpha"].(string)
	num, _ := res["num"].(string)
	if len(alpha) != 8 || strings.Trim(alpha, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		t.Errorf("randAlpha 8 = %q", alpha)
	}
	if len(num) != 6 || strings.Trim(num, "0123456789") != "" {
		t.Errorf("randNumeric 6 = %q", num)
	}
	if res["ascii"] != float64(5) || res["bytes"] != float64(6) || res["shuffled"] != float64(6) {
		t.Errorf("lengths %v %v %v", res["ascii"], res["bytes"], res["shuffled"])
	}
	if uuid, _ := res["uuid"].(string); len(uuid) != 36 || uuid[14] != '4' {
		t.Errorf("uuidv4 = %q, want a version-4 UUID", uuid)
	}
	if again := mustInstantiate(t, input(t, values, SinglePass)).Values; !cmp.Equal(res, again) {
		t.Errorf("same seed, different values: %v / %v", res, again)
	}
}

func TestPinnedCertificates(t *testing.T) {
	values := `{{- $ca := genCA "kof-ca" 365 }}
{{- $cert := genSignedCert "vmauth" (list "10.0.0.1") (list "vmauth.example.com") 30 $ca }}
ca: {{ $ca.Cert | b64enc }}
cert: {{ $cert.Cert | b64enc }}
key: {{ $cert.Key | b64enc }}
self: {{ (genSelfSignedCert "self" nil (list "self.example.com") 1).Cert | b64enc }}
pk: {{ genPrivateKey "rsa" | b64enc }}
bad: {{ genPrivateKey "nope" | quote }}
`
	in := input(t, values, DoublePass)
	res := mustInstantiate(t, in).Values
	if again := mustInstantiate(t, in).Values; !cmp.Equal(res, again) {
		t.Error("certificates differ between two runs with the same seed")
	}
	ca, cert := parseCert(t, res["ca"]), parseCert(t, res["cert"])
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "vmauth.example.com",
		CurrentTime: PinnedNow().Add(time.Hour)}); err != nil {
		t.Errorf("signed certificate does not verify against the CA: %v", err)
	}
	if !ca.IsCA || !cert.NotBefore.Equal(PinnedNow()) || !cert.NotAfter.Equal(PinnedNow().Add(30*24*time.Hour)) {
		t.Errorf("ca.IsCA %v, cert valid %v to %v", ca.IsCA, cert.NotBefore, cert.NotAfter)
	}
	if self := parseCert(t, res["self"]); self.Subject.CommonName != "self" {
		t.Errorf("self-signed CN %q", self.Subject.CommonName)
	}
	if key := decodePEM(t, res["key"]); key.Type != "PRIVATE KEY" {
		t.Errorf("key PEM type %q", key.Type)
	}
	if _, err := x509.ParsePKCS8PrivateKey(decodePEM(t, res["pk"]).Bytes); err != nil {
		t.Errorf("genPrivateKey output: %v", err)
	}
	if res["bad"] != "Unknown type nope" {
		t.Errorf("genPrivateKey nope = %v", res["bad"])
	}
}

// decodePEM decodes a base64 value holding one PEM block.
func decodePEM(t *testing.T, v any) *pem.Block {
	t.Helper()
	s, _ := v.(string)
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("no PEM in %q", raw)
	}
	return block
}

// parseCert decodes a base64 value holding a PEM certificate.
func parseCert(t *testing.T, v any) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(decodePEM(t, v).Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
