package fleet

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/validate"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// wrongValue is a value of the wrong kind for each annotation kind: the mistakes of a user's first try.
var wrongValue = map[Kind]string{
	KindURL:        "not a url",
	KindDomain:     "Not A Domain!",
	KindName:       "Not A Name",
	KindNamespace:  "Not_A_Namespace",
	KindEmail:      "not-an-email",
	KindHTTPConfig: `{"dial_timeout":"soon"}`,
	KindValues:     "[1, 2]",
}

// annotationKey matches the KOF annotation keys a chart or page names.
var annotationKey = regexp.MustCompile(`k0rdent\.mirantis\.com/kof-[a-z0-9-]+`)

// keysRead returns every KOF key named by the files of the charts' layer-2 templates and MCS helpers (files/*.tpl,
// templates/_*.tpl of kof-regional, kof-child and the partials) and by the operator's annotation constants, minus
// the label keys and the prefixes of keys a template builds (`kof-write-`, with printf).
func keysRead(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, pattern := range []string{"kof-regional/files/*.tpl", "kof-regional/templates/_*.tpl",
		"kof-child/files/*.tpl", "kof-child/templates/_*.tpl", "partials/files/*.tpl", "partials/templates/_*.tpl"} {
		files, err := filepath.Glob(filepath.Join(chartsDir, pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("glob %s: %v (%d files)", pattern, err, len(files))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range annotationKey.FindAllString(string(data), -1) {
				seen[k] = true
			}
		}
	}
	for _, k := range []string{kofv1.RegionalDomainAnnotation, kofv1.CertEmailAnnotation, kofv1.HTTPConfigAnnotation,
		kofv1.WriteMetricsEndpointAnnotation, kofv1.ReadMetricsEndpointAnnotation, kofv1.WriteLogsEndpointAnnotation,
		kofv1.ReadLogsEndpointAnnotation, kofv1.WriteAuditLogsEndpointAnnotation, kofv1.ReadAuditLogsEndpointAnnotation,
		kofv1.WriteTracesEndpointAnnotation, kofv1.ReadTracesEndpointAnnotation} {
		seen[k] = true
	}
	var out []string
	for k := range seen {
		if !slices.Contains(KnownLabels, k) && !strings.HasSuffix(k, "-") { // `kof-write-` starts a printf
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestEveryReadAnnotationHasAKind: every annotation key the charts' layer-2 templates or the operator read is in
// Annotations (so it is checked by its kind), every entry is read somewhere and documented in docs/annotations.md,
// and every entry's example passes its own check while the wrong value of its kind fails it.
func TestEveryReadAnnotationHasAKind(t *testing.T) {
	read := keysRead(t)
	for _, k := range read {
		if _, ok := LookupAnnotation(k); !ok {
			t.Errorf("annotation %s is read by the charts or the operator but has no entry in Annotations", k)
		}
	}
	doc, err := os.ReadFile("../../docs/annotations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, k := range annotationKey.FindAllString(strings.ReplaceAll(string(doc), "`k/", "`"+kofv1.Prefix), -1) {
		documented[k] = true
	}
	for _, a := range Annotations {
		if !slices.Contains(read, a.Key) {
			t.Errorf("Annotations has %s, which nothing reads", a.Key)
		}
		if !documented[a.Key] && !documentedByBrace(string(doc), a.Key) {
			t.Errorf("annotation %s is not in docs/annotations.md", a.Key)
		}
		if err := a.Check(a.Example); err != nil {
			t.Errorf("the example of %s fails its check: %v", a.Key, err)
		}
		bad, ok := wrongValue[a.Kind]
		if !ok {
			t.Fatalf("no wrong value for kind %q", a.Kind)
		}
		err := a.Check(bad)
		if err == nil || !strings.Contains(err.Error(), a.Key) || !strings.Contains(err.Error(), "for example") {
			t.Errorf("%s = %q: error %v, want one naming the annotation with an example", a.Key, bad, err)
		}
	}
}

// documentedByBrace reports whether docs/annotations.md names key in the brace form
// `k/kof-{write,read}-{metrics,...}-endpoint`.
func documentedByBrace(doc, key string) bool {
	if !strings.HasSuffix(key, "-endpoint") {
		return false
	}
	return strings.Contains(doc, "`k/kof-{write,read}-{metrics,logs,audit-logs,traces}-endpoint`")
}

// badInputFleet is the fleet the annotation table test plants into: r1 with child c1 (us-east-2), r2 with child c2
// (eu-west-1), with the umbrella values vals (kof-dashboards off: the management cluster's dashboards read no
// annotation and dominate the render time). planted are extra annotations of the named clusters.
func badInputFleet(t *testing.T, vals map[string]any, planted map[string]string, names ...string) *Fleet {
	t.Helper()
	objs := []*unstructured.Unstructured{clusterTemplate("aws-standalone"), regional("r1", "us-east-2"),
		child("c1", "us-east-2", nil), regional("r2", "eu-west-1"), child("c2", "eu-west-1", nil)}
	for _, o := range objs {
		if !slices.Contains(names, o.GetName()) {
			continue
		}
		ann := o.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		for k, v := range planted {
			ann[k] = v
		}
		o.SetAnnotations(ann)
	}
	values := map[string]any{"kof-dashboards": map[string]any{"enabled": false}}
	for k, v := range vals {
		values[k] = v
	}
	return renderFleet(t, Options{Clusters: objs, Values: values})
}

// mcsTexts returns the values texts of every service of every MultiClusterService f gives the management cluster.
func mcsTexts(f *Fleet) string {
	var b strings.Builder
	for _, s := range f.Cluster("mgmt").Services {
		if s.Objects == nil {
			continue
		}
		for _, o := range s.Objects.OfKind("MultiClusterService") {
			svcs, _, _ := unstructured.NestedSlice(o.Object, "spec", "serviceSpec", "services")
			for _, svc := range svcs {
				m, _ := svc.(map[string]any)
				v, _ := m["values"].(string)
				b.WriteString(v)
			}
		}
	}
	return b.String()
}

// clusterOutput returns what cluster c receives as text: every service's values and objects, and its problems;
// the management cluster's operator outputs are left out (they are per cluster by design).
func clusterOutput(t *testing.T, c *Cluster) string {
	t.Helper()
	var b strings.Builder
	for _, s := range c.Services {
		if s.Name == OperatorOutputs {
			continue
		}
		v, err := yaml.Marshal(s.Values)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("# " + s.Namespace + "/" + s.Name + "\n" + string(v))
		if s.Objects != nil {
			y, err := s.Objects.YAML()
			if err != nil {
				t.Fatal(err)
			}
			b.Write(y)
		}
	}
	b.WriteString(strings.Join(c.Problems(), "\n"))
	return b.String()
}

// TestWrongAnnotationFailsOnlyItsCluster feeds every annotation of Annotations, with the wrong value of its kind,
// to a regional (r1) and a child (c1) at once, in an umbrella mode whose MultiClusterServices read it (gateway mode,
// else ingress mode: kof-ingress-nginx-values is read only there): a service of r1 or c1 that fails on it names the
// cluster, the key and an example and renders nothing; r1 or c1 reports it (what only the operator reads is its
// InvalidAnnotation problem); and the clusters of the other region (r2, c2) and the management cluster's releases
// receive exactly what they receive without the mistake. It renders the fleet once per key (about 2 s each on two
// busy cores, in parallel), which is what the test is about: the whole pipeline, per key.
func TestWrongAnnotationFailsOnlyItsCluster(t *testing.T) {
	modes := []map[string]any{nil, {"kof-regional": map[string]any{"values": map[string]any{"ingressMode": "ingress"}}}}
	type baseline struct {
		texts string
		want  map[string]string
	}
	bases := make([]baseline, len(modes))
	for i, vals := range modes {
		base := badInputFleet(t, vals, nil)
		bases[i] = baseline{texts: mcsTexts(base), want: map[string]string{}}
		for _, c := range base.Clusters {
			if c.Failed() {
				t.Fatalf("the unplanted fleet fails on %s: %v", c.Name, c.Problems())
			}
			bases[i].want[c.Name] = clusterOutput(t, c)
		}
	}
	for _, a := range Annotations {
		t.Run(strings.TrimPrefix(a.Key, kofv1.Prefix), func(t *testing.T) {
			t.Parallel()
			mode := 0
			for i := range modes {
				if strings.Contains(bases[i].texts, strconv.Quote(a.Key)) {
					mode = i
					break
				}
			}
			bad := wrongValue[a.Kind]
			f := badInputFleet(t, modes[mode], map[string]string{a.Key: bad}, "r1", "c1")
			refused := false
			for _, name := range []string{"r1", "c1"} {
				c := f.Cluster(name)
				for _, s := range c.Services {
					if s.Err == nil || !strings.Contains(s.Err.Error(), "annotation "+a.Key) {
						continue
					}
					if msg := s.Err.Error(); !strings.Contains(msg, "cluster kcm-system/"+name) || !strings.Contains(msg, "for example") {
						t.Errorf("%s: service %s failed with %q, want the cluster, %s and an example", name, s.Name, msg, a.Key)
					}
					if s.Objects != nil {
						t.Errorf("%s: service %s failed but still rendered %d objects", name, s.Name, s.Objects.Len())
					}
				}
				if strings.Contains(strings.Join(c.Problems(), "\n"), a.Key) {
					refused = true
				}
			}
			if !refused {
				t.Errorf("%s = %q on a regional and a child: neither cluster reports it", a.Key, bad)
			}
			for _, other := range []string{"mgmt", "r2", "c2"} {
				if got := clusterOutput(t, f.Cluster(other)); got != bases[mode].want[other] {
					t.Errorf("%s = %q on r1 and c1 changed what %s receives", a.Key, bad, other)
				}
			}
		})
	}
}

// TestBadAnnotationMessages pins the outcome of the inputs: a regional's Gateway name and storage class that
// the API server rejects, a bad ACME e-mail, and a child's write endpoint that is no URL fail that cluster's
// service (nothing rendered for it), with the message naming the cluster, the annotation and an example.
func TestBadAnnotationMessages(t *testing.T) {
	for _, tt := range []struct {
		cluster, service, key, value, want string
	}{
		{"r1", "kof-storage", GatewayNameAnnotation, "Not A Name", `cluster kcm-system/r1: annotation ` +
			`k0rdent.mirantis.com/kof-gateway-name: "Not A Name" is not a DNS-1123 subdomain (an object name): a ` +
			`lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`},
		{"r1", "kof-storage", StorageClassAnnotation, "Fast_Class!", `for example k0rdent.mirantis.com/kof-storage-class: "standard"`},
		{"r1", "kof-storage", kofv1.CertEmailAnnotation, "not-an-email", `annotation k0rdent.mirantis.com/kof-cert-email: ` +
			`"not-an-email" is not an e-mail address: mail: missing '@' or angle-addr; for example ` +
			`k0rdent.mirantis.com/kof-cert-email: "admin@example.com"`},
		{"c1", "kof-collectors", kofv1.WriteMetricsEndpointAnnotation, "not a url", `cluster kcm-system/c1: annotation ` +
			`k0rdent.mirantis.com/kof-write-metrics-endpoint: "not a url" is not an absolute http(s) URL: invalid URL ` +
			`"not a url": want an absolute http:// or https:// URL with a host; for example ` +
			`k0rdent.mirantis.com/kof-write-metrics-endpoint: "https://vmauth.regional-1.example.com/vm/insert/0/prometheus/api/v1/write"`},
	} {
		t.Run(tt.key, func(t *testing.T) {
			f := badInputFleet(t, nil, map[string]string{tt.key: tt.value}, tt.cluster)
			s := f.Cluster(tt.cluster).Service(tt.service)
			if s == nil || s.Err == nil || !strings.Contains(s.Err.Error(), tt.want) {
				t.Fatalf("service %s of %s: %v, want an error containing %q", tt.service, tt.cluster, s, tt.want)
			}
			if s.Objects != nil || s.Values != nil {
				t.Errorf("service %s of %s failed but has values or objects", tt.service, tt.cluster)
			}
		})
	}
}

// TestValuesAnnotationTypo: an unknown key inside a values annotation is reported naming the cluster and the
// annotation, with the did-you-mean the umbrella's values get (regression: a schema error of the chart that named
// neither).
func TestValuesAnnotationTypo(t *testing.T) {
	f := badInputFleet(t, nil, map[string]string{StorageValuesAnnotation: `{"victoriametrics": {"vmclustr": {}}}`}, "r1")
	s := f.Cluster("r1").Service("kof-storage")
	want := "cluster kcm-system/r1: annotation k0rdent.mirantis.com/kof-storage-values: victoriametrics.vmclustr: " +
		"unknown key; did you mean vmcluster? (values of chart kof-storage)"
	if s == nil || s.Err == nil || s.Err.Error() != want {
		t.Fatalf("kof-storage of r1: %v, want the error %q", s.Err, want)
	}
	for _, name := range []string{"r2", "c1", "c2"} {
		if c := f.Cluster(name); c.Failed() {
			t.Errorf("%s fails too: %v", name, c.Problems())
		}
	}
}

// TestWriteKeepsReleasesOfOneNameApart: two releases of one namespace and name on a cluster (a release delivered
// twice) are written to two folders, so neither's files replace the other's.
func TestWriteKeepsReleasesOfOneNameApart(t *testing.T) {
	c := &Cluster{Name: "mgmt", Dir: "mgmt", Services: []*Service{
		{Via: "HelmRelease kof/kof-collectors", Name: "kof-collectors", Namespace: "kof", Values: map[string]any{"from": "umbrella"}},
		{Via: "MultiClusterService kof-mgmt-cluster", Name: "kof-collectors", Namespace: "kof", Values: map[string]any{"from": "mcs"}},
	}}
	dir := t.TempDir()
	if err := Write(dir, &Fleet{Clusters: []*Cluster{c}}); err != nil {
		t.Fatal(err)
	}
	for sub, want := range map[string]string{"kof.kof-collectors": "from: umbrella\n", "kof.kof-collectors.2": "from: mcs\n"} {
		got, err := os.ReadFile(filepath.Join(dir, "mgmt", sub, ValuesFile))
		if err != nil || string(got) != want {
			t.Errorf("%s/%s = %q (%v), want %q", sub, ValuesFile, got, err, want)
		}
	}
}

// TestCheckUpgradesFailsOnADowngrade: a chain offering a template of a higher chart version an "upgrade" to a lower
// one (kof-storage-2-1-0, left by a rollback, to kof-storage-2-0-0) is a finding of the upgrades check.
func TestCheckUpgradesFailsOnADowngrade(t *testing.T) {
	newer := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
		"metadata": map[string]any{"name": "kof-storage-2-1-0", "namespace": ns},
		"spec": map[string]any{"helm": map[string]any{"chartSpec": map[string]any{"chart": "kof-storage",
			"version": "2.1.0", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "kof-repo"}}}},
	}}
	f, err := Render(context.Background(), Options{ChartsDir: chartsDir, Clusters: []*unstructured.Unstructured{
		clusterTemplate("aws-standalone"), regional("r1", "us-east-2"), newer}})
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(f, "mgmt", CheckUpgrades); len(got) != 0 {
		t.Fatalf("the chart offers the newer template an upgrade: %v", got)
	}
	var chain *unstructured.Unstructured
	for _, o := range f.Cluster("mgmt").Service("kof-mothership").Objects.OfKind("ServiceTemplateChain") {
		if o.GetName() == "kof-storage-2-0-0" {
			chain = o
		}
	}
	if chain == nil {
		t.Fatal("no ServiceTemplateChain kof-storage-2-0-0")
	}
	supported := []any{
		map[string]any{"name": "kof-storage-2-0-0"},
		map[string]any{"name": "kof-storage-2-1-0", "availableUpgrades": []any{
			map[string]any{"name": "kof-storage-2-0-0", "version": "2.0.0"}}},
	}
	if err := unstructured.SetNestedSlice(chain.Object, supported, "spec", "supportedTemplates"); err != nil {
		t.Fatal(err)
	}
	f.Check()
	wantFinding(t, f, "mgmt", CheckUpgrades, "upgrade from ServiceTemplate kof-storage-2-1-0 (chart version 2.1.0) to "+
		"version 2.0.0 is not an upgrade")
}

// TestChartWideBadNamesAreFindings: a chart-wide value the API server would reject (kof-storage.values.gateway.name
// "Not A Name", which names every regional's Gateway) is a validation finding of each regional's kof-storage at
// metadata.name, with apimachinery's message (regression: exit 0, the Gateway named `Not A Name`).
func TestChartWideBadNamesAreFindings(t *testing.T) {
	v, err := validate.New()
	if err != nil {
		t.Fatal(err)
	}
	f := renderFleet(t, Options{Validator: v, Values: map[string]any{"kof-storage": map[string]any{"values": map[string]any{
		"gateway": map[string]any{"name": "Not A Name"}}}},
		Clusters: []*unstructured.Unstructured{clusterTemplate("aws-standalone"), regional("r1", "us-east-2")}})
	s := f.Cluster("r1").Service("kof-storage")
	if s == nil {
		t.Fatal("r1 has no kof-storage")
	}
	found := false
	for _, fd := range s.Findings {
		if fd.Object.Kind == "Gateway" && fd.Path == "metadata.name" &&
			strings.Contains(fd.Message, `Invalid value "Not A Name": a lowercase RFC 1123 subdomain`) {
			found = true
		}
	}
	if !found {
		t.Errorf("kof-storage findings %v, want the Gateway's metadata.name", s.Findings)
	}
}
