// Package fidelity proves the layer-2 emulator (chartlib/sveltos, through chartlib/fleet) against Sveltos itself:
// the real addon-controller deploys the ClusterProfiles KCM makes from KOF's MultiClusterServices to remote API
// servers, and the values of every Helm release it installs, and the objects of those releases, must equal what
// `kof render` predicted for that cluster.
//
// KCM's own controller cannot run here (it needs CAPI providers, cert-manager webhooks and a Management object), so
// this package translates each MultiClusterService into ClusterProfiles as KCM v1.10.0 documents and does it: one
// ClusterProfile per MultiClusterService and cluster (KCM's ServiceSet), spec from the MCS serviceSpec
// (syncMode, templateResourceRefs, priority as tier, stopOnConflict, continueOnError), one helm chart per
// enabled service (repository URL of the ServiceTemplate's HelmRepository, chart name `<chart>/<chart>` for HTTP
// repositories, release namespace the service's, values and valuesFrom as written). A MultiClusterService's
// spec.dependsOn holds its ClusterProfile for a cluster back until the services of the MultiClusterServices it names
// are deployed there (dependsOnDeployed), as KCM holds back the ServiceSet.
package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	libsveltosv1 "github.com/projectsveltos/libsveltos/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KCM's defaults for a ServiceSet's profile (internal/controller/adapters/sveltos: defaultTier, converted like every priority; the
// MultiClusterService namespace of valuesFrom sources is KCM's system namespace).
const (
	defaultPriority  = 100
	systemNamespace  = "kcm-system"
	defaultNamespace = "default"
)

// chartSource is where a ServiceTemplate's chart comes from.
type chartSource struct {
	URL, Chart, Version string
}

// providerConfig is the part of MultiClusterService spec.serviceSpec KCM turns into the profile spec.
type providerConfig struct {
	SyncMode             string                        `json:"syncMode,omitempty"`
	TemplateResourceRefs []addonv1.TemplateResourceRef `json:"templateResourceRefs,omitempty"`
	Priority             *int32                        `json:"priority,omitempty"`
	StopOnConflict       bool                          `json:"stopOnConflict,omitempty"`
	ContinueOnError      bool                          `json:"continueOnError,omitempty"`
}

// profileFor returns the ClusterProfile KCM makes for mcs and the SveltosCluster ref, with the helm charts of the
// services whose ServiceTemplate charts has and a policyRef (deployed remotely) for each service whose
// ServiceTemplate of plain resources policies has (its spec.resources.localSourceRef, in the template's
// namespace); the others, third-party charts that need the internet, are left out and returned by name. It returns
// an error naming the MCS when its config cannot be read.
func profileFor(mcs *unstructured.Unstructured, cluster corev1.ObjectReference, charts map[string]chartSource,
	policies map[string]addonv1.PolicyRef) (*addonv1.ClusterProfile, []string, error) {
	var typed kcmv1.MultiClusterService
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(mcs.Object, &typed); err != nil {
		return nil, nil, fmt.Errorf("MultiClusterService %s: %w", mcs.GetName(), err)
	}
	ss := typed.Spec.ServiceSpec
	//nolint:staticcheck // the deprecated serviceSpec fields are what KCM reads when provider.config is unset
	cfg := providerConfig{SyncMode: ss.SyncMode, TemplateResourceRefs: ss.TemplateResourceRefs,
		StopOnConflict: ss.StopOnConflict, ContinueOnError: ss.ContinueOnError}
	if ss.Priority != 0 {
		cfg.Priority = &ss.Priority
	}
	if ss.Provider.Config != nil {
		cfg = providerConfig{}
		if err := json.Unmarshal(ss.Provider.Config.Raw, &cfg); err != nil {
			return nil, nil, fmt.Errorf("MultiClusterService %s: spec.serviceSpec.provider.config: %w", mcs.GetName(), err)
		}
	}
	priority := int32(defaultPriority)
	if cfg.Priority != nil {
		priority = *cfg.Priority
	}
	if priority < 1 {
		return nil, nil, fmt.Errorf("MultiClusterService %s: priority %d: KCM accepts 1 or more", mcs.GetName(), priority)
	}
	tier := math.MaxInt32 - priority // KCM: a higher priority is a lower Sveltos tier
	syncMode := addonv1.SyncModeContinuous
	if cfg.SyncMode != "" {
		syncMode = addonv1.SyncMode(cfg.SyncMode)
	}
	p := &addonv1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Name: mcs.GetName() + "-" + cluster.Name},
		Spec: addonv1.Spec{
			ClusterRefs: []corev1.ObjectReference{cluster}, SyncMode: syncMode, Tier: tier,
			ContinueOnConflict: !cfg.StopOnConflict, ContinueOnError: cfg.ContinueOnError,
			StopMatchingBehavior: addonv1.WithdrawPolicies, TemplateResourceRefs: cfg.TemplateResourceRefs,
		},
	}
	var skipped []string
	for _, svc := range ss.Services {
		if svc.Disable {
			continue
		}
		if ref, ok := policies[svc.Template]; ok {
			p.Spec.PolicyRefs = append(p.Spec.PolicyRefs, ref)
			continue
		}
		src, ok := charts[svc.Template]
		if !ok {
			skipped = append(skipped, svc.Name)
			continue
		}
		ns := svc.Namespace
		if ns == "" {
			ns = defaultNamespace
		}
		var from []addonv1.ValueFrom
		for _, v := range svc.ValuesFrom {
			from = append(from, addonv1.ValueFrom{Kind: v.Kind, Name: v.Name, Namespace: systemNamespace})
		}
		p.Spec.HelmCharts = append(p.Spec.HelmCharts, addonv1.HelmChart{
			RepositoryURL: src.URL, RepositoryName: src.Chart, ChartName: src.Chart + "/" + src.Chart,
			ChartVersion: src.Version, ReleaseName: svc.Name, ReleaseNamespace: ns, Values: svc.Values,
			ValuesFrom: from, HelmChartAction: addonv1.HelmChartActionInstall,
		})
	}
	return p, skipped, nil
}

// policyRef returns the policyRef KCM makes for a ServiceTemplate of plain resources: the ConfigMap or Secret of
// its spec.resources.localSourceRef, in the template's namespace, deployed to the selected cluster.
func policyRef(st *unstructured.Unstructured) (addonv1.PolicyRef, bool) {
	kind, _, _ := unstructured.NestedString(st.Object, "spec", "resources", "localSourceRef", "kind")
	name, _, _ := unstructured.NestedString(st.Object, "spec", "resources", "localSourceRef", "name")
	if kind == "" || name == "" {
		return addonv1.PolicyRef{}, false
	}
	return addonv1.PolicyRef{Kind: kind, Name: name, Namespace: st.GetNamespace(),
		DeploymentType: addonv1.DeploymentTypeRemote}, true
}

// sveltosClusterRef returns the ClusterProfile reference to the SveltosCluster namespace/name.
func sveltosClusterRef(namespace, name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: libsveltosv1.GroupVersion.String(), Kind: libsveltosv1.SveltosClusterKind,
		Namespace: namespace, Name: name}
}

// dependsOnDeployed reports whether KCM would now create the ClusterProfile of mcs for cluster: every
// MultiClusterService that mcs names in spec.dependsOn and that selects the cluster (a key of selecting, which maps
// each such MultiClusterService to the ClusterProfile made of it for the cluster) has every feature of that
// profile (Helm for its charts, Resources for its policyRefs) provisioned in the profile's ClusterSummary for the
// cluster. A dependency that does not select the cluster is not waited for. When it reports false, the string says
// what is still missing; an error is a failed list of ClusterSummaries.
// Source: k0rdent/kcm v1.10.0 internal/controller/multiclusterservice_controller.go (okToReconcileServiceSet: no
// ServiceSet, so no ClusterProfile, for a cluster until the dependencies' services there are all deployed).
func dependsOnDeployed(ctx context.Context, c client.Client, mcs *unstructured.Unstructured,
	cluster corev1.ObjectReference, selecting map[string]*addonv1.ClusterProfile) (bool, string, error) {
	deps, _, _ := unstructured.NestedStringSlice(mcs.Object, "spec", "dependsOn")
	var summaries addonv1.ClusterSummaryList
	if len(deps) > 0 {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(addonv1.GroupVersion.WithKind(addonv1.ClusterSummaryKind + "List"))
		if err := c.List(ctx, list, client.InNamespace(cluster.Namespace)); err != nil {
			return false, "", fmt.Errorf("list ClusterSummaries: %w", err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.UnstructuredContent(), &summaries); err != nil {
			return false, "", fmt.Errorf("read ClusterSummaries: %w", err)
		}
	}
	for _, dep := range deps {
		p := selecting[dep]
		if p == nil {
			continue
		}
		var features []libsveltosv1.FeatureID
		if len(p.Spec.HelmCharts) > 0 {
			features = append(features, libsveltosv1.FeatureHelm)
		}
		if len(p.Spec.PolicyRefs) > 0 {
			features = append(features, libsveltosv1.FeatureResources)
		}
		i := slices.IndexFunc(summaries.Items, func(cs addonv1.ClusterSummary) bool {
			return cs.Spec.ClusterName == cluster.Name && slices.ContainsFunc(cs.OwnerReferences,
				func(o metav1.OwnerReference) bool { return o.Kind == addonv1.ClusterProfileKind && o.Name == p.Name })
		})
		if i < 0 {
			return false, fmt.Sprintf("MultiClusterService %s: no ClusterSummary of ClusterProfile %s yet", dep, p.Name), nil
		}
		cs := summaries.Items[i]
		for _, id := range features {
			j := slices.IndexFunc(cs.Status.FeatureSummaries, func(fs addonv1.FeatureSummary) bool { return fs.FeatureID == id })
			if j < 0 {
				return false, fmt.Sprintf("MultiClusterService %s: ClusterSummary %s reports no %s feature yet", dep,
					cs.Name, id), nil
			}
			if st := cs.Status.FeatureSummaries[j].Status; st != libsveltosv1.FeatureStatusProvisioned {
				return false, fmt.Sprintf("MultiClusterService %s: ClusterSummary %s feature %s is %s", dep, cs.Name, id,
					st), nil
			}
		}
	}
	return true, "", nil
}
