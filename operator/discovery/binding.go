package discovery

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/endpoints"
)

// ErrNoRegional is returned (wrapped) by FindRegional when no rule binds a child to a regional cluster.
var errNoRegional = errors.New("no regional cluster")

// IsNoRegional reports whether err says that a child has no regional cluster.
func IsNoRegional(err error) bool { return errors.Is(err, errNoRegional) }

// Ref names a regional cluster.
type Ref struct {
	Name, Namespace string
}

// ExplicitRegional returns the regional named by the child's labels `k0rdent.mirantis.com/kof-regional-cluster-name`
// and `...-namespace` (namespace defaults to the child's), and whether the name label is set.
func ExplicitRegional(child Cluster) (Ref, bool) {
	name := child.Labels[kofv1.RegionalClusterNameLabel]
	if name == "" {
		return Ref{}, false
	}
	ns := child.Labels[kofv1.RegionalClusterNamespaceLabel]
	if ns == "" {
		ns = child.Namespace
	}
	return Ref{Name: name, Namespace: ns}, true
}

// SameLocation reports whether a and b run on one known cloud in one non-empty location (aws region, azure location,
// openstack region, vsphere datacenter).
func SameLocation(a, b Cluster) bool {
	return a.Cloud != "" && a.Cloud == b.Cloud && !a.Location.IsZero() && a.Location == b.Location
}

// FindRegional returns the regional cluster a child writes to: the one its labels name (ExplicitRegional), else a
// regional on the same cloud and location, preferring the child's namespace and then the smallest `namespace/name`
// so that the choice is stable. regionals may hold any clusters; only those with role regional count. When the
// labels name a regional that is not in regionals, or no rule applies, the error (IsNoRegional) names the labels to
// set.
func FindRegional(child Cluster, regionals []Cluster) (Cluster, error) {
	if ref, ok := ExplicitRegional(child); ok {
		for _, r := range regionals {
			if r.Role == kofv1.RoleRegional && r.Name == ref.Name && r.Namespace == ref.Namespace {
				return r, nil
			}
		}
		for _, r := range regionals {
			if r.Name == ref.Name && r.Namespace == ref.Namespace {
				return Cluster{}, fmt.Errorf("%w: cluster %s/%s named by label %s exists but its role is %q, not %q; "+
					"name a regional cluster or set label %s: %s on it", errNoRegional, ref.Namespace, ref.Name,
					kofv1.RegionalClusterNameLabel, r.Role, kofv1.RoleRegional, kofv1.ClusterRoleLabel, kofv1.RoleRegional)
			}
		}
		return Cluster{}, fmt.Errorf("%w: regional cluster %s/%s named by label %s not found; set it to one of %s "+
			"(and %s to its namespace), or remove it to bind by cloud and location", errNoRegional, ref.Namespace,
			ref.Name, kofv1.RegionalClusterNameLabel, regionalKeys(regionals), kofv1.RegionalClusterNamespaceLabel)
	}
	var found []Cluster
	for _, r := range regionals {
		if r.Role == kofv1.RoleRegional && SameLocation(child, r) {
			found = append(found, r)
		}
	}
	if len(found) == 0 && child.Cloud == "" {
		return Cluster{}, fmt.Errorf("%w for %s: its cloud is unknown: %s; or set labels %s (and %s if the regional "+
			"is in another namespace)", errNoRegional, child.Key(), unknownCloud(child),
			kofv1.RegionalClusterNameLabel, kofv1.RegionalClusterNamespaceLabel)
	}
	if len(found) == 0 {
		return Cluster{}, fmt.Errorf("%w for %s: no regional cluster on the same cloud (%q) and location; set labels %s "+
			"(and %s if the regional is in another namespace)", errNoRegional, child.Key(), child.Cloud,
			kofv1.RegionalClusterNameLabel, kofv1.RegionalClusterNamespaceLabel)
	}
	sort.Slice(found, func(i, j int) bool {
		ni, nj := found[i].Namespace == child.Namespace, found[j].Namespace == child.Namespace
		if ni != nj {
			return ni
		}
		return found[i].Key() < found[j].Key()
	})
	return found[0], nil
}

// regionalKeys lists the `namespace/name` of every cluster of role regional in cs, sorted and each once, or says
// there is none.
func regionalKeys(cs []Cluster) string {
	var keys []string
	for _, c := range cs {
		if c.Role == kofv1.RoleRegional {
			keys = append(keys, c.Key())
		}
	}
	if len(keys) == 0 {
		return "the regional clusters (there is none yet)"
	}
	sort.Strings(keys)
	return "the regional clusters [" + strings.Join(slices.Compact(keys), " ") + "]"
}

// unknownCloud says why the cloud of c is unknown, naming spec.template.
func unknownCloud(c Cluster) string {
	switch {
	case c.Template == "":
		return "spec.template: missing; name the ClusterTemplate of the cluster (its cloud binds it to a regional cluster)"
	case !c.TemplateFound:
		return fmt.Sprintf("spec.template: ClusterTemplate %q not found in %s; create it (or, for kof render, add it to "+
			"the --clusters file)", c.Template, c.Namespace)
	default:
		return fmt.Sprintf("spec.template: ClusterTemplate %s/%s lists no infrastructure-<cloud> provider in "+
			"status.providers", c.Namespace, c.Template)
	}
}

// ConfigMap data keys of the regional and child ConfigMaps (docs/contract.md, "ConfigMap data keys (17)").
const (
	KeyRegionalClusterName      = "regional_cluster_name"
	KeyRegionalClusterNamespace = "regional_cluster_namespace"
	KeyRegionalClusterCloud     = "regional_cluster_cloud"
	KeyIstioRole                = "istio_role"
	KeyHTTPConfig               = "kof_http_config"
	KeyReadMetrics              = "read_metrics_endpoint"
	KeyWriteMetrics             = "write_metrics_endpoint"
	KeyReadLogs                 = "read_logs_endpoint"
	KeyWriteLogs                = "write_logs_endpoint"
	KeyReadAuditLogs            = "read_audit_logs_endpoint"
	KeyWriteAuditLogs           = "write_audit_logs_endpoint"
	KeyReadTraces               = "read_traces_endpoint"
	KeyWriteTraces              = "write_traces_endpoint"
	KeyAWSRegion                = "aws_region"
	KeyAzureLocation            = "azure_location"
	KeyOpenStackRegion          = "openstack_region"
	KeyVSphereDatacenter        = "vsphere_datacenter"
)

// HTTPConfigError is a malformed `k0rdent.mirantis.com/kof-http-config` annotation of a regional cluster. Its
// settings are kept as they were (the ConfigMap's last valid `kof_http_config`, outputs.Regional.KeepHTTPConfig),
// so a typo never turns TLS verification back on or drops the credentials of promxy and the storage connections.
type HTTPConfigError struct{ Err error }

// Error says what is wrong and that the last valid settings are kept.
func (e *HTTPConfigError) Error() string {
	return e.Err.Error() + "; promxy and the storage connections keep the last valid settings (the defaults when " +
		"there were none) until it is fixed"
}

// Unwrap returns the parse error.
func (e *HTTPConfigError) Unwrap() error { return e.Err }

// RegionalData returns the 17-key data of regional cluster r's ConfigMap: its identity, cloud, location, Istio role,
// canonical `kof-http-config` and the endpoints of endpoints.Regional. A malformed setting whose default still works
// (an endpoint override with a domain default) is left out, its default used, and returned among the ignored errors
// naming the annotation; a malformed `kof-http-config` leaves the key empty and is returned as an *HTTPConfigError
// (the caller keeps the last valid value); the error is for a cluster left without endpoints.
func RegionalData(r Cluster) (map[string]string, []error, error) {
	set, ignored, err := endpoints.Regional(endpoints.Input{Cluster: r.Name, Annotations: r.Annotations, Istio: r.Istio()})
	if err != nil {
		return nil, nil, err
	}
	hcJSON := ""
	if hc, err := endpoints.ParseHTTPConfig(r.Annotations[kofv1.HTTPConfigAnnotation]); err != nil {
		ignored = append(ignored, &HTTPConfigError{Err: err})
	} else if hcJSON, err = endpoints.FormatHTTPConfig(hc); err != nil {
		return nil, nil, err
	}
	return data(Ref{Name: r.Name, Namespace: r.Namespace}, r.Cloud, r.Labels[kofv1.IstioRoleLabel], hcJSON,
		r.Location, set), ignored, nil
}

// RegionlessData returns the data of the regionless ConfigMap of management cluster ref: the `https://vmauth.<domain>/...`
// URLs, read and write, the only ones a child cluster can reach (each child's ChildConfig copies them; OpenCost on a
// child reads its `read_metrics_endpoint`). Readers on the management cluster itself do not take the read URLs from
// this data: they use the in-cluster URLs (outputs.ParseRegionalConfigMap; docs/contract.md, "Endpoints").
func RegionlessData(ref Ref, domain string) map[string]string {
	return data(ref, "", "", "", Location{}, endpoints.Domain(domain))
}

func data(ref Ref, cloud, istioRole, httpConfig string, loc Location, s endpoints.Set) map[string]string {
	return map[string]string{
		KeyRegionalClusterName:      ref.Name,
		KeyRegionalClusterNamespace: ref.Namespace,
		KeyRegionalClusterCloud:     cloud,
		KeyIstioRole:                istioRole,
		KeyHTTPConfig:               httpConfig,
		KeyReadMetrics:              s.ReadMetrics,
		KeyWriteMetrics:             s.WriteMetrics,
		KeyReadLogs:                 s.ReadLogs,
		KeyWriteLogs:                s.WriteLogs,
		KeyReadAuditLogs:            s.ReadAuditLogs,
		KeyWriteAuditLogs:           s.WriteAuditLogs,
		KeyReadTraces:               s.ReadTraces,
		KeyWriteTraces:              s.WriteTraces,
		KeyAWSRegion:                loc.AWSRegion,
		KeyAzureLocation:            loc.AzureLocation,
		KeyOpenStackRegion:          loc.OpenStackRegion,
		KeyVSphereDatacenter:        loc.VSphereDatacenter,
	}
}

// SetFromData returns the endpoints stored in ConfigMap data (the inverse of the endpoint keys of RegionalData).
func SetFromData(d map[string]string) endpoints.Set {
	return endpoints.Set{
		ReadMetrics: d[KeyReadMetrics], WriteMetrics: d[KeyWriteMetrics],
		ReadLogs: d[KeyReadLogs], WriteLogs: d[KeyWriteLogs],
		ReadAuditLogs: d[KeyReadAuditLogs], WriteAuditLogs: d[KeyWriteAuditLogs],
		ReadTraces: d[KeyReadTraces], WriteTraces: d[KeyWriteTraces],
	}
}
