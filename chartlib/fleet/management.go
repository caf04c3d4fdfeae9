package fleet

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/flux"
	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
)

// management is the management cluster after layers 1 and the component releases.
type management struct {
	umbrella *manifest.Set
	releases []Release
	// objects are the umbrella's and every local release's objects.
	objects []*unstructured.Unstructured
	// fixtures are what `lookup` sees on the management cluster.
	fixtures []*unstructured.Unstructured
	charts   *chartCache
}

// chartCache loads each local chart once; loaded charts are never modified by rendering, so they are shared.
type chartCache struct {
	fsys   fs.FS
	where  string
	mu     sync.Mutex
	loaded map[string]*chart.Chart
	// digests are the loaded charts' content digests (chartDigest), for RenderMemo.
	digests map[string]string
}

// newChartCache returns the cache of the charts of opts: the folder ChartsDir, else the file system Charts.
func newChartCache(opts Options) *chartCache {
	c := &chartCache{fsys: opts.Charts, where: "the given charts", loaded: map[string]*chart.Chart{},
		digests: map[string]string{}}
	if opts.ChartsDir != "" {
		c.fsys, c.where = os.DirFS(opts.ChartsDir), opts.ChartsDir
	}
	return c
}

// local reports whether name is a KOF chart of the cache.
func (c *chartCache) local(name string) bool {
	if name == "" || path.Base(name) != name || !fs.ValidPath(name) {
		return false
	}
	_, err := fs.Stat(c.fsys, path.Join(name, "Chart.yaml"))
	return err == nil
}

// get returns the loaded chart name, loading it on first use.
func (c *chartCache) get(name string) (*chart.Chart, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.loaded[name]; ok {
		return ch, nil
	}
	ch, err := render.LoadFS(c.fsys, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.where, err)
	}
	c.loaded[name] = ch
	c.digests[name] = chartDigest(ch)
	return ch, nil
}

// digest returns the content digest of the loaded chart name ("" before it is loaded).
func (c *chartCache) digest(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.digests[name]
}

// renderManagement renders the umbrella (layer 1) and every HelmRelease whose chart is local, in the order Flux
// installs them (chartlib/flux reads the HelmReleases as helm-controller does). Any failure is returned, a
// dependsOn cycle among them too (Flux would install none of them): a management cluster that cannot be rendered
// leaves nothing to show.
func renderManagement(ctx context.Context, opts Options, in *inputs) (*management, error) {
	m := &management{charts: newChartCache(opts)}
	if opts.NamespaceObject != nil {
		m.fixtures = append(m.fixtures, opts.NamespaceObject)
	}
	m.fixtures = append(m.fixtures, in.objects...)
	umbrella, err := m.charts.get(UmbrellaChart)
	if err != nil {
		return nil, err
	}
	set, err := umbrellaObjects(ctx, opts, umbrella, m.fixtures)
	if err != nil {
		return nil, fmt.Errorf("render umbrella %s of %s: %w", UmbrellaChart, m.charts.where, err)
	}
	m.umbrella = set
	m.objects = set.Objects()
	if err := m.addReleases(ctx, set, ""); err != nil {
		return nil, err
	}
	read := make([]flux.Release, len(m.releases))
	for i, r := range m.releases {
		read[i] = flux.Release{HelmRelease: r.hr, DependsOn: r.DependsOn}
	}
	ordered, err := flux.Order(read)
	if err != nil {
		return nil, fmt.Errorf("umbrella %s of %s: %w", UmbrellaChart, m.charts.where, err)
	}
	byHR := map[string]Release{}
	for _, r := range m.releases {
		byHR[r.hr] = r
	}
	m.releases = m.releases[:0]
	for _, fr := range ordered {
		m.releases = append(m.releases, byHR[fr.HelmRelease])
	}
	return m, nil
}

// umbrellaObjects returns layer 1: opts.Layer1 as given (objects read from a live management cluster), or the
// umbrella chart rendered with the user's values.
func umbrellaObjects(ctx context.Context, opts Options, umbrella *chart.Chart,
	fixtures []*unstructured.Unstructured) (*manifest.Set, error) {
	if opts.Layer1 != nil {
		objs := make([]manifest.Object, 0, len(opts.Layer1))
		for _, o := range opts.Layer1 {
			objs = append(objs, manifest.Object{Unstructured: o, Source: LiveSource})
		}
		return manifest.New(objs...), nil
	}
	return render.Chart(ctx, render.Options{
		Chart: umbrella, ValuesFiles: opts.ValuesFiles, Values: opts.Values,
		ReleaseName: opts.ReleaseName, Namespace: opts.Namespace, Lookup: fixtures,
		APIVersions: ManagementAPIVersions(),
	})
}

// LiveSource is the manifest source of layer-1 objects given in Options.Layer1.
const LiveSource = "live management cluster"

// addReleases adds the HelmReleases of set (rendered by the umbrella, or by the release parent) to m, rendering
// those of local charts and, in turn, the HelmReleases they render (kof-operators' operators): Flux installs
// those too, after parent, so the preview lists them as releases of the management cluster.
func (m *management) addReleases(ctx context.Context, set *manifest.Set, parent string) error {
	for _, hr := range set.OfKind(flux.KindHelmRelease) {
		fr, err := flux.Read(hr, set.Get)
		if err != nil {
			return err
		}
		rel := Release{Name: fr.Name, Namespace: fr.Namespace, Chart: fr.Chart, Version: fr.Version,
			Repository: fr.Repository, DependsOn: fr.DependsOn, Values: fr.Values, hr: fr.HelmRelease}
		if parent != "" {
			rel.DependsOn, rel.Parent = append(rel.DependsOn, parent), parent
		}
		if i := m.releaseIndex(rel.hr); i >= 0 {
			// Already read from Options.Layer1 (a live cluster lists the operators' HelmReleases beside the
			// umbrella's): keep the live one, and note the release that renders it.
			if parent != "" && m.releases[i].Parent == "" {
				m.releases[i].DependsOn, m.releases[i].Parent = append(m.releases[i].DependsOn, parent), parent
			}
			continue
		}
		m.releases = append(m.releases, rel)
		if !m.charts.local(rel.Chart) {
			continue
		}
		if err := m.renderRelease(ctx, &m.releases[len(m.releases)-1]); err != nil {
			return err
		}
		rendered := m.releases[len(m.releases)-1].Objects
		m.objects = append(m.objects, rendered.Objects()...)
		if err := m.addReleases(ctx, rendered, rel.hr); err != nil {
			return err
		}
	}
	return nil
}

// releaseIndex returns the index in m.releases of the release delivered by HelmRelease hr (`namespace/name`), -1
// when there is none.
func (m *management) releaseIndex(hr string) int {
	for i, r := range m.releases {
		if r.hr == hr {
			return i
		}
	}
	return -1
}

// renderRelease renders a local release on the management cluster with its values, name and namespace.
func (m *management) renderRelease(ctx context.Context, rel *Release) error {
	ch, err := m.charts.get(rel.Chart)
	if err != nil {
		return err
	}
	set, err := render.Chart(ctx, render.Options{
		Chart: ch, Values: rel.Values, ReleaseName: rel.Name, Namespace: rel.Namespace, Lookup: m.fixtures,
		APIVersions: ManagementAPIVersions(),
	})
	if err != nil {
		return fmt.Errorf("render HelmRelease %s (chart %s): %w", rel.Name, rel.Chart, err)
	}
	rel.Local, rel.Objects = true, set
	return nil
}

// str returns the string at path of obj, "" when absent or not a string.
func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

// ChartCRDs returns the CustomResourceDefinitions in the `crds/` folder of the local KOF chart name, as Helm
// installs them before the chart's templates (and never upgrades them); nil when name is not a local chart or has
// none. Errors: the chart cannot be loaded, or a file of `crds/` is not YAML of Kubernetes objects (naming the file).
func (f *Fleet) ChartCRDs(name string) ([]*unstructured.Unstructured, error) {
	if f.charts == nil || !f.charts.local(name) {
		return nil, nil
	}
	ch, err := f.charts.get(name)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, crd := range ch.CRDObjects() {
		objs, err := manifest.ParseDocuments(crd.Filename, crd.File.Data)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			out = append(out, o.Unstructured)
		}
	}
	return out, nil
}
