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
// collector's shape for PLATFORM and two tenants, exports them into a real MinIO as a user holding exactly the user
// guide's policy and verifies every window; then tampers with copies of the trail, checks object lock handling,
// the continuous chain (empty hours, truncation), reruns and interrupts a run by killing MinIO.
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
		`"stream":"tenant-audit-log","tenant":"acme"`, `"events":`, `"size_bytes":`} {
		if !strings.Contains(logs, msg) {
			t.Errorf("logs lack %s", msg)
		}
	}
	checkLockWarning(t, res, logs, "audit")
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
		deleteWindow(t, b, evidence.StreamPlatform, evidence.TenantPlatform, middle)
		expectFailures(t, verify(t, b, pinned), map[string]string{
			"platform-audit-log/PLATFORM " + middle.String():   evidence.ProblemMissing,
			"platform-audit-log/PLATFORM " + hours[2].String(): "chain: missing window " + middle.String(),
		})
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
		if len(got) != 2 || !strings.Contains(got["platform-audit-log/PLATFORM "+middle.String()], "unknown key "+m.KeyID) ||
			!strings.Contains(got["platform-audit-log/PLATFORM "+hours[2].String()], "chain: previous manifest sha256") {
			t.Fatalf("re-signed manifest: failures %v; want unknown key at %s and the chain broken at %s", got, middle, hours[2])
		}
		// A forger who also publishes the key in the bucket still breaks the chain of the next window.
		if _, err := b.PutBytes(ctx, evidence.KeysPrefix+m.KeyID+".pub", forgedPub, "text/plain", bucket.Condition{}); err != nil {
			t.Fatal(err)
		}
		rep := verify(t, b, nil)
		if got := failures(rep); !strings.Contains(got["platform-audit-log/PLATFORM "+hours[2].String()], "chain: previous manifest sha256") {
			t.Errorf("published forged key: failures %v; want the next window's chain to break", got)
		}
	})

	// (e): the guide's user exports every window with and without object lock, warning once that it cannot read the
	// lock configuration; compliance mode then refuses naming the action, and a user also granted it sees the lock.
	t.Run("object lock with the guide's policy", func(t *testing.T) {
		b := newBucket(t, minio, "audit-locked", true)
		if err := b.SetDefaultRetention(ctx, "GOVERNANCE", 1); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		e, err := auditlog.New(config(t, vl.URL, minio, "audit-locked", keyFile, nil), auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if len(res.Failed) > 0 || res.Exported != len(want) {
			t.Fatalf("locked bucket as the guide's user: exported %d, failed %v; want %d\n%s", res.Exported, res.Failed, len(want), logs.String())
		}
		checkLockWarning(t, res, logs.String(), "audit-locked")
		if rep := verify(t, b, pinned); rep.Failed() != 0 || len(rep.Checks) != len(want) {
			t.Errorf("locked bucket verify: %v", failures(rep))
		}
	})
	t.Run("compliance mode without the lock action refuses naming it", func(t *testing.T) {
		newBucket(t, minio, "audit-locked-strict", true)
		var logs bytes.Buffer
		e, err := auditlog.New(config(t, "http://127.0.0.1:1", minio, "audit-locked-strict", keyFile, map[string]string{auditlog.EnvComplianceMode: "true"}),
			auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, auditlog.ErrObjectLockUnreadable) ||
			!strings.Contains(res.Failed[0].Err.Error(), "lacks "+bucket.ActionGetObjectLock) || strings.Contains(logs.String(), "source unreachable") {
			t.Fatalf("compliance mode as the guide's user: %+v\n%s", res.Failed, logs.String())
		}
		if objs, _ := newBucketHandle(t, minio, "audit-locked-strict").List(ctx, ""); len(objs) != 0 {
			t.Errorf("refused run wrote %d objects", len(objs))
		}
	})
	// lockReader returns the exporter env of a user holding the guide's policy and s3:GetBucketObjectLockConfiguration.
	lockReader := func(t *testing.T, name string) map[string]string {
		t.Helper()
		policy, err := testproc.GuidePolicy(testproc.AuditLogsGuide, name)
		if err != nil {
			t.Fatal(err)
		}
		if policy, err = testproc.GrantAlso(policy, "arn:aws:s3:::"+name, bucket.ActionGetObjectLock); err != nil {
			t.Fatal(err)
		}
		user, err := testproc.CreateS3User(ctx, minio, name, policy)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{auditlog.EnvComplianceMode: "true", auditlog.EnvS3AccessKey: user.AccessKey, auditlog.EnvS3SecretKey: user.SecretKey}
	}
	t.Run("compliance mode with the lock action", func(t *testing.T) {
		b := newBucket(t, minio, "audit-compliant", true)
		if err := b.SetDefaultRetention(ctx, "GOVERNANCE", 1); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		e, err := auditlog.New(config(t, vl.URL, minio, "audit-compliant", keyFile, lockReader(t, "audit-compliant")),
			auditlog.Options{Log: slog.New(slog.NewJSONHandler(&logs, nil)), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		res := e.RunWindows(ctx, hours)
		if len(res.Failed) > 0 || res.Exported != len(want) || !res.Lock.Enabled || res.Lock.Mode != "GOVERNANCE" || res.LockDenied != "" {
			t.Fatalf("locked bucket: %+v", res)
		}
		if !strings.Contains(logs.String(), `"msg":"object lock","bucket":"audit-compliant","enabled":true,"mode":"GOVERNANCE","retention":"24h0m0s"`) {
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
		e, err := auditlog.New(config(t, "http://127.0.0.1:1", minio, "audit-unlocked", keyFile, lockReader(t, "audit-unlocked")),
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

	// (f) and the continuous chain: an hour without events still gets a window for every series seen, and a
	// later run with no events at all continues every series the bucket holds; deleting the newest window, or a
	// whole tenant's newest hours, is found.
	t.Run("continuous chain", func(t *testing.T) {
		quiet := []window.Hour{hours[2].Next(), hours[2].Next().Next()} // 18:00 and 19:00: no events
		b, res, logs := export(t, "audit-continuous", false, nil)
		if len(res.Failed) > 0 || res.Exported != len(want) {
			t.Fatalf("first run: %+v\n%s", res, logs)
		}
		e, err := auditlog.New(config(t, vl.URL, minio, "audit-continuous", keyFile, nil), auditlog.Options{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if res := e.RunWindows(ctx, quiet); len(res.Failed) > 0 || res.Exported != 3*len(quiet) {
			t.Fatalf("run over two hours without events: %+v; want %d empty windows (3 series x 2 hours)", res, 3*len(quiet))
		}
		newest := quiet[1]
		rep, err := evidence.Verifier{Bucket: b, Keys: pinned}.Verify(ctx, evidence.Filter{Newest: newest.Start})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed() != 0 || len(rep.Checks) != len(want)+3*len(quiet) {
			t.Fatalf("verify: %d windows, failures %v", len(rep.Checks), failures(rep))
		}
		for _, c := range rep.Checks {
			if !c.Window.Start.Before(quiet[0].Start) && c.Events != 0 {
				t.Errorf("%s/%s %s: %d events, want an empty window", c.Stream, c.Tenant, c.Window, c.Events)
			}
		}
		// An hour ahead of the bucket: the series are behind by two windows and a one-window run writes the oldest.
		var blogs bytes.Buffer
		e, err = auditlog.New(config(t, vl.URL, minio, "audit-continuous", keyFile, nil), auditlog.Options{Log: slog.New(slog.NewJSONHandler(&blogs, nil)), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		ahead := newest.Next().Next()
		if res := e.RunWindows(ctx, []window.Hour{ahead}); res.Exported != 3 || len(res.Failed) > 0 || !strings.Contains(blogs.String(), `"msg":"series behind`) {
			t.Fatalf("run one window ahead of a series two behind: %+v\n%s", res, blogs.String())
		}
		if _, ok, err := b.Stat(ctx, evidence.Folder(evidence.StreamTenant, "acme", newest.Next())+evidence.ManifestName); err != nil || !ok {
			t.Fatalf("the oldest missing window %s was not written first: %v", newest.Next(), err)
		}
		newest = newest.Next()

		deleteWindow(t, b, evidence.StreamTenant, "acme", newest)
		deleteWindow(t, b, evidence.StreamTenant, "globex", newest)
		deleteWindow(t, b, evidence.StreamTenant, "globex", newest.Prev())
		rep, err = evidence.Verifier{Bucket: b, Keys: pinned}.Verify(ctx, evidence.Filter{Newest: newest.Start})
		if err != nil {
			t.Fatal(err)
		}
		expectFailures(t, rep, map[string]string{
			"tenant-audit-log/acme " + newest.String():          evidence.ProblemMissing,
			"tenant-audit-log/globex " + newest.Prev().String(): evidence.ProblemMissing,
			"tenant-audit-log/globex " + newest.String():        evidence.ProblemMissing,
		})
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

// failures returns `<stream>/<tenant> <window>` → problems of every failed window.
func failures(rep evidence.Report) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Checks {
		if !c.OK() {
			out[c.Stream+"/"+c.Tenant+" "+c.Window.String()] += strings.Join(c.Problems, "; ")
		}
	}
	return out
}

// expectFailures asserts that exactly the windows of want (`<stream>/<tenant> <window>`) failed, each with a
// problem containing its value.
func expectFailures(t *testing.T, rep evidence.Report, want map[string]string) {
	t.Helper()
	got := failures(rep)
	for k, w := range want {
		if !strings.Contains(got[k], w) {
			t.Errorf("%s: problems %q; want %q", k, got[k], w)
		}
	}
	for k, p := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s failed too: %s", k, p)
		}
	}
}

// deleteWindow deletes the three objects of one window (as root, as a tamperer with delete rights would).
func deleteWindow(t *testing.T, b *bucket.Bucket, stream, tenant string, h window.Hour) {
	t.Helper()
	for _, n := range []string{evidence.DataName, evidence.SignatureName, evidence.ManifestName} {
		if err := b.Delete(context.Background(), evidence.Folder(stream, tenant, h)+n); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLockWarning asserts that a run as the guide's user warned exactly once that it cannot read the object lock
// configuration of bucketName, naming the action, and went on.
func checkLockWarning(t *testing.T, res auditlog.Result, logs, bucketName string) {
	t.Helper()
	warn := `"level":"WARN","msg":"cannot read the bucket's object lock configuration; going on without checking it","bucket":"` + bucketName + `","action":"` + bucket.ActionGetObjectLock + `"`
	if n := strings.Count(logs, warn); n != 1 || res.LockDenied != bucket.ActionGetObjectLock {
		t.Errorf("lock warning logged %d times (want 1), LockDenied %q:\n%s", n, res.LockDenied, logs)
	}
	if strings.Contains(logs, "S3 unreachable") || strings.Contains(logs, "bucket has no object lock") {
		t.Errorf("an unreadable lock configuration is reported as something else:\n%s", logs)
	}
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
