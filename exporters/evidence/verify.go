package evidence

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"kof.dev/kof/exporters/bucket"
	"kof.dev/kof/exporters/window"
)

// Filter narrows a verification; empty fields match everything.
type Filter struct {
	// Stream and Tenant select one series.
	Stream, Tenant string
	// From and To select windows starting in [From, To); zero = unbounded.
	From, To time.Time
	// Newest is the start of the newest window every series written with a continuous chain (Format v2) must
	// have: the last closed hour the exporter has had time to export (`kof audit verify --delay`). Each missing
	// hour up to it is a failed check; zero checks no end.
	Newest time.Time
}

// inRange reports whether window h is selected by f's From and To.
func (f Filter) inRange(h window.Hour) bool {
	return (f.From.IsZero() || !h.Start.Before(f.From)) && (f.To.IsZero() || h.Start.Before(f.To))
}

// ProblemMissing is the problem of a window that a continuous chain must have and the bucket lacks.
const ProblemMissing = "missing window: no objects (deleted, or not exported yet)"

// Check is the outcome of one window.
type Check struct {
	// Stream, Tenant and Window identify the window.
	Stream, Tenant string
	Window         window.Hour
	// Events is the manifest's event count (0 when there is no manifest).
	Events int64
	// Problems lists every failure; empty means OK.
	Problems []string
}

// OK reports whether the window passed every check.
func (c Check) OK() bool { return len(c.Problems) == 0 }

// Report is every checked window, by stream, tenant and window.
type Report struct {
	Checks []Check
}

// Failed returns the number of failed windows.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Checks {
		if !c.OK() {
			n++
		}
	}
	return n
}

// Verifier checks the audit evidence in a bucket.
type Verifier struct {
	// Bucket holds the evidence.
	Bucket *bucket.Bucket
	// Keys are the trusted keys; when it holds none, the public keys published under KeysPrefix are trusted.
	Keys *Keys
}

type windowObjects struct {
	stream, tenant string
	h              window.Hour
	names          map[string]bool
}

// Verify checks every window matching f: the signature of manifest.json with a trusted key, the data object's
// size and sha256 and its event count, and the chain (each manifest names the previous window of its series and
// that manifest's sha256). A series written with a continuous chain must also have every hour from its first
// window on: each hour missing before a Format v2 window, or after the series' last window up to f.Newest, is a
// failed check of that hour with ProblemMissing (truncation). Errors are S3 errors; every evidence failure is a
// Problem of its window.
func (v Verifier) Verify(ctx context.Context, f Filter) (Report, error) {
	keys := v.Keys
	if keys == nil || keys.Len() == 0 {
		var err error
		if keys, err = v.publishedKeys(ctx); err != nil {
			return Report{}, err
		}
	}
	prefix := Root + "/"
	if f.Stream != "" {
		prefix += f.Stream + "/"
		if f.Tenant != "" {
			prefix = SeriesPrefix(f.Stream, f.Tenant)
		}
	}
	objs, err := v.Bucket.List(ctx, prefix)
	if err != nil {
		return Report{}, err
	}
	series := map[string][]*windowObjects{}
	byKey := map[string]*windowObjects{}
	for _, o := range objs {
		stream, tenant, h, name, ok := ParseKey(o.Key)
		if !ok || (f.Tenant != "" && tenant != f.Tenant) {
			continue
		}
		id := Folder(stream, tenant, h)
		w := byKey[id]
		if w == nil {
			w = &windowObjects{stream: stream, tenant: tenant, h: h, names: map[string]bool{}}
			byKey[id] = w
			sk := stream + "\x00" + tenant
			series[sk] = append(series[sk], w)
		}
		w.names[name] = true
	}
	var rep Report
	ids := make([]string, 0, len(series))
	for k := range series {
		ids = append(ids, k)
	}
	sort.Strings(ids)
	for _, sk := range ids {
		ws := series[sk]
		sort.Slice(ws, func(i, j int) bool { return ws[i].h.Start.Before(ws[j].h.Start) })
		rep.Checks = append(rep.Checks, v.verifySeries(ctx, ws, f, keys)...)
	}
	return rep, nil
}

// publishedKeys loads every public key under KeysPrefix.
func (v Verifier) publishedKeys(ctx context.Context) (*Keys, error) {
	objs, err := v.Bucket.List(ctx, KeysPrefix)
	if err != nil {
		return nil, err
	}
	k := &Keys{}
	for _, o := range objs {
		data, _, err := v.Bucket.Get(ctx, o.Key)
		if err != nil {
			return nil, err
		}
		id, err := k.AddPublicKey(data)
		if err != nil {
			return nil, fmt.Errorf("published key %s: %w", o.Key, err)
		}
		if strings.TrimSuffix(strings.TrimPrefix(o.Key, KeysPrefix), ".pub") != id {
			return nil, fmt.Errorf("published key %s: holds key %s", o.Key, id)
		}
	}
	return k, nil
}

// verifySeries checks the windows of one series in time order.
func (v Verifier) verifySeries(ctx context.Context, ws []*windowObjects, f Filter, keys *Keys) []Check {
	var out []Check
	var prevWindow *window.Hour
	var prevSHA string
	continuous := false // the newest manifest so far promises a continuous chain
	missing := func(stream, tenant string, after, upTo window.Hour) {
		for h := after.Next(); !h.Start.After(upTo.Start); h = h.Next() {
			if f.inRange(h) {
				out = append(out, Check{Stream: stream, Tenant: tenant, Window: h, Problems: []string{ProblemMissing}})
			}
		}
	}
	for i, w := range ws {
		inRange := f.inRange(w.h)
		c := Check{Stream: w.stream, Tenant: w.tenant, Window: w.h}
		manifest, sha, problems := v.verifyWindow(ctx, w, keys, &c)
		c.Problems = append(c.Problems, problems...)
		if i > 0 && (continuous || (manifest != nil && manifest.Continuous())) {
			missing(w.stream, w.tenant, ws[i-1].h, w.h.Prev())
		}
		if manifest != nil {
			switch {
			case manifest.PreviousWindow == nil && prevWindow != nil:
				c.Problems = append(c.Problems, fmt.Sprintf("chain: manifest starts a new chain but window %s precedes it", prevWindow))
			case manifest.PreviousWindow != nil && (prevWindow == nil || !manifest.PreviousWindow.Equal(prevWindow.Start)):
				if prevWindow == nil && !f.From.IsZero() && manifest.PreviousWindow.Before(f.From) {
					break // the link leaves the range asked for
				}
				c.Problems = append(c.Problems, fmt.Sprintf("chain: missing window %s (the previous window this manifest names)", window.Of(*manifest.PreviousWindow)))
			case manifest.PreviousWindow != nil && manifest.PreviousManifestSHA256 != prevSHA:
				c.Problems = append(c.Problems, fmt.Sprintf("chain: previous manifest sha256 %s, but window %s's manifest has %s", short(manifest.PreviousManifestSHA256), prevWindow, short(prevSHA)))
			}
		}
		if inRange {
			out = append(out, c)
		}
		if manifest != nil {
			h := w.h
			prevWindow, prevSHA = &h, sha
			continuous = manifest.Continuous()
		}
	}
	if last := ws[len(ws)-1]; continuous && !f.Newest.IsZero() {
		missing(last.stream, last.tenant, last.h, window.Of(f.Newest))
	}
	return out
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// verifyWindow checks one window's objects and returns its manifest (nil when unreadable) and the manifest's
// sha256.
func (v Verifier) verifyWindow(ctx context.Context, w *windowObjects, keys *Keys, c *Check) (*Manifest, string, []string) {
	folder := Folder(w.stream, w.tenant, w.h)
	if !w.names[ManifestName] {
		if w.names[DataName] {
			return nil, "", []string{"incomplete: data without manifest.json"}
		}
		return nil, "", []string{"incomplete: no manifest.json"}
	}
	raw, _, err := v.Bucket.Get(ctx, folder+ManifestName)
	if err != nil {
		return nil, "", []string{"read manifest: " + err.Error()}
	}
	sum := sha256.Sum256(raw)
	sha := hex.EncodeToString(sum[:])
	m, err := ParseManifest(raw)
	if err != nil {
		return nil, sha, []string{err.Error()}
	}
	c.Events = m.EventCount
	var problems []string
	if m.Stream != w.stream || m.Tenant != w.tenant || !m.WindowStart.Equal(w.h.Start) || !m.WindowEnd.Equal(w.h.End) {
		problems = append(problems, fmt.Sprintf("manifest names %s/%s %s, not its folder", m.Stream, m.Tenant, window.Of(m.WindowStart)))
	}
	sig, _, err := v.Bucket.Get(ctx, folder+SignatureName)
	switch {
	case errors.Is(err, bucket.ErrNotFound):
		problems = append(problems, "no manifest.json.sig")
	case err != nil:
		problems = append(problems, "read signature: "+err.Error())
	default:
		if err := keys.Verify(m.Algorithm, m.KeyID, raw, sig); err != nil {
			problems = append(problems, err.Error())
		}
	}
	problems = append(problems, v.verifyData(ctx, folder, m)...)
	return &m, sha, problems
}

// verifyData checks the data object against the manifest: size, sha256 and the number of lines.
func (v Verifier) verifyData(ctx context.Context, folder string, m Manifest) []string {
	rc, obj, err := v.Bucket.Open(ctx, folder+m.Data.Name)
	if err != nil {
		if errors.Is(err, bucket.ErrNotFound) {
			return []string{"tampered data: " + m.Data.Name + " missing"}
		}
		return []string{"read data: " + err.Error()}
	}
	defer rc.Close()
	h := sha256.New()
	var problems []string
	lines, cerr := countLines(io.TeeReader(rc, h))
	if _, err := io.Copy(h, rc); err != nil {
		return []string{"read data: " + err.Error()}
	}
	if obj.Size != m.Data.Size {
		problems = append(problems, fmt.Sprintf("tampered data: size %d, manifest says %d", obj.Size, m.Data.Size))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.Data.SHA256 {
		problems = append(problems, fmt.Sprintf("tampered data: sha256 %s, manifest says %s", short(got), short(m.Data.SHA256)))
		return problems
	}
	if cerr != nil {
		problems = append(problems, "data: "+cerr.Error())
	} else if lines != m.EventCount {
		problems = append(problems, fmt.Sprintf("event count: %d lines, manifest says %d", lines, m.EventCount))
	}
	return problems
}

// countLines counts the newline-terminated lines of a gzip stream.
func countLines(r io.Reader) (int64, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, fmt.Errorf("not gzip: %w", err)
	}
	var n int64
	br := bufio.NewReaderSize(zr, 1<<16)
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(bytes.Count(chunk, []byte{'\n'}))
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return n, fmt.Errorf("gunzip: %w", err)
		}
	}
}
