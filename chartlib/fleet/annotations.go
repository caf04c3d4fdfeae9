package fleet

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/chartlib/values"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/endpoints"
)

// Kind is what a per-cluster annotation's value must be.
type Kind string

// The kinds of KOF's per-cluster annotations (docs/annotations.md, "Kinds").
const (
	// KindURL is an absolute http(s) URL with a host (endpoints.CheckURL).
	KindURL Kind = "an absolute http(s) URL"
	// KindDomain is a DNS-1123 subdomain used as a base domain (apimachinery validation.IsDNS1123Subdomain).
	KindDomain Kind = "a DNS-1123 subdomain (a domain name)"
	// KindName is the name of a Kubernetes object, a DNS-1123 subdomain (apimachinery
	// validation.IsDNS1123Subdomain: metadata.name of a Gateway, spec.storageClassName of a volume claim).
	KindName Kind = "a DNS-1123 subdomain (an object name)"
	// KindNamespace is a namespace name, a DNS-1123 label (apimachinery validation.IsDNS1123Label).
	KindNamespace Kind = "a DNS-1123 label (a namespace name)"
	// KindEmail is one bare e-mail address (net/mail, RFC 5322 addr-spec), as ACME registration needs.
	KindEmail Kind = "an e-mail address"
	// KindHTTPConfig is the JSON of promxy's HTTP client settings, dial_timeout a positive Go duration
	// (endpoints.ParseHTTPConfig).
	KindHTTPConfig Kind = "a JSON HTTP client configuration with a duration dial_timeout"
	// KindValues is a YAML or JSON mapping of a service's values.
	KindValues Kind = "a YAML or JSON mapping of values"
)

// Annotation is one annotation KOF reads from a ClusterDeployment, with the kind of its value and an example value.
type Annotation struct {
	Key     string
	Kind    Kind
	Example string
}

// Annotations are every annotation KOF reads from a ClusterDeployment (docs/annotations.md, "Annotations"): the
// operator's (operator/api/v1beta1) and those the layer-2 templates of kof-regional and kof-child read. A key that
// a chart reads and this table lacks fails TestEveryReadAnnotationHasAKind.
var Annotations = []Annotation{
	{kofv1.RegionalDomainAnnotation, KindDomain, "regional-1.example.com"},
	{kofv1.CertEmailAnnotation, KindEmail, "admin@example.com"},
	{kofv1.HTTPConfigAnnotation, KindHTTPConfig, `{"dial_timeout":"5s","tls_config":{"insecure_skip_verify":false}}`},
	{kofv1.WriteMetricsEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.WriteMetrics })},
	{kofv1.ReadMetricsEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.ReadMetrics })},
	{kofv1.WriteLogsEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.WriteLogs })},
	{kofv1.ReadLogsEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.ReadLogs })},
	{kofv1.WriteAuditLogsEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.WriteAuditLogs })},
	{kofv1.ReadAuditLogsEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.ReadAuditLogs })},
	{kofv1.WriteTracesEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.WriteTraces })},
	{kofv1.ReadTracesEndpointAnnotation, KindURL, exampleURL(func(s endpoints.Set) string { return s.ReadTraces })},
	{StorageClassAnnotation, KindName, "standard"},
	{GatewayNameAnnotation, KindName, "storage-gateway"},
	{GatewayNamespaceAnnotation, KindNamespace, "kof"},
	{StorageValuesAnnotation, KindValues, `{"victoriametrics":{"vmcluster":{"spec":{"retentionPeriod":"90d"}}}}`},
	{CollectorsValuesAnnotation, KindValues, `{"opentelemetry-kube-stack":{"clusterName":"renamed"}}`},
	{OperatorsValuesAnnotation, KindValues, `{"opentelemetry-operator":{"enabled":false}}`},
	{VictoriaMetricsOperatorValuesAnnotation, KindValues, `{"replicaCount":2}`},
	{EnvoyGatewayValuesAnnotation, KindValues, `{"deployment":{"replicas":2}}`},
	{IngressNginxValuesAnnotation, KindValues, `{"controller":{"replicaCount":2}}`},
	{KubeStateMetricsValuesAnnotation, KindValues, `{"replicas":2}`},
	{NodeExporterValuesAnnotation, KindValues, `{"hostNetwork":false}`},
	{OpenCostValuesAnnotation, KindValues, `{"opencost":{"exporter":{"replicas":1}}}`},
	{ExternalDNSValuesAnnotation, KindValues, `{"policy":"upsert-only"}`},
	{ExternalDNSProviderAnnotation, KindName, "cloudflare"},
	{ExternalDNSSecretAnnotation, KindName, "cloudflare-api-token"},
}

// exampleURL returns the URL get picks from the default endpoints of the domain regional-1.example.com.
func exampleURL(get func(endpoints.Set) string) string {
	return get(endpoints.Domain("regional-1.example.com"))
}

// LookupAnnotation returns the entry of Annotations for key.
func LookupAnnotation(key string) (Annotation, bool) {
	for _, a := range Annotations {
		if a.Key == key {
			return a, true
		}
	}
	return Annotation{}, false
}

// Check returns nil when value is of a's kind, else an error naming the annotation, the value, what is wrong and an
// example: `annotation k0rdent.mirantis.com/kof-gateway-name: "Not A Name" is not a DNS-1123 subdomain (an object
// name): ...; for example k0rdent.mirantis.com/kof-gateway-name: "storage-gateway"`. The rules are apimachinery's
// (k8s.io/apimachinery/pkg/util/validation) for names, endpoints.CheckURL for URLs, endpoints.ParseHTTPConfig for
// the HTTP configuration and net/mail for e-mail addresses.
func (a Annotation) Check(value string) error {
	detail := a.problem(value)
	if detail == "" {
		return nil
	}
	return fmt.Errorf("annotation %s: %s is not %s: %s; for example %s: %s", a.Key, strconv.Quote(value), a.Kind,
		detail, a.Key, strconv.Quote(a.Example))
}

// problem returns what is wrong with value for a's kind, "" when nothing.
func (a Annotation) problem(value string) string {
	switch a.Kind {
	case KindURL:
		if err := endpoints.CheckURL(value); err != nil {
			return err.Error()
		}
	case KindDomain, KindName:
		return strings.Join(validation.IsDNS1123Subdomain(value), "; ")
	case KindNamespace:
		return strings.Join(validation.IsDNS1123Label(value), "; ")
	case KindEmail:
		addr, err := mail.ParseAddress(value)
		if err != nil {
			return err.Error()
		}
		if addr.Address != value {
			return "want the bare address, without a display name or angle brackets"
		}
	case KindHTTPConfig:
		if _, err := endpoints.ParseHTTPConfig(value); err != nil {
			return strings.TrimPrefix(err.Error(), "annotation "+a.Key+": ")
		}
	case KindValues:
		return valuesProblem(value)
	}
	return ""
}

// valuesProblem returns what is wrong with a values annotation's text: not YAML, or YAML that is not a mapping.
func valuesProblem(value string) string {
	var doc any
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return err.Error()
	}
	switch doc.(type) {
	case map[string]any, nil:
		return ""
	case []any:
		return "the value is a list, not a mapping"
	}
	return "the value is a scalar, not a mapping"
}

// readAnnotations returns the entries of Annotations that a service's layer-2 values text reads: those whose key it
// names as a string literal (the chart's data for the service, files/_head.tpl and the service's template).
func readAnnotations(valuesText string) []Annotation {
	var out []Annotation
	for _, a := range Annotations {
		if strings.Contains(valuesText, strconv.Quote(a.Key)) {
			out = append(out, a)
		}
	}
	return out
}

// checkAnnotations returns one error for each annotation of read set on the cluster (ann: metadata.annotations over
// spec.config.clusterAnnotations) whose value is not of its kind, each naming the cluster `namespace/name`.
func checkAnnotations(cluster string, read []Annotation, ann map[string]string) []error {
	var errs []error
	for _, a := range read {
		v, ok := ann[a.Key]
		if !ok {
			continue
		}
		if err := a.Check(v); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", cluster, err))
		}
	}
	return errs
}

// checkValuesAnnotations returns one error for each unknown key or wrong type in the values annotations of read that
// are set on the cluster (ann), checked against the values schema of chart (schemaJSON) as the umbrella's values are
// (values.CheckOverlay): each names the cluster, the annotation and the values path, with a did-you-mean.
func checkValuesAnnotations(cluster, chart string, schemaJSON []byte, read []Annotation, ann map[string]string) []error {
	var errs []error
	for _, a := range read {
		text, ok := ann[a.Key]
		if a.Kind != KindValues || !ok {
			continue
		}
		var vals map[string]any
		if yaml.Unmarshal([]byte(text), &vals) != nil {
			continue // reported by checkAnnotations
		}
		findings, err := values.CheckOverlay(schemaJSON, "", vals)
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: annotation %s: chart %s: %w", cluster, a.Key, chart, err))
			continue
		}
		for _, f := range findings {
			errs = append(errs, fmt.Errorf("cluster %s: annotation %s: %s (values of chart %s)", cluster, a.Key, f,
				chart))
		}
	}
	return errs
}
