package validate

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kof.dev/kof/chartlib/manifest"
)

// parse reads YAML documents into a Set with source "test.yaml".
func parse(t *testing.T, docs string) *manifest.Set {
	t.Helper()
	objs, err := manifest.ParseDocuments("test.yaml", []byte(docs))
	if err != nil {
		t.Fatal(err)
	}
	return manifest.New(objs...)
}

func validator(t *testing.T) *Validator {
	t.Helper()
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// brief reduces findings to `path: first words` for comparisons.
func paths(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Object.Kind+" "+f.Path)
	}
	return out
}

func TestValidObjectsPass(t *testing.T) {
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := parse(t, string(data))
	if set.Len() != 15 {
		t.Fatalf("parsed %d objects, want 15", set.Len())
	}
	if fs := validator(t).Set(set); len(fs) != 0 {
		t.Errorf("valid objects got findings:\n%v", fs)
	}
}

func TestVMClusterUnknownSpecField(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: operator.victoriametrics.com/v1beta1
kind: VMCluster
metadata: {name: c, namespace: kof}
spec:
  retentionPeriod: "30d"
  vmstorage:
    replicaCont: 2
`))
	if len(fs) != 1 {
		t.Fatalf("findings = %v, want one", fs)
	}
	f := fs[0]
	// The field's type names the field meant (regression: only `unknown field "spec.vmstorage.replicaCont"`).
	if f.Path != "spec.vmstorage.replicaCont" || f.Message != `unknown field "vmstorage.replicaCont"; did you mean `+
		`replicaCount?` {
		t.Errorf("finding = %+v, want spec.vmstorage.replicaCont unknown field; did you mean replicaCount?", f)
	}
	if want := "test.yaml: VMCluster.operator.victoriametrics.com kof/c: spec.vmstorage.replicaCont: "; !strings.HasPrefix(f.String(), want) {
		t.Errorf("String() = %q, want prefix %q", f.String(), want)
	}
}

func TestUnknownAndWrongTypedFields(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: kof, labelz: {}}
data: {k: v}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: kof}
spec:
  replicas: "two"
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: ci}
spec:
  acme:
    emial: x@example.com
    server: https://acme.example.com
    privateKeySecretRef: {name: k}
`))
	want := []string{"ConfigMap metadata.labelz", "Deployment spec.replicas", "ClusterIssuer spec.acme.emial"}
	if diff := cmp.Diff(want, paths(fs)); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%v", diff, fs)
	}
}

func TestHelmReleaseRules(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: both, namespace: kof}
spec:
  interval: 10m
  chartRef: {kind: HelmChart, name: x}
  chart: {spec: {chart: x, sourceRef: {kind: HelmRepository, name: r}}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: neither, namespace: kof}
spec:
  interval: 0s
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: badduration, namespace: kof}
spec:
  interval: ten minutes
  chartRef: {kind: HelmChart, name: x}
`))
	got := map[string][]string{}
	for _, f := range fs {
		got[f.Object.Name] = append(got[f.Object.Name], f.Path)
	}
	want := map[string][]string{
		"both":        {"spec"},
		"neither":     {"spec", "spec.interval"},
		"badduration": {"spec.interval"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%v", diff, fs)
	}
}

func TestMCSEmptySelectorFails(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: k0rdent.mirantis.com/v1beta1
kind: MultiClusterService
metadata: {name: all}
spec:
  clusterSelector: {}
  serviceSpec:
    services: [{name: a, namespace: kof, template: t}]
`))
	if diff := cmp.Diff([]string{"MultiClusterService spec.clusterSelector"}, paths(fs)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if !strings.Contains(fs[0].Message, "matches every cluster") {
		t.Errorf("message = %q", fs[0].Message)
	}
}

func TestServiceDependsOn(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: k0rdent.mirantis.com/v1beta1
kind: MultiClusterService
metadata: {name: cyc}
spec:
  clusterSelector: {matchLabels: {a: b}}
  serviceSpec:
    services:
      - {name: a, namespace: kof, template: t, dependsOn: [{name: c, namespace: kof}]}
      - {name: b, namespace: kof, template: t, dependsOn: [{name: a, namespace: kof}]}
      - {name: c, namespace: kof, template: t, dependsOn: [{name: b, namespace: kof}, {name: ghost, namespace: kof}]}
`))
	if diff := cmp.Diff([]string{
		"MultiClusterService spec.serviceSpec.services[2].dependsOn[1]",
		"MultiClusterService spec.serviceSpec.services",
	}, paths(fs)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s\n%v", diff, fs)
	}
	if !strings.Contains(fs[0].Message, "kof/ghost") {
		t.Errorf("missing dependency message = %q", fs[0].Message)
	}
	if want := "kof/a -> kof/c -> kof/b -> kof/a"; !strings.Contains(fs[1].Message, want) {
		t.Errorf("cycle message = %q, want %q", fs[1].Message, want)
	}
}

func TestMCSDependsOnCycleAcrossObjects(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: k0rdent.mirantis.com/v1beta1
kind: MultiClusterService
metadata: {name: one}
spec: {clusterSelector: {matchLabels: {a: b}}, dependsOn: [two]}
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: MultiClusterService
metadata: {name: two}
spec: {clusterSelector: {matchLabels: {a: b}}, dependsOn: [one, outside]}
`))
	if len(fs) != 1 || fs[0].Path != "spec.dependsOn" || !strings.Contains(fs[0].Message, "one -> two -> one") {
		t.Errorf("findings = %v", fs)
	}
}

func TestDuplicatesAndUnknownKinds(t *testing.T) {
	v := validator(t)
	docs := `
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: kof}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: kof}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`
	fs := v.Set(parse(t, docs))
	if diff := cmp.Diff([]string{"Widget ", "ConfigMap "}, paths(fs)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s\n%v", diff, fs)
	}
	if !strings.Contains(fs[0].Message, `"Widget.example.com"`) || !strings.Contains(fs[1].Message, "unique") {
		t.Errorf("messages: %q / %q", fs[0].Message, fs[1].Message)
	}
	v.Allow["Widget.example.com"] = "test kind without Go types"
	if fs := v.Set(parse(t, docs)); len(fs) != 1 {
		t.Errorf("with allow-list: %v, want only the duplicate", fs)
	}
}

func BenchmarkValidate(b *testing.B) {
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		b.Fatal(err)
	}
	objs, err := manifest.ParseDocuments("valid.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	set := manifest.New(objs...)
	v, err := New()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if fs := v.Set(set); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

// TestVictoriaMetricsKindsRejectUnknownSpecFields covers every VictoriaMetrics kind KOF renders: an unknown spec
// field fails with its path although the operator's own types only record it in Status.ParsingSpecError.
func TestVictoriaMetricsKindsRejectUnknownSpecFields(t *testing.T) {
	v := validator(t)
	for _, kind := range []struct{ apiVersion, kind string }{
		{"operator.victoriametrics.com/v1beta1", "VMCluster"},
		{"operator.victoriametrics.com/v1beta1", "VMAuth"},
		{"operator.victoriametrics.com/v1beta1", "VMUser"},
		{"operator.victoriametrics.com/v1beta1", "VMAlert"},
		{"operator.victoriametrics.com/v1beta1", "VMAlertmanager"},
		{"operator.victoriametrics.com/v1beta1", "VMRule"},
		{"operator.victoriametrics.com/v1", "VLCluster"},
		{"operator.victoriametrics.com/v1", "VTCluster"},
	} {
		t.Run(kind.kind, func(t *testing.T) {
			doc := "apiVersion: " + kind.apiVersion + "\nkind: " + kind.kind +
				"\nmetadata: {name: x, namespace: kof}\nspec:\n  bogusField: 1\n"
			fs := v.Set(parse(t, doc))
			if len(fs) != 1 || fs[0].Path != "spec.bogusField" {
				t.Errorf("findings = %v, want one at spec.bogusField", fs)
			}
		})
	}
}

// TestNamesAsTheAPIServerValidatesThem: names the API server rejects are findings at their path with apimachinery's
// message: a Gateway named `Not A Name`, a volume claim template's storageClassName `Fast_Class!`, an HTTPRoute
// solver's parentRef, an issuerRef, a secretKeyRef, labels and a ConfigMap key; templated names are left alone.
func TestNamesAsTheAPIServerValidatesThem(t *testing.T) {
	fs := validator(t).Set(parse(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: Not A Name, namespace: kof, labels: {"bad key!": x}}
spec:
  gatewayClassName: eg
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, namespace: kof}
spec:
  selector: {matchLabels: {a: b}}
  serviceName: s
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
        - name: c
          image: i
          env:
            - name: P
              valueFrom: {secretKeyRef: {name: My_Secret, key: password}}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {storageClassName: Fast_Class!, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: letsencrypt}
spec:
  acme:
    server: https://acme.example.com/directory
    email: admin@example.com
    privateKeySecretRef: {name: "{{ .Cluster.metadata.name }}-key"}
    solvers:
      - http01:
          gatewayHTTPRoute:
            parentRefs: [{name: Not A Name, namespace: kof, kind: Gateway}]
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: c, namespace: kof}
spec:
  secretName: c-tls
  dnsNames: [a.example.com]
  issuerRef: {name: Bad Issuer, kind: ClusterIssuer}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: kof}
data: {"ok.yaml": "", "not/ok": ""}
`))
	got := map[string]string{}
	for _, f := range fs {
		got[f.Object.Kind+" "+f.Path] = f.Message
	}
	for path, want := range map[string]string{
		"Gateway metadata.name":   `Invalid value "Not A Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters`,
		"Gateway metadata.labels": `name part must consist of alphanumeric characters`,
		"StatefulSet spec.volumeClaimTemplates[0].spec.storageClassName":                  `Invalid value "Fast_Class!": a lowercase RFC 1123 subdomain`,
		"StatefulSet spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name": `Invalid value "My_Secret"`,
		"ClusterIssuer spec.acme.solvers[0].http01.gatewayHTTPRoute.parentRefs[0].name":   `Invalid value "Not A Name"`,
		"Certificate spec.issuerRef.name":                                                 `Invalid value "Bad Issuer"`,
		"ConfigMap data[not/ok]":                                                          `a valid config key must consist of alphanumeric characters`,
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s: finding %q, want one containing %q", path, got[path], want)
		}
	}
	if len(got) != 7 {
		t.Errorf("findings at %d paths, want 7:\n%v", len(got), fs)
	}
}
