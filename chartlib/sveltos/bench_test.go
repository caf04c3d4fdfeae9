package sveltos

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// collectorsValues is shaped like a child cluster's collectors service values: annotation overrides read with
// dig and fromYaml, endpoints and credentials from templateResourceRefs, flow YAML output.
const collectorsValues = `{{- $cluster := .Cluster }}
{{- $annotations := dig "metadata" "annotations" dict $cluster }}
{{- $config := getResource "ChildConfig" }}
{{- $override := fromYaml (dig "k0rdent.mirantis.com/kof-collectors-values" "{}" $annotations) }}
{{- if hasKey $override "Error" }}{{ fail (printf "annotation k0rdent.mirantis.com/kof-collectors-values: %s" (get $override "Error")) }}{{ end }}
global:
  clusterName: {{ $cluster.metadata.name }}
  clusterNamespace: {{ $cluster.metadata.namespace }}
  tenant: {{ dig "metadata" "labels" "k0rdent.mirantis.com/kof-tenant-id" "PLATFORM" $cluster | quote }}
opentelemetry-kube-stack:
  clusterName: {{ $cluster.metadata.name }}
  defaultCRConfig:
    env:
      - name: KOF_REGIONAL_CLUSTER
        value: {{ $config.data.regional_cluster_name | quote }}
    config:
      exporters:
        prometheusremotewrite:
          endpoint: {{ $config.data.write_metrics_endpoint | quote }}
          tls:
            insecure_skip_verify: {{ dig "metadata" "annotations" "k0rdent.mirantis.com/kof-insecure" "false" $cluster }}
        otlphttp/logs:
          logs_endpoint: {{ printf "https://vmauth.%s/vli/insert/opentelemetry/v1/logs" (dig "k0rdent.mirantis.com/kof-regional-domain" "regional.example.com" $annotations) | quote }}
        otlphttp/traces:
          traces_endpoint: {{ printf "https://vmauth.%s/vti/insert/opentelemetry/v1/traces" (dig "k0rdent.mirantis.com/kof-regional-domain" "regional.example.com" $annotations) | quote }}
      extensions:
        basicauth/metrics:
          client_auth:
            username: {{ getField "Creds" "data.username" | b64dec | quote }}
            password: {{ getField "Creds" "data.password" | b64dec | quote }}
  overrides: {{ $override | toJson }}
kcm:
  labels: {{ $cluster.metadata.labels | toJson }}
`

// BenchmarkInstantiate measures one child cluster's collectors values in double-pass mode, the cost the
// fleet renderer pays per cluster and service.
func BenchmarkInstantiate(b *testing.B) {
	in := input(b, collectorsValues, DoublePass)
	in.TemplateResourceRefs = append(in.TemplateResourceRefs, TemplateResourceRef{Identifier: "Creds",
		Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "kof-vmuser-creds-{{ .ClusterName }}"}})
	res, err := Instantiate(in)
	if err != nil {
		b.Fatal(err)
	}
	global, _ := res.Values["global"].(map[string]any)
	if global["clusterName"] != "child-1" || global["tenant"] != "PLATFORM" {
		b.Fatalf("values %v", res.Values)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Instantiate(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLint measures linting the same values text.
func BenchmarkLint(b *testing.B) {
	if f := Lint(collectorsValues); len(f) != 0 {
		b.Fatalf("findings %v", f)
	}
	for b.Loop() {
		Lint(collectorsValues)
	}
}

// BenchmarkInstantiateFleet instantiates the collectors values for a fleet of 1 management, 10 regional and
// 200 child clusters (one ChildConfig and one credentials Secret each), the layer-2 share of `kof render`.
func BenchmarkInstantiateFleet(b *testing.B) {
	var inputs []Input
	var objects []*unstructured.Unstructured
	add := func(name, role string) {
		cd := obj(b, fmt.Sprintf(`
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata:
  name: %s
  namespace: kcm-system
  labels: {k0rdent.mirantis.com/kof-cluster-role: %s}
spec:
  config:
    clusterAnnotations: {k0rdent.mirantis.com/kof-regional-domain: %s.kof.example.com}
`, name, role, name))
		cluster, err := ClusterFromDeployment(cd, KindCAPI)
		if err != nil {
			b.Fatal(err)
		}
		cm := childConfig(b)
		cm.SetName("kof-cluster-config-" + name)
		secret := vmuserSecret(b)
		secret.SetName("kof-vmuser-creds-" + name)
		objects = append(objects, cm, secret)
		inputs = append(inputs, Input{Profile: "kof-" + role + "-cluster", Service: "kof-collectors", Cluster: cluster,
			Values: collectorsValues, Objects: nil, TemplateResourceRefs: []TemplateResourceRef{childConfigRef(),
				{Identifier: "Creds", Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "kof-vmuser-creds-{{ .ClusterName }}"}}}})
	}
	add("mgmt", "child")
	for i := range 10 {
		add(fmt.Sprintf("regional-%d", i), "regional")
	}
	for i := range 200 {
		add(fmt.Sprintf("child-%03d", i), "child")
	}
	for i := range inputs {
		inputs[i].Objects = objects
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range inputs {
			if _, err := Instantiate(in); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(inputs)), "clusters/op")
}
