// Package endpoints is the only Go definition of KOF's storage URLs (docs/contract.md, "Endpoints"): the write and read
// URLs of metrics, logs, audit logs and traces of a regional cluster, their Istio and regionless in-cluster variants,
// and the override annotations that replace them. It works on plain data (names and annotation maps) so that the
// operator and the offline fleet renderer derive the same URLs.
package endpoints

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
)

// Paths of the VMAuth routes each signal uses (docs/contract.md, "Endpoints").
const (
	WriteMetricsPath   = "/vm/insert/0/prometheus/api/v1/write"
	ReadMetricsPath    = "/vm/select/0/prometheus"
	WriteLogsPath      = "/vli/insert/opentelemetry/v1/logs"
	ReadLogsPath       = "/vls"
	WriteAuditLogsPath = "/vlai/insert/opentelemetry/v1/logs"
	ReadAuditLogsPath  = "/vlas"
	WriteTracesPath    = "/vti/insert/opentelemetry/v1/traces"
	ReadTracesPath     = "/vts"
)

const (
	// VMAuthPort is the port of VMAuth on storage clusters.
	VMAuthPort = 8427
	// InClusterHost is the regionless in-cluster VMAuth address on the management cluster.
	InClusterHost = "vmauth-cluster:8427"
	// domainHostPrefix is the host label of VMAuth below a regional domain.
	domainHostPrefix = "vmauth."
)

// Set holds the eight storage URLs of one regional cluster. An empty field means "not published" (Istio regionals
// publish read URLs only).
type Set struct {
	WriteMetrics   string
	ReadMetrics    string
	WriteLogs      string
	ReadLogs       string
	WriteAuditLogs string
	ReadAuditLogs  string
	WriteTraces    string
	ReadTraces     string
}

// field binds one Set field to its override annotation and its route path.
type field struct {
	annotation string
	path       string
	get        func(*Set) *string
}

// fields lists the eight URLs in a fixed order (writes then reads per signal).
func fields() []field {
	return []field{
		{kofv1.WriteMetricsEndpointAnnotation, WriteMetricsPath, func(s *Set) *string { return &s.WriteMetrics }},
		{kofv1.ReadMetricsEndpointAnnotation, ReadMetricsPath, func(s *Set) *string { return &s.ReadMetrics }},
		{kofv1.WriteLogsEndpointAnnotation, WriteLogsPath, func(s *Set) *string { return &s.WriteLogs }},
		{kofv1.ReadLogsEndpointAnnotation, ReadLogsPath, func(s *Set) *string { return &s.ReadLogs }},
		{kofv1.WriteAuditLogsEndpointAnnotation, WriteAuditLogsPath, func(s *Set) *string { return &s.WriteAuditLogs }},
		{kofv1.ReadAuditLogsEndpointAnnotation, ReadAuditLogsPath, func(s *Set) *string { return &s.ReadAuditLogs }},
		{kofv1.WriteTracesEndpointAnnotation, WriteTracesPath, func(s *Set) *string { return &s.WriteTraces }},
		{kofv1.ReadTracesEndpointAnnotation, ReadTracesPath, func(s *Set) *string { return &s.ReadTraces }},
	}
}

// isRead reports whether a field is one of the read URLs.
func (f field) isRead() bool { return strings.Contains(f.annotation, "-read-") }

// withBase returns the Set whose every URL is base followed by the route path, base being `scheme://host`.
func withBase(base string) Set {
	var s Set
	for _, f := range fields() {
		*f.get(&s) = base + f.path
	}
	return s
}

// Domain returns the default URLs of a regional cluster with base domain d: `https://vmauth.<d>/...` for all eight.
func Domain(d string) Set { return withBase("https://" + domainHostPrefix + d) }

// Istio returns the in-mesh URLs of regional cluster c: `http://<names.IstioVMAuthService(c)>:8427/...` for all
// eight (`<c>-vmauth`, shortened with a hash when that is no DNS label, as kof-storage names the Service). Regional
// ConfigMaps publish only its read URLs (ReadOnly); children in Istio mode write to its write URLs.
func Istio(c string) Set {
	return withBase(fmt.Sprintf("http://%s:%d", names.IstioVMAuthService(c), VMAuthPort))
}

// InCluster returns the regionless in-cluster URLs on the management cluster: `http://vmauth-cluster:8427/...`.
func InCluster() Set { return withBase("http://" + InClusterHost) }

// ReadOnly returns s with the write URLs emptied.
func (s Set) ReadOnly() Set {
	out := s
	for _, f := range fields() {
		if !f.isRead() {
			*f.get(&out) = ""
		}
	}
	return out
}

// WithReads returns s with its read URLs replaced by those of r.
func (s Set) WithReads(r Set) Set {
	out := s
	for _, f := range fields() {
		if f.isRead() {
			*f.get(&out) = *f.get(&r)
		}
	}
	return out
}

// Override returns s with every URL whose override annotation is set in ann to a valid value replaced by that
// value. Each value must be an absolute http(s) URL with a host; an invalid one leaves the URL of s in place and
// gives one error naming the annotation key (docs/contract.md, "A malformed value is a clear error for that cluster
// alone").
func (s Set) Override(ann map[string]string) (Set, []error) {
	out := s
	var errs []error
	for _, f := range fields() {
		v, ok := ann[f.annotation]
		if !ok {
			continue
		}
		if err := CheckOverride(f.annotation, v); err != nil {
			errs = append(errs, err)
			continue
		}
		*f.get(&out) = v
	}
	return out, errs
}

// CheckOverride returns nil when value is an absolute http(s) URL with a host, else an error naming the endpoint
// override annotation and giving the URL of that annotation for the domain regional.example.com as an example. The
// regional and the child forms of the same mistake give the same message.
func CheckOverride(annotation, value string) error {
	err := CheckURL(value)
	if err == nil {
		return nil
	}
	example := Domain("regional.example.com")
	for _, f := range fields() {
		if f.annotation == annotation {
			return fmt.Errorf("annotation %s: %w; for example %s", annotation, err, *f.get(&example))
		}
	}
	return fmt.Errorf("annotation %s: %w", annotation, err)
}

// CheckURL returns an error unless u is an absolute http or https URL with a host.
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %w; set an absolute http:// or https:// URL with a host", u, err)
	}
	if (p.Scheme != kofv1.SchemeHTTP && p.Scheme != kofv1.SchemeHTTPS) || p.Host == "" {
		return fmt.Errorf("invalid URL %q: want an absolute http:// or https:// URL with a host", u)
	}
	return nil
}

// Input is what Regional needs to know about a regional cluster.
type Input struct {
	// Cluster is the regional cluster's name.
	Cluster string
	// Annotations are the cluster's annotations, merged by Merge.
	Annotations map[string]string
	// Istio is true when the cluster is an Istio mesh member.
	Istio bool
}

// Regional returns the URLs a regional cluster publishes: Istio read URLs for a mesh member, else the defaults of its
// `k0rdent.mirantis.com/kof-regional-domain` annotation; valid override annotations win in both cases. A malformed
// domain or override is ignored (its default stays) and returned among the ignored errors, each naming its
// annotation. The error is for a non-Istio cluster that is left without some URL (neither a valid domain nor the
// override): it names the annotations to set, and the ignored ones that would have given it.
func Regional(in Input) (Set, []error, error) {
	var (
		base    Set
		ignored []error
	)
	switch domain := strings.TrimSpace(in.Annotations[kofv1.RegionalDomainAnnotation]); {
	case in.Istio:
		base = Istio(in.Cluster).ReadOnly()
	case domain != "":
		if err := checkDomain(domain); err != nil {
			ignored = append(ignored, fmt.Errorf("annotation %s: %w", kofv1.RegionalDomainAnnotation, err))
		} else {
			base = Domain(domain)
		}
	}
	s, bad := base.Override(in.Annotations)
	ignored = append(ignored, bad...)
	if !in.Istio {
		if missing := s.missing(); len(missing) > 0 {
			msg := fmt.Sprintf("no storage endpoints: set annotation %s (or %s)", kofv1.RegionalDomainAnnotation,
				strings.Join(missing, ", "))
			for _, e := range ignored {
				msg += "; " + e.Error()
			}
			return Set{}, nil, errors.New(msg)
		}
	}
	return s, ignored, nil
}

// missing returns the override annotations of the empty URLs of s, sorted.
func (s Set) missing() []string {
	var out []string
	for _, f := range fields() {
		if *f.get(&s) == "" {
			out = append(out, f.annotation)
		}
	}
	sort.Strings(out)
	return out
}

// checkDomain returns an error unless d is a host name usable below `vmauth.`.
func checkDomain(d string) error {
	p, err := url.Parse("https://" + domainHostPrefix + d)
	if err != nil || p.Host != domainHostPrefix+d || strings.ContainsAny(d, "/?#@ ") {
		return fmt.Errorf("invalid domain %q; set a DNS name such as regional-1.example.com", d)
	}
	return nil
}

// Merge returns the annotations KOF reads from a ClusterDeployment: spec.config.clusterAnnotations overlaid by
// metadata.annotations (metadata wins; docs/contract.md, "Annotations on a ClusterDeployment"). Both inputs may be nil;
// the result is a new map.
func Merge(metadata, clusterAnnotations map[string]string) map[string]string {
	out := make(map[string]string, len(metadata)+len(clusterAnnotations))
	for k, v := range clusterAnnotations {
		out[k] = v
	}
	for k, v := range metadata {
		out[k] = v
	}
	return out
}

// Target is a read URL split the way promxy and VMStorageConnections need it.
type Target struct {
	// Scheme is http or https.
	Scheme string
	// Host is `host[:port]`.
	Host string
	// Path is the URL path, e.g. `/vm/select/0/prometheus`; "" when absent.
	Path string
}

// Split parses an absolute http(s) URL into a Target. The error explains what a valid URL looks like.
func Split(u string) (Target, error) {
	if err := CheckURL(u); err != nil {
		return Target{}, err
	}
	p, _ := url.Parse(u) // CheckURL parsed it already
	return Target{Scheme: p.Scheme, Host: p.Host, Path: strings.TrimSuffix(p.EscapedPath(), "/")}, nil
}
