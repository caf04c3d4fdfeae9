package scenarios

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/render"
)

// renderWith renders scenario name with extra umbrella values over its values.yaml.
func renderWith(t *testing.T, name string, values map[string]any) *fleet.Fleet {
	t.Helper()
	opts := options(t, name)
	opts.Values = values
	f, err := fleet.Render(context.Background(), opts)
	if err != nil {
		t.Fatalf("render %s with %v: %v", name, values, err)
	}
	return f
}

// owners returns, for every object of kind on cluster c, the services that render it.
func owners(c *fleet.Cluster, kind string) map[string][]string {
	out := map[string][]string{}
	for _, s := range c.Services {
		if s.Objects == nil {
			continue
		}
		for _, o := range s.Objects.OfKind(kind) {
			key := o.GetName()
			if o.GetNamespace() != "" {
				key = o.GetNamespace() + "/" + key
			}
			out[key] = append(out[key], s.Name)
		}
	}
	return out
}

// wantOwners checks the owners of every object of kind on the management cluster.
func wantOwners(t *testing.T, f *fleet.Fleet, kind string, want map[string][]string) {
	t.Helper()
	got := owners(cluster(t, f, "mgmt"), kind)
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("management cluster %s %s is rendered by %v, want %v", kind, k, got[k], w)
		}
	}
}

// TestOneOwnerOnTheManagementCluster is the regression test of two releases fighting over one object in regionless
// mode: VMAlert kof/cluster (kof-mothership and the regionless kof-storage) and, with
// certManager.clusterIssuer.enabled, ClusterIssuer kof-issuer. Variant: with kof-mothership's Gateway on too, its
// GatewayClass has one owner.
func TestOneOwnerOnTheManagementCluster(t *testing.T) {
	issuer := map[string]any{"kof-mothership": map[string]any{"values": map[string]any{
		"certManager": map[string]any{"clusterIssuer": map[string]any{"enabled": true, "email": "ops@example.com"}},
	}}}
	f := renderWith(t, "02-regionless", issuer)
	noProblems(t, f)
	wantOwners(t, f, "VMAlert", map[string][]string{"kof/cluster": {"kof-mothership"}})
	wantOwners(t, f, "ClusterIssuer", map[string][]string{"kof-issuer": {"kof-storage"}, "kof-mothership-issuer": {"kof-mothership"}})

	gateway := map[string]any{"kof-mothership": map[string]any{"values": map[string]any{
		"certManager": map[string]any{"clusterIssuer": map[string]any{"enabled": true, "email": "ops@example.com"}},
		"gateway":     map[string]any{"enabled": true},
	}}}
	f = renderWith(t, "02-regionless", gateway)
	noProblems(t, f)
	wantOwners(t, f, "GatewayClass", map[string][]string{"envoy-gateway": {"kof-mothership"}})
}

// TestManagementClusterGetsItsIngress is the regression test of regionless kof-storage rendering a Gateway,
// HTTPRoute and GatewayClass on a management cluster where nothing installs Envoy Gateway or the Gateway API CRDs:
// kof-operators installs Envoy Gateway there now, and the generic checks pass. Variant: `ingressMode: ingress`
// installs ingress-nginx, whose IngressClass the Ingress names.
func TestManagementClusterGetsItsIngress(t *testing.T) {
	f := mustRender(t, "02-regionless")
	noProblems(t, f)
	eg := service(t, f, "mgmt", "envoy-gateway")
	if eg.Chart != "gateway-helm" || !slices.Contains(eg.DependsOn, "kof/kof-operators") {
		t.Errorf("management cluster envoy-gateway: chart %q dependsOn %v, want gateway-helm after kof-operators", eg.Chart, eg.DependsOn)
	}

	f = renderWith(t, "02-regionless", map[string]any{"kof-regional": map[string]any{"values": map[string]any{"ingressMode": "ingress"}}})
	noProblems(t, f)
	if s := cluster(t, f, "mgmt").Service("envoy-gateway"); s != nil {
		t.Errorf("ingress mode installs envoy-gateway on the management cluster (%s)", s.Via)
	}
	service(t, f, "mgmt", "ingress-nginx")
	ing := object(t, service(t, f, "mgmt", "kof-storage"), "Ingress", "kof", "vmauth")
	wantValue(t, "regionless Ingress", ing.Object, "nginx", "spec", "ingressClassName")
}

// TestMothershipGatewayHasItsClass is the regression test of kof-mothership's optional Gateway naming
// `gatewayClassName: envoy-gateway`, a class nothing created, in regional mode: kof-mothership renders the class and
// the umbrella installs Envoy Gateway through kof-operators. Variant: with the class turned off the installable check
// names the missing class and the fix.
func TestMothershipGatewayHasItsClass(t *testing.T) {
	values := func(createClass bool) map[string]any {
		return map[string]any{"kof-mothership": map[string]any{"values": map[string]any{
			"gateway": map[string]any{"enabled": true, "createClass": createClass},
		}}}
	}
	f := renderWith(t, "01-regional-child", values(true))
	noProblems(t, f)
	wantOwners(t, f, "GatewayClass", map[string][]string{"envoy-gateway": {"kof-mothership"}})
	service(t, f, "mgmt", "envoy-gateway")

	f = renderWith(t, "01-regional-child", values(false))
	var got []string
	for _, fd := range cluster(t, f, "mgmt").Findings {
		got = append(got, fd.String())
	}
	if len(got) != 1 || !strings.Contains(got[0], "spec.gatewayClassName names GatewayClass envoy-gateway, which nothing creates") {
		t.Errorf("findings without the class = %q, want the missing GatewayClass", got)
	}
}

// TestEveryServiceWaits is the regression test of MultiClusterService services that started before what they
// depend on was ready: every Helm service of every KOF MCS (standard, Istio, regionless, M2M, M2R) sets
// helmOptions.wait; the waits check passes on each of those fleets.
func TestEveryServiceWaits(t *testing.T) {
	for _, name := range []string{"01-regional-child", "02-regionless", "05-m2m", "08-m2r", "12-istio-regional-child"} {
		f := mustRender(t, name)
		n := 0
		for _, s := range cluster(t, f, "mgmt").Services {
			if s.Objects == nil {
				continue
			}
			for _, mcs := range s.Objects.OfKind("MultiClusterService") {
				svcs, _, _ := unstructured.NestedSlice(mcs.Object, "spec", "serviceSpec", "services")
				for _, sv := range svcs {
					m := sv.(map[string]any)
					if _, values := m["values"]; !values {
						continue // a resources service
					}
					n++
					if wait, _, _ := unstructured.NestedBool(m, "helmOptions", "wait"); !wait {
						t.Errorf("%s: MCS %s service %s has no helmOptions.wait", name, mcs.GetName(), m["name"])
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no MCS service checked", name)
		}
		for _, fd := range cluster(t, f, "mgmt").Findings {
			t.Errorf("%s: %s", name, fd)
		}
	}
}

// sharedKeys are the keys the umbrella injects into every component (docs/values-contract.md): a component ci/ file
// that sets them is rendered with them set on the umbrella, as a user would.
var sharedKeys = []string{"global", "regionless", "tls", "istio", "autoUpgrade"}

// ciFleetValues returns the umbrella values that put a component chart's ci/ file into a fleet: its shared keys
// on the umbrella, the rest as the component's values at `<chart>.values`, or at the path at (kof-storage's are the
// regional storage values; kof-collectors is enabled on the management cluster).
func ciFleetValues(t *testing.T, chart, file string, at []string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]any{}
	if err := yaml.Unmarshal(raw, &own); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]any{}
	for _, k := range sharedKeys {
		if v, ok := own[k]; ok {
			out[k] = v
			delete(own, k)
		}
	}
	if len(at) > 0 {
		nested := own
		for i := len(at) - 1; i > 0; i-- {
			nested = map[string]any{at[i]: nested}
		}
		out[at[0]] = nested
		return out
	}
	block := map[string]any{"values": own}
	if chart == "kof-collectors" {
		block["enabled"] = true
	}
	out[chart] = block
	return out
}

// crd returns a CustomResourceDefinition of group, as a management cluster that has it installed already exports it.
func crd(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "things." + group},
		"spec":     map[string]any{"group": group},
	}}
}

// ciContext is, for the ci/ files that describe a chart outside the default fleet, what the fleet around them is:
// extra umbrella values and the management cluster's objects.
type ciContext struct {
	values map[string]any
	inputs []*unstructured.Unstructured
	// at is the umbrella path of the file's values when it is not `<chart>.values`.
	at []string
	// noClusters drops the scenario's ClusterDeployments: the file leaves KOF unable to serve any remote cluster,
	// so a fleet with some would rightly fail the checks (the operator's MultiClusterServices would wait for chart
	// MultiClusterServices that are not rendered).
	noClusters bool
}

// ciContexts are the fleets of the ci/ files that need one, with the reason.
func ciContexts() map[string]ciContext {
	return map[string]ciContext{
		// The VictoriaMetrics operator is managed outside KOF: its CRDs are on the management cluster already.
		"kof/07-existing-repo-values.yaml": {inputs: []*unstructured.Unstructured{crd("operator.victoriametrics.com")}},
		// The operators come from elsewhere: their CRDs are on the management cluster already.
		"kof-operators/03-no-flux-values.yaml": {inputs: []*unstructured.Unstructured{crd("monitoring.coreos.com"),
			crd("opentelemetry.io"), crd("grafana.integreatly.org")}},
		// The OpenTelemetry and Grafana operators are managed elsewhere: their CRDs are there already.
		"kof-operators/02-crds-only-values.yaml": {inputs: []*unstructured.Unstructured{crd("opentelemetry.io"),
			crd("grafana.integreatly.org")}},
		// A minimal mothership renders no ServiceTemplates: no remote cluster can be served, so no MCS chart runs.
		"kof-mothership/03-minimal-values.yaml": {noClusters: true, values: map[string]any{
			"kof-regional": map[string]any{"enabled": false}, "kof-child": map[string]any{"enabled": false}}},
		// Without kof-regional no regional cluster gets KOF's storage, so no child can bind: a management cluster
		// without remote clusters.
		"kof/03-without-regional-values.yaml": {noClusters: true},
		// The management cluster's storage in M2M: kof-child's storage values.
		"kof-storage/03-m2m-values.yaml": {at: []string{"kof-child", "values", "storage"}, values: map[string]any{
			"kof-child": map[string]any{"values": map[string]any{
				"fromManagement": map[string]any{"toManagementCluster": map[string]any{"enabled": true}}}}}},
		// VMAuth behind an Ingress: the regional clusters run ingress-nginx.
		"kof-storage/02-ingress-selfsigned-values.yaml": {values: map[string]any{"kof-regional": map[string]any{"values": map[string]any{
			"ingressMode": "ingress"}}}},
	}
}

// TestGenericChecksOnChartCIFiles runs the fleet's generic checks on every chart's ci/ values file: the umbrella's
// as the fleet's values, each component's inside the umbrella values (ciFleetValues), kof-propagation's (the
// operator's VMUser bundle, no umbrella component) as a service of the regional cluster after its VictoriaMetrics
// operator. Every cluster must come out with no problem and no finding.
func TestGenericChecksOnChartCIFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartsDir, "*", "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no chart ci/ files (%v)", err)
	}
	delivered := umbrellaCharts(t)
	for _, file := range files {
		chart := filepath.Base(filepath.Dir(filepath.Dir(file)))
		if !delivered[chart] {
			// Installed by hand with helm, not by the umbrella (the exporters): tests/charts/exporters and
			// tests/exporters prove their ci/ files.
			continue
		}
		key := chart + "/" + filepath.Base(file)
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			ctx := ciContexts()[key]
			opts := options(t, "01-regional-child")
			if ctx.noClusters {
				opts.Clusters = slices.DeleteFunc(opts.Clusters, func(o *unstructured.Unstructured) bool {
					return o.GetKind() == "ClusterDeployment"
				})
			}
			opts.Clusters = append(opts.Clusters, ctx.inputs...)
			switch chart {
			case "kof":
				opts.ValuesFiles = []string{file}
				opts.Values = ctx.values
			case "kof-propagation":
				propagationOnRegional(t, file)
				return
			default:
				opts.Values = merge(ciFleetValues(t, chart, file, ctx.at), ctx.values)
			}
			f, err := fleet.Render(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			noProblems(t, f)
		})
	}
}

// umbrellaCharts returns the charts the fleet delivers: the umbrella itself, each chart its values.yaml has a block
// for, and kof-propagation (which the operator delivers to regional clusters).
func umbrellaCharts(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartsDir, "kof", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(raw, &vals); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{"kof": true, "kof-propagation": true}
	for k := range vals {
		if _, err := os.Stat(filepath.Join(chartsDir, k, "Chart.yaml")); err == nil {
			out[k] = true
		}
	}
	if len(out) < 5 {
		t.Fatalf("the umbrella's values.yaml names only %d KOF charts", len(out))
	}
	return out
}

// merge returns a deep merge of b over a (maps merged, everything else replaced).
func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		am, aok := out[k].(map[string]any)
		bm, bok := v.(map[string]any)
		if aok && bok {
			out[k] = merge(am, bm)
			continue
		}
		out[k] = v
	}
	return out
}

// propagationOnRegional renders kof-propagation with file as a service of scenario 01's regional cluster, ordered
// after the VictoriaMetrics operator there (as the operator's propagation MCS depends on the regional MCS), and runs
// the checks on that cluster.
func propagationOnRegional(t *testing.T, file string) {
	t.Helper()
	f := mustRender(t, "01-regional-child")
	ch, err := render.Load(filepath.Join(chartsDir, "kof-propagation"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := render.Chart(context.Background(), render.Options{Chart: ch, ValuesFiles: []string{file},
		ReleaseName: "kof-propagation", Namespace: "kof"})
	if err != nil {
		t.Fatal(err)
	}
	// Delivered with the regional MCS's services, after the VictoriaMetrics operator (the operator's propagation MCS
	// depends on the regional MCS).
	regional := cluster(t, f, "regional-1")
	regional.Services = append(regional.Services, &fleet.Service{Via: "MultiClusterService kof-regional-cluster",
		Name: "kof-propagation", Namespace: "kof", Chart: "kof-propagation", Local: true, Objects: set,
		DependsOn: []string{"kof/victoria-metrics-operator"}})
	f.Check()
	noProblems(t, f)
}
