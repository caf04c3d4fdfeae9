package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"helm.sh/helm/v3/pkg/chart"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
)

// RenderMemo keeps the layer-2 chart renders of fleet renders that share it (Options.Memo), keyed by what decides
// the output: the chart's content (every file, by SHA-256), the release name and namespace, and the values. Two
// renders of one fleet with other values or charts (`kof diff`) then render each service whose chart and values
// are the same on both sides once. Rendering is deterministic (docs/design.md, "Decisions" 2), so a kept render
// equals a new one. It is safe for concurrent use; the kept object sets are shared and must not be modified.
type RenderMemo struct {
	mu      sync.Mutex
	renders map[string]*memoRender
}

// memoRender is one kept render; once guards its computation, so concurrent users wait for the first.
type memoRender struct {
	once sync.Once
	set  *manifest.Set
	err  error
}

// NewRenderMemo returns an empty memo.
func NewRenderMemo() *RenderMemo { return &RenderMemo{renders: map[string]*memoRender{}} }

// render renders ch (of content digest) as release name in namespace with values, through m when m is not nil.
func (m *RenderMemo) render(ctx context.Context, ch *chart.Chart, digest, name, namespace string,
	values map[string]any) (*manifest.Set, error) {
	do := func() (*manifest.Set, error) {
		return render.Chart(ctx, render.Options{Chart: ch, Values: values, ReleaseName: name, Namespace: namespace})
	}
	if m == nil {
		return do()
	}
	v, err := json.Marshal(values) // map keys sorted: the same values give the same text
	if err != nil {
		return do()
	}
	key := digest + "\x00" + name + "\x00" + namespace + "\x00" + string(v)
	m.mu.Lock()
	r, ok := m.renders[key]
	if !ok {
		r = &memoRender{}
		m.renders[key] = r
	}
	m.mu.Unlock()
	r.once.Do(func() { r.set, r.err = do() })
	return r.set, r.err
}

// chartDigest returns the SHA-256 of every file of ch and its dependencies (name and content), in name order.
func chartDigest(ch *chart.Chart) string {
	h := sha256.New()
	var walk func(c *chart.Chart, prefix string)
	walk = func(c *chart.Chart, prefix string) {
		files := append([]*chart.File(nil), c.Raw...)
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
		for _, f := range files {
			fmt.Fprintf(h, "%s%s\x00%d\x00", prefix, f.Name, len(f.Data))
			h.Write(f.Data)
		}
		for _, d := range c.Dependencies() {
			walk(d, prefix+d.Name()+"/")
		}
	}
	walk(ch, "")
	return hex.EncodeToString(h.Sum(nil))
}
