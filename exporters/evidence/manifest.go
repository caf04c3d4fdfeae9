// Package evidence is the tamper evidence of the audit-logs exporter: the per-window manifest (canonical JSON), its
// signature (Ed25519 by default, HMAC-SHA256 as an option), the hash chain from each window's manifest to the
// previous window's of the same stream and tenant, the object layout in the bucket, and the verification
// `kof audit verify` runs. Verification needs no secret: Ed25519 public keys are published in the bucket under
// KeysPrefix and may be pinned by the reader.
//
// Source: docs/audit-logs.md ("Evidence").
package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/window"
)

// Object layout: `audit/<stream>/<tenant>/YYYY/MM/DD/HH/{data.jsonl.gz,manifest.json,manifest.json.sig}` and the
// public keys at `audit/keys/<key id>.pub`.
const (
	// Root is the first folder of every audit object.
	Root = "audit"
	// KeysPrefix holds the published public keys, one PEM file per key id.
	KeysPrefix = Root + "/keys/"
	// DataName, ManifestName and SignatureName are the objects of a window folder.
	DataName      = "data.jsonl.gz"
	ManifestName  = "manifest.json"
	SignatureName = "manifest.json.sig"
	// Format names the manifest version the exporter writes: v2 promises a continuous chain (every hour after a
	// series' first window has a window, empty or not, and names the hour before it as its previous window), so a
	// gap in a series, or a series ending before the last closed hour, is a deleted window.
	Format = "kof-audit-manifest/v2"
	// FormatV1 is the format of exporters that wrote only hours with events (gaps are normal before a v2 window).
	FormatV1 = "kof-audit-manifest/v1"
)

// Streams and the platform tenant (docs/contract.md: default tenant value PLATFORM).
const (
	StreamPlatform = "platform-audit-log"
	StreamTenant   = "tenant-audit-log"
	TenantPlatform = "PLATFORM"
)

// Manifest describes one exported window of one stream and tenant. It holds hashes and names, never key material.
type Manifest struct {
	// Format is the manifest version (Format).
	Format string `json:"format"`
	// Stream and Tenant of the window's folder.
	Stream string `json:"stream"`
	Tenant string `json:"tenant"`
	// WindowStart and WindowEnd bound the window [start, end).
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// EventCount is the number of lines of the data object.
	EventCount int64 `json:"event_count"`
	// Data describes the data object.
	Data DataFile `json:"data"`
	// PreviousWindow is the start of the previous exported window of this stream and tenant (nil for the first);
	// PreviousManifestSHA256 the hex sha256 of that window's manifest.json bytes.
	PreviousWindow         *time.Time `json:"previous_window,omitempty"`
	PreviousManifestSHA256 string     `json:"previous_manifest_sha256"`
	// Producer and Version of the exporter that wrote the window.
	Producer string `json:"producer"`
	Version  string `json:"version"`
	// Algorithm (AlgEd25519 or AlgHMACSHA256) and KeyID of the signature in manifest.json.sig.
	Algorithm string `json:"signing_algorithm"`
	KeyID     string `json:"key_id"`
}

// DataFile is the data object of a window.
type DataFile struct {
	// Name is the object name in the window folder; Size its bytes; SHA256 its hex sha256.
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Canonical returns m as canonical JSON: keys sorted, no insignificant white space, times in RFC 3339 UTC, one
// trailing newline. Signatures and the chain are computed over exactly these bytes.
func (m Manifest) Canonical() ([]byte, error) {
	m.WindowStart, m.WindowEnd = m.WindowStart.UTC(), m.WindowEnd.UTC()
	if m.PreviousWindow != nil {
		p := m.PreviousWindow.UTC()
		m.PreviousWindow = &p
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return Canonicalize(raw)
}

// Canonicalize re-encodes a JSON document with sorted object keys and no insignificant white space (numbers keep
// their text), followed by a newline.
func Canonicalize(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // encoding/json sorts map keys
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// ParseManifest decodes manifest bytes; errors name the problem.
func ParseManifest(data []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("decode manifest: %w", err)
	}
	if m.Format != Format && m.Format != FormatV1 {
		return Manifest{}, fmt.Errorf("manifest format %q, want %q (or %q)", m.Format, Format, FormatV1)
	}
	return m, nil
}

// Continuous reports whether m's format promises a continuous chain (Format).
func (m Manifest) Continuous() bool { return m.Format == Format }

// Folder returns the window folder `audit/<stream>/<tenant>/YYYY/MM/DD/HH/`. The tenant is escaped so it can never
// add a folder level (bytes other than letters, digits and `-_.` become `%XX`).
func Folder(stream, tenant string, h window.Hour) string {
	return Root + "/" + stream + "/" + bucket.EscapeSegment(tenant) + "/" + h.Start.Format("2006/01/02/15") + "/"
}

// SeriesPrefix returns the folder of all windows of one stream and tenant.
func SeriesPrefix(stream, tenant string) string {
	return Root + "/" + stream + "/" + bucket.EscapeSegment(tenant) + "/"
}

// ParseKey splits an object key of the layout into stream, tenant, window and object name; ok is false for keys
// outside it (the key folder, foreign objects).
func ParseKey(key string) (stream, tenant string, h window.Hour, name string, ok bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 8 || parts[0] != Root {
		return "", "", window.Hour{}, "", false
	}
	t, err := time.Parse("2006/01/02/15", strings.Join(parts[3:7], "/"))
	if err != nil {
		return "", "", window.Hour{}, "", false
	}
	tn, err := bucket.UnescapeSegment(parts[2])
	if err != nil {
		return "", "", window.Hour{}, "", false
	}
	return parts[1], tn, window.Of(t), parts[7], true
}
