package support

import (
	"fmt"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/doctor/diagnose"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// kofPrefix starts every KOF label and annotation of a ClusterDeployment (docs/annotations.md), istioRoleLabel is the
// Istio membership label KOF reads.
const (
	kofPrefix      = "k0rdent.mirantis.com/kof-"
	istioRoleLabel = "k0rdent.mirantis.com/istio-role"
	// lastApplied is kubectl's copy of the applied object: a Secret's would hold its data, and it repeats the rest.
	lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// objectFile is one file of objects: the snapshot lists it comes from (Snapshot.Unreadable's names), what it holds,
// the objects and their kind.
type objectFile struct {
	path, what string
	lists      []string
	gvk        schema.GroupVersionKind
	objects    []runtime.Object
}

// objects adds KOF's objects from the snapshot, one YAML file per kind, and the names (only) of the operator's
// Secrets and VMUsers. A kind none of whose lists was readable gets no file: the manifest's Unreadable names it.
func (b *builder) objects(s *diagnose.Snapshot) error {
	kofCDs, templates := kofDeployments(s)
	files := []objectFile{
		{"objects/clusterdeployments.yaml", "ClusterDeployments with a KOF label or annotation",
			[]string{"ClusterDeployments"}, kcmv1.GroupVersion.WithKind(kcmv1.ClusterDeploymentKind), kofCDs},
		{"objects/clustertemplates.yaml", "ClusterTemplates of those ClusterDeployments",
			[]string{"ClusterTemplates"}, kcmv1.GroupVersion.WithKind("ClusterTemplate"), templates},
		{"objects/multiclusterservices.yaml", "MultiClusterServices", []string{"MultiClusterServices"},
			kcmv1.GroupVersion.WithKind("MultiClusterService"), each(s.MCSs)},
		{"objects/servicesets.yaml", "ServiceSets", []string{"ServiceSets"},
			kcmv1.GroupVersion.WithKind("ServiceSet"), each(s.ServiceSets)},
		{"objects/clustersummaries.yaml", "ClusterSummaries", []string{"ClusterSummaries"},
			addonv1.GroupVersion.WithKind(addonv1.ClusterSummaryKind), each(s.Summaries)},
		{"objects/configmaps.yaml", "the kof-operator's ConfigMaps, the rule patch ConfigMaps and the promxy rules",
			[]string{"operator ConfigMaps", "alert rule ConfigMaps", "record rule ConfigMaps"},
			corev1.SchemeGroupVersion.WithKind("ConfigMap"), each(s.ConfigMaps)},
		{"objects/promxyservergroups.yaml", "PromxyServerGroups", []string{"PromxyServerGroups"},
			kofv1.GroupVersion().WithKind("PromxyServerGroup"), each(s.PromxyServerGroups)},
		{"objects/vmstorageconnections.yaml", "VMStorageConnections", []string{"VMStorageConnections"},
			kofv1.GroupVersion().WithKind("VMStorageConnection"), each(s.StorageConnections)},
		{"objects/helmreleases.yaml", "the umbrella's HelmReleases with their status", []string{"HelmReleases"},
			helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind), each(s.HelmReleases)},
		{"objects/helmcharts.yaml", "the umbrella's HelmCharts", []string{"HelmCharts"},
			sourcev1.GroupVersion.WithKind(sourcev1.HelmChartKind), each(s.HelmCharts)},
		{"objects/helmrepositories.yaml", "the umbrella's HelmRepositories", []string{"HelmRepositories"},
			sourcev1.GroupVersion.WithKind(sourcev1.HelmRepositoryKind), each(s.HelmRepositories)},
		{"objects/events.yaml", "Events of ClusterDeployments and warning Events",
			[]string{"ClusterDeployment Events", "warning Events"}, corev1.SchemeGroupVersion.WithKind("Event"),
			each(s.Events)},
	}
	for _, f := range files {
		if !anyReadable(s, f.lists) {
			continue
		}
		data, err := b.yamlObjects(f.gvk, f.objects)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		b.add(f.path, f.what, len(f.objects), data)
	}
	b.names(s, "objects/secret-names.txt", "names of the kof-operator's Secrets (never their data)",
		"operator Secrets", s.Secrets)
	b.names(s, "objects/vmuser-names.txt", "names of the kof-operator's VMUsers", "operator VMUsers", s.VMUsers)
	return nil
}

// names adds `namespace/name` lines of objs, when the list was readable.
func (b *builder) names(s *diagnose.Snapshot, p, what, list string, objs []metav1.PartialObjectMetadata) {
	if !anyReadable(s, []string{list}) {
		return
	}
	var sb strings.Builder
	for _, o := range objs {
		sb.WriteString(o.Namespace + "/" + o.Name + "\n")
	}
	b.add(p, what, len(objs), []byte(sb.String()))
}

// yamlObjects marshals objs as a YAML stream of gvk objects without managedFields and kubectl's last-applied
// copy, every value redacted (Redactor.Object).
func (b *builder) yamlObjects(gvk schema.GroupVersionKind, objs []runtime.Object) ([]byte, error) {
	var out []byte
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, fmt.Errorf("convert %s: %w", gvk.Kind, err)
		}
		m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
			if a, ok := meta["annotations"].(map[string]any); ok {
				delete(a, lastApplied)
			}
		}
		doc, err := yaml.Marshal(b.redact.Object(m))
		if err != nil {
			return nil, fmt.Errorf("marshal %s: %w", gvk.Kind, err)
		}
		out = append(append(out, "---\n"...), doc...)
	}
	return out, nil
}

// kofDeployments returns the ClusterDeployments that carry a KOF label or annotation (metadata, or
// spec.config.clusterAnnotations through their JSON) and the ClusterTemplates they use.
func kofDeployments(s *diagnose.Snapshot) (cds, templates []runtime.Object) {
	used := map[string]bool{}
	for i := range s.Deployments {
		cd := &s.Deployments[i]
		if !isKOF(cd) {
			continue
		}
		cds = append(cds, cd)
		used[cd.Namespace+"/"+cd.Spec.Template] = true
	}
	for i := range s.Templates {
		if used[s.Templates[i].Namespace+"/"+s.Templates[i].Name] {
			templates = append(templates, &s.Templates[i])
		}
	}
	return cds, templates
}

func isKOF(cd *kcmv1.ClusterDeployment) bool {
	for _, m := range []map[string]string{cd.Labels, cd.Annotations} {
		for k := range m {
			if strings.HasPrefix(k, kofPrefix) || k == istioRoleLabel {
				return true
			}
		}
	}
	return cd.Spec.Config != nil && strings.Contains(string(cd.Spec.Config.Raw), kofPrefix)
}

// anyReadable reports whether one of the snapshot's lists named was read.
func anyReadable(s *diagnose.Snapshot, lists []string) bool {
	for _, l := range lists {
		readable := true
		for _, u := range s.Unreadable {
			if u.What == l {
				readable = false
			}
		}
		if readable {
			return true
		}
	}
	return false
}

// each returns pointers to the items of list as runtime.Objects.
func each[T any, P interface {
	*T
	runtime.Object
}](list []T) []runtime.Object {
	out := make([]runtime.Object, 0, len(list))
	for i := range list {
		out = append(out, P(&list[i]))
	}
	return out
}
