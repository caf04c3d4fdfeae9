package dashboards

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/dashboards"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/internal/testproc"
)

// regionalGrafanaValues is kof-storage's chart case of the regional Grafana (grafana.enabled, one dashboard
// disabled).
const regionalGrafanaValues = "charts/kof-storage/ci/05-grafana-values.yaml"

// vmselectPort is the port the VictoriaMetrics operator gives a VMCluster's vmselect Service
// (`vmselect-<VMCluster>`).
const vmselectPort = "8481"

// checkRegionalGrafana renders kof-storage as a regional cluster with its Grafana and runs, on f's real
// VictoriaMetrics, every query of every GrafanaDashboard it renders, sent as the regional Grafana sends it: to the
// URL of the data source the dashboards' `metrics` variable selects plus `/api/v1/query`. That URL must be the
// regional VMCluster's own vmselect (`http://vmselect-<VMCluster>:8481/select/0/prometheus`, tenant 0); a vmauth
// standing in for vmselect serves only that path layout, mapped onto the single-node VictoriaMetrics. want are the
// boards chartlib/dashboards builds: every rendered dashboard's queries must be exactly its board's.
func checkRegionalGrafana(t *testing.T, ctx context.Context, f fleet, want []dashboards.Board) {
	t.Helper()
	root := filepath.Join("..", "..")
	res, err := render.Render(ctx, render.Options{ChartDir: filepath.Join(root, "charts", "kof-storage"),
		ValuesFiles: []string{filepath.Join(root, regionalGrafanaValues)}, ReleaseName: "kof-storage", Namespace: "kof"})
	if err != nil {
		t.Fatalf("render kof-storage with %s: %v", regionalGrafanaValues, err)
	}
	vmclusters := res.OfKind("VMCluster")
	if len(vmclusters) != 1 {
		t.Fatalf("kof-storage renders %d VMClusters, want 1", len(vmclusters))
	}
	sources := map[string]*unstructured.Unstructured{}
	for _, ds := range res.OfKind("GrafanaDatasource") {
		name, _, _ := unstructured.NestedString(ds.Object, "spec", "datasource", "name")
		sources[name] = ds
	}
	boardsByName := map[string]dashboards.Board{}
	for _, b := range want {
		boardsByName[b.Name] = b
	}
	plugins.RegisterDefaultPlugins()
	rendered := res.OfKind("GrafanaDashboard")
	if len(rendered) == 0 {
		t.Fatal("kof-storage with grafana.enabled renders no GrafanaDashboard")
	}
	standIn := startVMSelectStandIn(t, f.vm)
	queries := 0
	for _, gd := range rendered {
		text, _, _ := unstructured.NestedString(gd.Object, "spec", "json")
		var d dashboard.Dashboard
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			t.Errorf("GrafanaDashboard %s: %v", gd.GetName(), err)
			continue
		}
		name := strings.TrimPrefix(gd.GetName(), "kof-")
		b, ok := boardsByName[name]
		if !ok {
			t.Errorf("GrafanaDashboard %s is no KOF dashboard", gd.GetName())
			continue
		}
		if diff := cmp.Diff(dashboards.Queries(b.Dashboard), dashboards.Queries(d)); diff != "" {
			t.Errorf("GrafanaDashboard %s queries differ from chartlib/dashboards (-want +got):\n%s", gd.GetName(), diff)
		}
		ds := metricsSource(t, gd.GetName(), d, sources)
		if ds == nil {
			continue
		}
		base := dataSourceURL(t, ds, vmclusters[0].GetName(), standIn)
		for _, e := range dashboards.Exprs(dashboards.Board{Name: name, Dashboard: d}, window,
			map[string]string{dashboards.ClusterVariable: ".*"}) {
			queries++
			res, err := queryAt(ctx, base, e.Query)
			switch {
			case err != nil:
				t.Errorf("regional %s: %v\n  %s", e.Where, err, e.Query)
			case len(res) == 0:
				t.Errorf("regional %s: no data\n  %s", e.Where, e.Query)
			}
		}
	}
	t.Logf("%d GrafanaDashboards, %d queries through the regional data source, each returned data", len(rendered),
		queries)
}

// metricsSource returns the GrafanaDatasource that dashboard d's `metrics` variable selects among sources (by
// name, with the variable's regex, of the variable's type), failing the test unless exactly one matches.
func metricsSource(t *testing.T, board string, d dashboard.Dashboard,
	sources map[string]*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	i := slices.IndexFunc(d.Templating.List, func(v dashboard.VariableModel) bool {
		return v.Name == dashboards.MetricsVariable && v.Type == dashboard.VariableTypeDatasource
	})
	if i < 0 {
		t.Errorf("GrafanaDashboard %s has no datasource variable %s", board, dashboards.MetricsVariable)
		return nil
	}
	v := d.Templating.List[i]
	if v.Regex == nil || v.Query == nil || v.Query.String == nil {
		t.Errorf("GrafanaDashboard %s variable %s has no regex or type", board, v.Name)
		return nil
	}
	re, err := regexp.Compile(strings.TrimSuffix(strings.TrimPrefix(*v.Regex, "/"), "/"))
	if err != nil {
		t.Errorf("GrafanaDashboard %s variable %s regex %q: %v", board, v.Name, *v.Regex, err)
		return nil
	}
	var matched []*unstructured.Unstructured
	for name, ds := range sources {
		typ, _, _ := unstructured.NestedString(ds.Object, "spec", "datasource", "type")
		if re.MatchString(name) && typ == *v.Query.String {
			matched = append(matched, ds)
		}
	}
	if len(matched) != 1 {
		t.Errorf("GrafanaDashboard %s variable %s (%s, type %s) selects %d of the rendered data sources %v, want 1",
			board, v.Name, *v.Regex, *v.Query.String, len(matched), slices.Sorted(maps.Keys(sources)))
		return nil
	}
	return matched[0]
}

// dataSourceURL checks that the URL of data source ds is the tenant-0 Prometheus API of VMCluster vmcluster's
// vmselect on this cluster, and returns it with the host replaced by the stand-in's address.
func dataSourceURL(t *testing.T, ds *unstructured.Unstructured, vmcluster, standIn string) string {
	t.Helper()
	raw, _, _ := unstructured.NestedString(ds.Object, "spec", "datasource", "url")
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("GrafanaDatasource %s url %q: %v", ds.GetName(), raw, err)
	}
	if want := "vmselect-" + vmcluster + ":" + vmselectPort; u.Host != want || u.Path != "/select/0/prometheus" {
		t.Errorf("GrafanaDatasource %s url %s, want http://%s/select/0/prometheus (this cluster's vmselect, tenant 0)",
			ds.GetName(), raw, want)
	}
	u.Host = standIn
	return u.String()
}

// startVMSelectStandIn starts a vmauth that serves vmselect's tenant-0 Prometheus API path layout
// (`/select/0/prometheus/api/v1/...`) from the single-node VictoriaMetrics at vm (which serves `/api/v1/...`), and
// nothing else; it returns its address.
func startVMSelectStandIn(t *testing.T, vm string) string {
	t.Helper()
	addr := testproc.FreeAddr(t)
	cfg := filepath.Join(t.TempDir(), "vmselect.yaml")
	write(t, cfg, fmt.Sprintf(`unauthorized_user:
  url_map:
    - src_paths: ["/select/0/prometheus/api/v1/.+"]
      url_prefix: http://%s/
      drop_src_path_prefix_parts: 3
`, vm))
	p := testproc.Start(t, "vmauth-vmselect", testproc.Tool(t, "vmauth"), nil, "-httpListenAddr="+addr,
		"-auth.config="+cfg)
	p.WaitHTTP(t, "http://"+addr+"/health")
	return addr
}
