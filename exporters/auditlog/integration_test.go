package auditlog_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kof.dev/kof/exporters/auditlog"
	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/evidence"
	"kof.dev/kof/exporters/window"
	"kof.dev/kof/internal/testproc"
)

// TestAuditExportOnRealServers ships real kube-apiserver audit events into a real VictoriaLogs in the node
// collector's shape for PLATFORM and two tenants, exports them into a real MinIO and verifies every window; then
// tampers with copies of the trail, checks object lock handling, reruns and interrupts a run by killing MinIO.
func TestAuditExportOnRealServers(t *testing.T) {
	lines := testproc.AuditLog(t, filepath.Join(t.TempDir(), "audit.log"), "acme", "globex", "kof")
	vl, minio := testproc.VictoriaLogs(t), testproc.MinIO(t)
	want := ship(t, vl, lines)
	dir := t.TempDir()
	keyFile, pubPEM := testproc.SigningKey(t, dir, "ed25519.key")
	ctx := context.Background()

	export := func(t *testing.T, name string, lock bool, extra map[string]string) (*bucket.Bucket, auditlog.Result, string) {
		t.Helper()
		b := newBucket(t, minio, name, lock)
		var logs bytes.Buffer
		e, err := auditlog.New(config(t, vl.URL, minio, name, keyFile, extra), auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return b, e.RunWindows(ctx, hours), logs.String()
	}
	verify := func(t *testing.T, b *bucket.Bucket, keys *evidence.Keys) evidence.Report {
		t.Helper()
		rep, err := evidence.Verifier{Bucket: b, Keys: keys}.Verify(ctx, evidence.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	pinned := &evidence.Keys{}
	if _, err := pinned.AddPublicKey(pubPEM); err != nil {
		t.Fatal(err)
	}

	b, res, logs := export(t, "audit", false, nil)
	if len(res.Failed) > 0 || res.Exported != len(want) {
		t.Fatalf("export: exported %d, failed %v; want %d windows\n%s", res.Exported, res.Failed, len(want), logs)
	}
	for _, msg := range []string{`"msg":"uploading manifest signature"`, `"msg":"uploading manifest"`, `"msg":"window exported successfully"`,
		`"stream":"tenant-audit-log","tenant":"acme"`, `"events":`, `"size_bytes":`, "bucket has no object lock"} {
		if !strings.Contains(logs, msg) {
			t.Errorf("logs lack %s", msg)
		}
	}
	t.Run("verify passes and counts match", func(t *testing.T) {
		for _, keys := range []*evidence.Keys{nil, pinned} { // published keys, then the pinned public key
			rep := verify(t, b, keys)
			if rep.Failed() != 0 || len(rep.Checks) != len(want) {
				t.Fatalf("verify: %d windows, %d failed: %+v", len(rep.Checks), rep.Failed(), rep.Checks)
			}
			for _, c := range rep.Checks {
				if w := want[seriesKey{c.Stream, c.Tenant, c.Window.String()}]; int64(w) != c.Events {
					t.Errorf("%s/%s %s: %d events in the manifest, %d lines shipped", c.Stream, c.Tenant, c.Window, c.Events, w)
				}
			}
		}
		if n := len(want); n != 9 {
			t.Errorf("%d windows, want 9 (PLATFORM, acme, globex x 3 hours)", n)
		}
	})

	t.Run("rerun writes nothing", func(t *testing.T) {
		before := etags(t, b)
		e, err := auditlog.New(config(t, vl.URL, minio, "audit", keyFile, nil), auditlog.Options{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if res.Exported != 0 || res.Skipped != len(want) || len(res.Failed) > 0 {
			t.Fatalf("rerun: %+v", res)
		}
		if after := etags(t, b); !equal(before, after) {
			t.Errorf("rerun changed objects: %d before, %d after", len(before), len(after))
		}
	})

	middle := hours[1]
	platform := evidence.Folder(evidence.StreamPlatform, evidence.TenantPlatform, middle)
	t.Run("tampered data", func(t *testing.T) {
		b, _, _ := export(t, "tamper-data", false, nil)
		key := evidence.Folder(evidence.StreamTenant, "acme", middle) + evidence.DataName
		data, _, err := b.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x01
		if _, err := b.PutBytes(ctx, key, data, "application/x-ndjson", bucket.Condition{}); err != nil {
			t.Fatal(err)
		}
		expectOnly(t, verify(t, b, pinned), evidence.StreamTenant, "acme", middle, "tampered data")
	})
	t.Run("deleted middle window", func(t *testing.T) {
		b, _, _ := export(t, "tamper-gap", false, nil)
		for _, n := range []string{evidence.DataName, evidence.SignatureName, evidence.ManifestName} {
			if err := b.Delete(ctx, platform+n); err != nil {
				t.Fatal(err)
			}
		}
		expectOnly(t, verify(t, b, pinned), evidence.StreamPlatform, evidence.TenantPlatform, hours[2], "chain: missing window "+middle.String())
	})
	t.Run("manifest re-signed with another key", func(t *testing.T) {
		b, _, _ := export(t, "tamper-resign", false, nil)
		forger, forgedPub := testproc.SigningKey(t, dir, "forger.key")
		raw, _, err := b.Get(ctx, platform+evidence.ManifestName)
		if err != nil {
			t.Fatal(err)
		}
		m, err := evidence.ParseManifest(raw)
		if err != nil {
			t.Fatal(err)
		}
		cfg := config(t, vl.URL, minio, "tamper-resign", forger, nil)
		m.EventCount--
		m.KeyID = cfg.Signer.KeyID()
		forged, err := m.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.PutBytes(ctx, platform+evidence.ManifestName, forged, "application/json", bucket.Condition{}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.PutBytes(ctx, platform+evidence.SignatureName, cfg.Signer.Sign(forged), "text/plain", bucket.Condition{}); err != nil {
			t.Fatal(err)
		}
		got := failures(verify(t, b, pinned))
		if len(got) != 2 || !strings.Contains(got[evidence.StreamPlatform+" "+middle.String()], "unknown key "+m.KeyID) ||
			!strings.Contains(got[evidence.StreamPlatform+" "+hours[2].String()], "chain: previous manifest sha256") {
			t.Fatalf("re-signed manifest: failures %v; want unknown key at %s and the chain broken at %s", got, middle, hours[2])
		}
		// A forger who also publishes the key in the bucket still breaks the chain of the next window.
		if _, err := b.PutBytes(ctx, evidence.KeysPrefix+m.KeyID+".pub", forgedPub, "text/plain", bucket.Condition{}); err != nil {
			t.Fatal(err)
		}
		rep := verify(t, b, nil)
		if got := failures(rep); !strings.Contains(got[evidence.StreamPlatform+" "+hours[2].String()], "chain: previous manifest sha256") {
			t.Errorf("published forged key: failures %v; want the next window's chain to break", got)
		}
	})

	t.Run("object lock", func(t *testing.T) {
		b := newBucket(t, minio, "audit-locked", true)
		if err := b.SetDefaultRetention(ctx, "GOVERNANCE", 1); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		e, err := auditlog.New(config(t, vl.URL, minio, "audit-locked", keyFile, map[string]string{auditlog.EnvComplianceMode: "true"}),
			auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if len(res.Failed) > 0 || res.Exported != len(want) || !res.Lock.Enabled || res.Lock.Mode != "GOVERNANCE" {
			t.Fatalf("locked bucket: %+v", res)
		}
		if !strings.Contains(logs.String(), `"msg":"object lock","bucket":"audit-locked","enabled":true,"mode":"GOVERNANCE","retention":"24h0m0s"`) {
			t.Errorf("object lock not reported:\n%s", logs.String())
		}
		if rep := verify(t, b, pinned); rep.Failed() != 0 {
			t.Errorf("locked bucket verify: %+v", rep)
		}
	})
	t.Run("compliance mode without lock refuses before reading", func(t *testing.T) {
		newBucket(t, minio, "audit-unlocked", false)
		var logs bytes.Buffer
		// The source URL points at a closed port: any read would fail as "source unreachable".
		e, err := auditlog.New(config(t, "http://127.0.0.1:1", minio, "audit-unlocked", keyFile, map[string]string{auditlog.EnvComplianceMode: "true"}),
			auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, auditlog.ErrNoObjectLock) || strings.Contains(logs.String(), "source unreachable") {
			t.Fatalf("compliance mode: %+v\n%s", res.Failed, logs.String())
		}
		if objs, _ := newBucketHandle(t, minio, "audit-unlocked").List(ctx, ""); len(objs) != 0 {
			t.Errorf("refused run wrote %d objects", len(objs))
		}
	})

	t.Run("MinIO stopped mid-window", func(t *testing.T) {
		b := newBucket(t, minio, "audit-interrupted", false)
		var logs bytes.Buffer
		kh := &killingHandler{Handler: slog.NewJSONHandler(&logs, nil), n: 4, kill: minio.Kill}
		e, err := auditlog.New(config(t, vl.URL, minio, "audit-interrupted", keyFile, nil), auditlog.Options{Log: slog.New(kh), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if len(res.Failed) == 0 || !kh.killed {
			t.Fatalf("run with MinIO killed at the 4th manifest: %+v", res)
		}
		if err := minio.Restart(); err != nil {
			t.Fatal(err)
		}
		again, err := auditlog.New(config(t, vl.URL, minio, "audit-interrupted", keyFile, nil), auditlog.Options{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		res = again.RunWindows(ctx, hours)
		if len(res.Failed) > 0 || res.Exported+res.Skipped != len(want) {
			t.Fatalf("rerun after restart: %+v", res)
		}
		rep := verify(t, b, pinned)
		if rep.Failed() != 0 || len(rep.Checks) != len(want) {
			t.Fatalf("after restart: %d windows, failures %v", len(rep.Checks), failures(rep))
		}
	})
}

// killingHandler kills MinIO when the exporter logs the n-th "uploading manifest" (data and signature written,
// manifest not yet).
type killingHandler struct {
	slog.Handler
	mu     sync.Mutex
	n      int
	kill   func()
	killed bool
}

func (h *killingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "uploading manifest" {
		h.mu.Lock()
		if h.n--; h.n == 0 {
			h.kill()
			h.killed = true
		}
		h.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h *killingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *killingHandler) WithGroup(string) slog.Handler      { return h }

func newBucketHandle(t *testing.T, minio *testproc.Server, name string) *bucket.Bucket {
	t.Helper()
	b, err := bucket.Open(bucket.Config{Endpoint: minio.URL, Bucket: name, UsePathStyle: true,
		AccessKey: testproc.MinIOAccessKey, SecretKey: testproc.MinIOSecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// failures returns `<stream> <window>` → problems of every failed window.
func failures(rep evidence.Report) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Checks {
		if !c.OK() {
			out[c.Stream+" "+c.Window.String()] += strings.Join(c.Problems, "; ")
		}
	}
	return out
}

// expectOnly asserts that exactly one window failed, the named one, with a problem containing want.
func expectOnly(t *testing.T, rep evidence.Report, stream, tenant string, h window.Hour, want string) {
	t.Helper()
	var failed []evidence.Check
	for _, c := range rep.Checks {
		if !c.OK() {
			failed = append(failed, c)
		}
	}
	if len(failed) != 1 || failed[0].Stream != stream || failed[0].Tenant != tenant || !failed[0].Window.Start.Equal(h.Start) ||
		!strings.Contains(strings.Join(failed[0].Problems, "; "), want) {
		t.Fatalf("want only %s/%s %s failing with %q; got %v", stream, tenant, h, want, failures(rep))
	}
}

func etags(t *testing.T, b *bucket.Bucket) map[string]string {
	t.Helper()
	objs, err := b.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range objs {
		out[o.Key] = o.ETag
	}
	return out
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
