package harness

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/names"
)

// endpointKeys are the eight endpoint keys of the operator's regional and child ConfigMaps (docs/contract.md,
// "ConfigMap data keys"), writes first.
func endpointKeys() []string {
	return []string{
		"write_metrics_endpoint", "write_logs_endpoint", "write_audit_logs_endpoint", "write_traces_endpoint",
		"read_metrics_endpoint", "read_logs_endpoint", "read_audit_logs_endpoint", "read_traces_endpoint",
	}
}

// Row is one line of the demo summary: what one cluster receives.
type Row struct {
	// Cluster is the cluster's output folder name, Role its KOF role (fleet.Role*).
	Cluster, Role string
	// Endpoints are the distinct storage origins (`scheme://host[:port]`) of the cluster's operator ConfigMap, in
	// endpointKeys order; empty when the cluster has none.
	Endpoints []string
	// Services are the release names the cluster receives, in delivery order.
	Services []string
	// Objects is the number of rendered objects.
	Objects int
	// Problems are the cluster's errors: render failures, validation findings, missing operator objects.
	Problems []string
	// KCM is what KCM reports of the cluster's services (KCMClusterState), "" when KCM does not run.
	KCM string
}

// Summarize turns a fleet render, the operator's live objects and WaitOperator's result into one Row per cluster
// of f, in f's order. Expected objects that were not found become problems of their cluster.
func Summarize(f *fleet.Fleet, operator []*unstructured.Unstructured, waited []Expected) []Row {
	rows := make([]Row, 0, len(f.Clusters))
	for _, c := range f.Clusters {
		r := Row{Cluster: c.Dir, Role: c.Role, Objects: c.ObjectCount(), Problems: c.Problems()}
		for _, s := range c.Services {
			r.Services = append(r.Services, s.Name)
		}
		if cm := clusterConfigMap(c, operator); cm != nil {
			r.Endpoints = origins(cm)
		}
		for _, e := range waited {
			if !e.Found && e.Cluster == c.Name {
				r.Problems = append(r.Problems, fmt.Sprintf("kof-operator made no %s", e))
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// clusterConfigMap returns the operator ConfigMap holding c's endpoints: `kof-<c>` of a regional cluster,
// `kof-cluster-config-<c>` of a child, the regionless ConfigMap for the management cluster; nil when absent.
func clusterConfigMap(c *fleet.Cluster, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" {
			continue
		}
		switch c.Role {
		case fleet.RoleRegional:
			if o.GetNamespace() == c.Namespace && o.GetName() == names.RegionalConfigMap(c.Name) {
				return o
			}
		case fleet.RoleChild:
			if o.GetNamespace() == c.Namespace && o.GetName() == names.ChildConfigMap(c.Name) {
				return o
			}
		case fleet.RoleManagement:
			if o.GetLabels()[kofv1.RegionlessLabel] == kofv1.TrueValue {
				return o
			}
		}
	}
	return nil
}

// origins returns the distinct `scheme://host` of the endpoint keys of cm, in endpointKeys order.
func origins(cm *unstructured.Unstructured) []string {
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	seen := map[string]bool{}
	var out []string
	for _, k := range endpointKeys() {
		u, err := url.Parse(data[k])
		if err != nil || u.Host == "" {
			continue
		}
		o := u.Scheme + "://" + u.Host
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// WriteTable writes rows as an aligned table (CLUSTER, ROLE, ENDPOINTS, SERVICES, OBJECTS, ERRORS), then what KCM
// reports of each cluster as `<cluster>: KCM: <state>` (rows with KCM set), then every problem as
// `<cluster>: <problem>`. It returns the first write error.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tROLE\tENDPOINTS\tSERVICES\tOBJECTS\tERRORS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", r.Cluster, r.Role, orDash(r.Endpoints), orDash(r.Services),
			r.Objects, len(r.Problems))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	for _, r := range rows {
		if r.KCM == "" {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s: KCM: %s\n", r.Cluster, r.KCM); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
	}
	for _, r := range rows {
		for _, p := range r.Problems {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Cluster, p); err != nil {
				return fmt.Errorf("write summary: %w", err)
			}
		}
	}
	return nil
}

func orDash(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, ",")
}
