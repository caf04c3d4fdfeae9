// Package discovery reads what KOF needs from a ClusterDeployment and its ClusterTemplate: role, merged
// annotations, cloud, location, and the regional cluster a child writes to. It builds the 17-key data of the
// regional and child ConfigMaps (docs/contract.md, "Objects the operator writes"). It works on typed objects only, never
// a client, so that the operator and the offline fleet renderer bind children to the same regionals.
package discovery

import (
	"encoding/json"
	"fmt"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/endpoints"
)

// Cloud names of the infrastructure providers whose location discovery knows (ClusterTemplate status.providers
// lists them as `infrastructure-<cloud>`).
const (
	CloudAWS       = "aws"
	CloudAzure     = "azure"
	CloudOpenStack = "openstack"
	CloudVSphere   = "vsphere"

	infrastructurePrefix = "infrastructure-"
)

// Location is where a cluster runs; only the field of its cloud is set.
type Location struct {
	AWSRegion         string
	AzureLocation     string
	OpenStackRegion   string
	VSphereDatacenter string
}

// IsZero reports whether no location field is set.
func (l Location) IsZero() bool { return l == Location{} }

// Cluster is the plain-data view of a KOF ClusterDeployment.
type Cluster struct {
	Name      string
	Namespace string
	// Role is the `k0rdent.mirantis.com/kof-cluster-role` label value.
	Role string
	// Labels are the ClusterDeployment's labels.
	Labels map[string]string
	// Annotations are metadata.annotations over spec.config.clusterAnnotations (endpoints.Merge).
	Annotations map[string]string
	// Cloud is the infrastructure provider of the ClusterTemplate (`aws`, `azure`, ...), "" when unknown.
	Cloud string
	// Template is spec.template, the ClusterTemplate's name; TemplateFound says whether that ClusterTemplate
	// exists in the cluster's namespace.
	Template      string
	TemplateFound bool
	// Location is read from spec.config according to Cloud.
	Location Location
}

// Key returns `namespace/name`.
func (c Cluster) Key() string { return c.Namespace + "/" + c.Name }

// Istio reports whether the cluster is an Istio mesh member (`k0rdent.mirantis.com/istio-role: member`).
func (c Cluster) Istio() bool { return c.Labels[kofv1.IstioRoleLabel] == kofv1.IstioMember }

// Role returns the KOF role of cd: RoleRegional, RoleChild, or "" for any other label value (not a KOF cluster).
func Role(cd *kcmv1.ClusterDeployment) string {
	switch r := cd.GetLabels()[kofv1.ClusterRoleLabel]; r {
	case kofv1.RoleRegional, kofv1.RoleChild:
		return r
	default:
		return ""
	}
}

// Config decodes cd's spec.config into a map. A missing, empty or `null` config yields an empty map; a config that
// is not a JSON object is an error naming spec.config.
func Config(cd *kcmv1.ClusterDeployment) (map[string]any, error) {
	out := map[string]any{}
	if cd.Spec.Config == nil || len(cd.Spec.Config.Raw) == 0 {
		return out, nil
	}
	var v any
	if err := json.Unmarshal(cd.Spec.Config.Raw, &v); err != nil {
		return out, fmt.Errorf("spec.config: invalid JSON: %w", err)
	}
	switch m := v.(type) {
	case nil:
		return out, nil
	case map[string]any:
		return m, nil
	default:
		return out, fmt.Errorf("spec.config: want an object, got %T", v)
	}
}

// ClusterAnnotations returns spec.config.clusterAnnotations of config. A value that is not an object of strings
// is an error naming spec.config.clusterAnnotations.
func ClusterAnnotations(config map[string]any) (map[string]string, error) {
	raw, ok := config["clusterAnnotations"]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec.config.clusterAnnotations: want an object of strings, got %T", raw)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("spec.config.clusterAnnotations.%s: want a string, got %T", k, v)
		}
		out[k] = s
	}
	return out, nil
}

// CloudOf returns the cloud of tpl: the first `infrastructure-<cloud>` entry of status.providers without its
// prefix, or "" when tpl is nil or names none.
func CloudOf(tpl *kcmv1.ClusterTemplate) string {
	if tpl == nil {
		return ""
	}
	for _, p := range tpl.Status.Providers {
		if c, ok := strings.CutPrefix(p, infrastructurePrefix); ok && c != "" {
			return c
		}
	}
	return ""
}

// LocationOf returns the location of a cluster of the given cloud from its spec.config: aws `region`, azure
// `location`, openstack `identityRef.region`, vsphere `vsphere.datacenter` (the KCM cluster templates' values).
// Other clouds and absent or non-string values yield the zero Location.
func LocationOf(cloud string, config map[string]any) Location {
	switch cloud {
	case CloudAWS:
		return Location{AWSRegion: str(config, "region")}
	case CloudAzure:
		return Location{AzureLocation: str(config, "location")}
	case CloudOpenStack:
		return Location{OpenStackRegion: str(config, "identityRef", "region")}
	case CloudVSphere:
		return Location{VSphereDatacenter: str(config, "vsphere", "datacenter")}
	default:
		return Location{}
	}
}

// str returns the string at path in m, or "".
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

// FromClusterDeployment returns the Cluster view of cd; tpl is its ClusterTemplate, nil when unknown. The only
// errors come from a malformed spec.config; they name the field.
func FromClusterDeployment(cd *kcmv1.ClusterDeployment, tpl *kcmv1.ClusterTemplate) (Cluster, error) {
	c := Cluster{
		Name:          cd.Name,
		Namespace:     cd.Namespace,
		Role:          Role(cd),
		Labels:        cd.GetLabels(),
		Cloud:         CloudOf(tpl),
		Template:      cd.Spec.Template,
		TemplateFound: tpl != nil,
	}
	config, err := Config(cd)
	if err != nil {
		c.Annotations = endpoints.Merge(cd.GetAnnotations(), nil)
		return c, err
	}
	ca, err := ClusterAnnotations(config)
	c.Annotations = endpoints.Merge(cd.GetAnnotations(), ca)
	if err != nil {
		return c, err
	}
	c.Location = LocationOf(c.Cloud, config)
	return c, nil
}
