package evidence

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"kof.dev/kof/exporters/window"
)

func TestCanonicalManifest(t *testing.T) {
	prev := time.Date(2026, 6, 29, 15, 0, 0, 0, time.FixedZone("x", 3600))
	m := Manifest{Format: Format, Stream: StreamTenant, Tenant: "acme", WindowStart: time.Date(2026, 6, 29, 16, 0, 0, 0, time.UTC),
		WindowEnd: time.Date(2026, 6, 29, 17, 0, 0, 0, time.UTC), EventCount: 3, PreviousWindow: &prev,
		Data: DataFile{Name: DataName, Size: 10, SHA256: "ab"}, Algorithm: AlgEd25519, KeyID: "k"}
	raw, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"name":"data.jsonl.gz","sha256":"ab","size":10},"event_count":3,"format":"kof-audit-manifest/v2","key_id":"k",` +
		`"previous_manifest_sha256":"","previous_window":"2026-06-29T14:00:00Z","producer":"","signing_algorithm":"ed25519",` +
		`"stream":"tenant-audit-log","tenant":"acme","version":"","window_end":"2026-06-29T17:00:00Z","window_start":"2026-06-29T16:00:00Z"}` + "\n"
	if string(raw) != want {
		t.Errorf("canonical manifest:\n got %s\nwant %s", raw, want)
	}
	back, err := ParseManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Canonical()
	if string(again) != string(raw) {
		t.Error("parse and re-encode changed the bytes")
	}
	if strings.Contains(string(raw), "PRIVATE") {
		t.Error("key material in the manifest")
	}
	if !back.Continuous() {
		t.Error("a manifest of Format does not promise a continuous chain")
	}
	// Manifests of exporters that wrote only hours with events still parse, without the promise.
	old, err := ParseManifest([]byte(strings.Replace(string(raw), Format, FormatV1, 1)))
	if err != nil || old.Continuous() {
		t.Errorf("v1 manifest: continuous %v, %v; want parsed, not continuous", old.Continuous(), err)
	}
	if _, err := ParseManifest([]byte(strings.Replace(string(raw), Format, "kof-audit-manifest/v9", 1))); err == nil || !strings.Contains(err.Error(), "v9") {
		t.Errorf("unknown format: %v; want an error naming it", err)
	}
}

func TestSignVerify(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	s, err := NewEd25519Signer(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	keys := &Keys{}
	id, err := keys.AddPublicKey(s.PublicKeyPEM())
	if err != nil || id != s.KeyID() || len(id) != 16 {
		t.Fatalf("key id %q (signer %q), %v", id, s.KeyID(), err)
	}
	data := []byte("manifest")
	sig := s.Sign(data)
	if err := keys.Verify(AlgEd25519, id, data, sig); err != nil {
		t.Errorf("valid signature: %v", err)
	}
	if err := keys.Verify(AlgEd25519, id, []byte("manifest!"), sig); !errors.Is(err, ErrBadSignature) {
		t.Errorf("changed data: %v, want bad signature", err)
	}
	if err := keys.Verify(AlgEd25519, "0000000000000000", data, sig); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("other key id: %v, want unknown key", err)
	}
	h, err := NewHMACSigner([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.AddHMACKey([]byte(strings.Repeat("s", 32))); err != nil {
		t.Fatal(err)
	}
	if err := keys.Verify(AlgHMACSHA256, h.KeyID(), data, h.Sign(data)); err != nil {
		t.Errorf("hmac: %v", err)
	}
	if _, err := NewHMACSigner([]byte("short")); err == nil {
		t.Error("short HMAC key accepted")
	}
	if _, err := NewEd25519Signer([]byte("not pem")); err == nil || strings.Contains(err.Error(), "not pem") {
		t.Errorf("bad key file: %v (must not echo the file)", err)
	}
}

func TestKeyLayout(t *testing.T) {
	h := window.Of(time.Date(2026, 6, 29, 17, 5, 0, 0, time.UTC))
	key := Folder(StreamTenant, "a/b c", h) + ManifestName
	if key != "audit/tenant-audit-log/a%2Fb%20c/2026/06/29/17/manifest.json" {
		t.Errorf("key = %s", key)
	}
	stream, tenant, got, name, ok := ParseKey(key)
	if !ok || stream != StreamTenant || tenant != "a/b c" || !got.Start.Equal(h.Start) || name != ManifestName {
		t.Errorf("ParseKey = %s %s %s %s %v", stream, tenant, got, name, ok)
	}
	for _, bad := range []string{"audit/keys/x.pub", "audit/s/t/2026/13/01/00/m", "other/s/t/2026/06/29/17/m"} {
		if _, _, _, _, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}
