package diagnose

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
)

// Helm's ownership metadata on every object a release creates (helm.sh/helm/v3 pkg/action, "adoption" labels and
// annotations): the umbrella's Flux objects are recognised by them.
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// Field selectors of core/v1 Events (the API server's field label conversions for Event).
const (
	eventKindField = "involvedObject.kind"
	eventTypeField = "type"
)

// Scheme returns the scheme Read's client needs: client-go's built-in kinds, KCM v1beta1, Sveltos addon-controller
// v1beta1, KOF v1beta1 and the Flux HelmRelease v2, HelmChart and HelmRepository v1 kinds. It fails only when a group
// refuses registration.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for name, add := range map[string]func(*runtime.Scheme) error{
		"core": clientgoscheme.AddToScheme, "kcm": kcmv1.AddToScheme, "sveltos": addonv1.AddToScheme,
		"kof": kofv1.AddToScheme, "flux helm": helmv2.AddToScheme, "flux source": sourcev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("register %s types: %w", name, err)
		}
	}
	return s, nil
}

// Snapshot is what Read found on a live management cluster: the objects the diagnosis needs, every one as the API
// server served it.
type Snapshot struct {
	// Namespace is the umbrella release namespace (Options.Namespace); NamespaceObject is that Namespace, nil when
	// it cannot be read.
	Namespace       string
	NamespaceObject *corev1.Namespace
	// Release is the umbrella release name.
	Release string

	Deployments []kcmv1.ClusterDeployment
	Templates   []kcmv1.ClusterTemplate
	MCSs        []kcmv1.MultiClusterService
	ServiceSets []kcmv1.ServiceSet
	Summaries   []addonv1.ClusterSummary
	// ServiceTemplates are every ServiceTemplate with the status KCM's template controller wrote.
	ServiceTemplates []kcmv1.ServiceTemplate

	PromxyServerGroups []kofv1.PromxyServerGroup
	StorageConnections []kofv1.VMStorageConnection

	// ConfigMaps are the operator's ConfigMaps (label app.kubernetes.io/managed-by: kof-operator) and the rule
	// patch ConfigMaps (alert or record rules cluster label).
	ConfigMaps []corev1.ConfigMap
	// Secrets and VMUsers are the operator's, metadata only: the diagnosis never reads credentials.
	Secrets []metav1.PartialObjectMetadata
	VMUsers []metav1.PartialObjectMetadata

	// HelmReleases, HelmCharts and HelmRepositories are the umbrella release's Flux objects.
	HelmReleases     []helmv2.HelmRelease
	HelmCharts       []sourcev1.HelmChart
	HelmRepositories []sourcev1.HelmRepository

	// OperatorEnv is the environment of the kof-operator container of the mothership's Deployment; nil when there
	// is no such Deployment.
	OperatorEnv map[string]string

	// Events regard ClusterDeployments, or are warnings about any object.
	Events []corev1.Event

	// CertManager are the cert-manager controller Deployments (labels app.kubernetes.io/name=cert-manager,
	// app.kubernetes.io/component=controller: KCM's on a management cluster) and CertManagerConfigs the
	// ConfigMaps of the same labels (the chart's `config` value, its ControllerConfiguration).
	CertManager        []appsv1.Deployment
	CertManagerConfigs []corev1.ConfigMap

	// Unreadable lists what could not be read (forbidden to the caller, or a kind the API server does not serve).
	Unreadable []Unreadable
}

// Unreadable is one list the caller may not read or the API server does not serve.
type Unreadable struct {
	// What names the objects, e.g. `ClusterSummaries (config.projectsveltos.io)`.
	What string `json:"what"`
	// Reason is the API server's answer.
	Reason string `json:"reason"`
}

// ReadOptions says where the umbrella release is.
type ReadOptions struct {
	// Namespace and Release of the umbrella; defaults `kof` and `kof`.
	Namespace, Release string
}

// Read lists, read-only through c, everything the diagnosis looks at. A list the caller may not read (403) or whose
// kind the API server does not serve (no CRD) is recorded in Snapshot.Unreadable and left empty, so the diagnosis
// says what it could not see instead of reporting objects as missing. Other API errors are returned, naming the
// list.
func Read(ctx context.Context, c client.Reader, opts ReadOptions) (*Snapshot, error) {
	s := &Snapshot{Namespace: opts.Namespace, Release: opts.Release}
	if s.Namespace == "" {
		s.Namespace = defaultNamespace
	}
	if s.Release == "" {
		s.Release = defaultRelease
	}
	ours := client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}
	lists := []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{
		{"ClusterDeployments", &kcmv1.ClusterDeploymentList{}, nil},
		{"ClusterTemplates", &kcmv1.ClusterTemplateList{}, nil},
		{"MultiClusterServices", &kcmv1.MultiClusterServiceList{}, nil},
		{"ServiceSets", &kcmv1.ServiceSetList{}, nil},
		{"ServiceTemplates", &kcmv1.ServiceTemplateList{}, nil},
		{"ClusterSummaries", &addonv1.ClusterSummaryList{}, nil},
		{"PromxyServerGroups", &kofv1.PromxyServerGroupList{}, nil},
		{"VMStorageConnections", &kofv1.VMStorageConnectionList{}, nil},
		{"HelmReleases", &helmv2.HelmReleaseList{}, nil},
		{"HelmCharts", &sourcev1.HelmChartList{}, nil},
		{"HelmRepositories", &sourcev1.HelmRepositoryList{}, nil},
		{"operator ConfigMaps", &corev1.ConfigMapList{}, []client.ListOption{ours}},
		{"alert rule ConfigMaps", &corev1.ConfigMapList{}, []client.ListOption{hasLabel(kofv1.AlertRulesClusterLabel)}},
		{"record rule ConfigMaps", &corev1.ConfigMapList{}, []client.ListOption{hasLabel(kofv1.RecordRulesClusterLabel)}},
		{"operator Secrets", metadataList(corev1.SchemeGroupVersion.WithKind("SecretList")), []client.ListOption{ours}},
		{"operator VMUsers", metadataList(vmUserList()), []client.ListOption{ours}},
		{"ClusterDeployment Events", &corev1.EventList{}, []client.ListOption{eventFields(eventKindField, kcmv1.ClusterDeploymentKind)}},
		{"warning Events", &corev1.EventList{}, []client.ListOption{eventFields(eventTypeField, corev1.EventTypeWarning)}},
		{"kof-operator Deployments", &appsv1.DeploymentList{}, []client.ListOption{client.MatchingLabels(
			kofv1.OperatorDeploymentLabels())}},
	}
	for _, l := range lists {
		ok, err := s.list(ctx, c, l.what, l.list, l.opts...)
		if err != nil {
			return nil, err
		}
		if ok {
			s.keep(l.list)
		}
	}
	if err := s.readPromxyRules(ctx, c); err != nil {
		return nil, err
	}
	if err := s.readCertManager(ctx, c); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: s.Namespace}, ns)
	switch {
	case err == nil:
		s.NamespaceObject = ns
	case apierrors.IsNotFound(err):
	case unreadable(err):
		s.Unreadable = append(s.Unreadable, Unreadable{What: "Namespace " + s.Namespace, Reason: err.Error()})
	default:
		return nil, fmt.Errorf("get Namespace %s: %w", s.Namespace, err)
	}
	s.sort()
	return s, nil
}

// whatCertManager names the list of cert-manager controller Deployments in Snapshot.Unreadable.
const whatCertManager = "cert-manager controller Deployments"

// certManagerLabels select the cert-manager controller's Deployment and configuration ConfigMap, as the upstream
// cert-manager chart labels them.
func certManagerLabels() client.MatchingLabels {
	return client.MatchingLabels{"app.kubernetes.io/name": "cert-manager", "app.kubernetes.io/component": "controller"}
}

// readCertManager lists the cert-manager controller Deployments and their configuration ConfigMaps (any namespace).
func (s *Snapshot) readCertManager(ctx context.Context, c client.Reader) error {
	var deps appsv1.DeploymentList
	ok, err := s.list(ctx, c, whatCertManager, &deps, certManagerLabels())
	if err != nil || !ok {
		return err
	}
	s.CertManager = deps.Items
	var cms corev1.ConfigMapList
	ok, err = s.list(ctx, c, "cert-manager configuration ConfigMaps", &cms, certManagerLabels())
	if err != nil || !ok {
		return err
	}
	s.CertManagerConfigs = cms.Items
	return nil
}

// readPromxyRules adds the promxy rules ConfigMap the operator's environment names (KOF_PROMXY_RULES_CONFIGMAP in
// RELEASE_NAMESPACE): the chart creates it and the operator fills it, so it carries neither the operator's label
// nor a rules label.
func (s *Snapshot) readPromxyRules(ctx context.Context, c client.Reader) error {
	ns, name := s.OperatorEnv[config.EnvReleaseNamespace], s.OperatorEnv[config.EnvPromxyRulesConfigMap]
	if name == "" || s.configMap(ns, name) != nil {
		return nil
	}
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
	switch {
	case err == nil:
		s.ConfigMaps = append(s.ConfigMaps, *cm)
	case apierrors.IsNotFound(err):
	case unreadable(err):
		s.Unreadable = append(s.Unreadable, Unreadable{What: "ConfigMap " + ns + "/" + name, Reason: err.Error()})
	default:
		return fmt.Errorf("get ConfigMap %s/%s: %w", ns, name, err)
	}
	return nil
}

// vmUserList returns the list kind of the VictoriaMetrics operator's VMUser (operator.victoriametrics.com/v1beta1).
func vmUserList() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "operator.victoriametrics.com", Version: "v1beta1", Kind: "VMUserList"}
}

func metadataList(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk)
	return l
}

func hasLabel(key string) client.MatchingLabelsSelector {
	r, _ := labels.NewRequirement(key, "exists", nil)
	return client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*r)}
}

func eventFields(field, value string) client.MatchingFieldsSelector {
	return client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector(field, value)}
}

// list runs one List; it returns false when the list is unreadable (recorded) and an error for other failures.
func (s *Snapshot) list(ctx context.Context, c client.Reader, what string, l client.ObjectList,
	opts ...client.ListOption) (bool, error) {
	err := c.List(ctx, l, opts...)
	switch {
	case err == nil:
		return true, nil
	case unreadable(err):
		s.Unreadable = append(s.Unreadable, Unreadable{What: what, Reason: err.Error()})
		return false, nil
	default:
		return false, fmt.Errorf("list %s: %w", what, err)
	}
}

// unreadable reports whether err means "you may not see this" or "this kind is not served here".
func unreadable(err error) bool {
	var noKind *apimeta.NoKindMatchError
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || errors.As(err, &noKind) ||
		apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// keep stores the items of l in s, the Flux objects only when they belong to the umbrella release.
func (s *Snapshot) keep(l client.ObjectList) {
	switch l := l.(type) {
	case *kcmv1.ClusterDeploymentList:
		s.Deployments = l.Items
	case *kcmv1.ClusterTemplateList:
		s.Templates = l.Items
	case *kcmv1.MultiClusterServiceList:
		s.MCSs = l.Items
	case *kcmv1.ServiceSetList:
		s.ServiceSets = l.Items
	case *kcmv1.ServiceTemplateList:
		s.ServiceTemplates = l.Items
	case *addonv1.ClusterSummaryList:
		s.Summaries = l.Items
	case *kofv1.PromxyServerGroupList:
		s.PromxyServerGroups = l.Items
	case *kofv1.VMStorageConnectionList:
		s.StorageConnections = l.Items
	case *helmv2.HelmReleaseList:
		for _, o := range l.Items {
			if s.umbrellaOwns(&o) {
				s.HelmReleases = append(s.HelmReleases, o)
			}
		}
	case *sourcev1.HelmChartList:
		for _, o := range l.Items {
			if s.umbrellaOwns(&o) {
				s.HelmCharts = append(s.HelmCharts, o)
			}
		}
	case *sourcev1.HelmRepositoryList:
		for _, o := range l.Items {
			if s.umbrellaOwns(&o) {
				s.HelmRepositories = append(s.HelmRepositories, o)
			}
		}
	case *corev1.ConfigMapList:
		s.ConfigMaps = append(s.ConfigMaps, l.Items...)
	case *metav1.PartialObjectMetadataList:
		if l.GroupVersionKind() == vmUserList() {
			s.VMUsers = l.Items
		} else {
			s.Secrets = l.Items
		}
	case *corev1.EventList:
		s.Events = append(s.Events, l.Items...)
	case *appsv1.DeploymentList:
		if len(l.Items) > 0 {
			s.OperatorEnv = containerEnv(&l.Items[0])
		}
	}
}

// umbrellaOwns reports whether o carries the Helm ownership annotations of the umbrella release.
func (s *Snapshot) umbrellaOwns(o metav1.Object) bool {
	a := o.GetAnnotations()
	return a[helmReleaseNameAnnotation] == s.Release && a[helmReleaseNamespaceAnnotation] == s.Namespace
}

// containerEnv returns the literal environment of the operator container of dep; variables from references get the
// Deployment's namespace for metadata.namespace and stay empty otherwise.
func containerEnv(dep *appsv1.Deployment) map[string]string {
	env := map[string]string{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name != kofv1.OperatorContainer {
			continue
		}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				env[e.Name] = e.Value
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env[e.Name] = dep.Namespace
			default:
				env[e.Name] = ""
			}
		}
	}
	return env
}

// sort orders every list by namespace and name and drops duplicate ConfigMaps and Events (a ConfigMap may carry
// both the operator's label and a rules label; a warning Event may regard a ClusterDeployment).
func (s *Snapshot) sort() {
	byKey := func(a, b metav1.Object) bool {
		return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
	}
	sort.Slice(s.Deployments, func(i, j int) bool { return byKey(&s.Deployments[i], &s.Deployments[j]) })
	sort.Slice(s.MCSs, func(i, j int) bool { return s.MCSs[i].Name < s.MCSs[j].Name })
	sort.Slice(s.ServiceTemplates, func(i, j int) bool { return byKey(&s.ServiceTemplates[i], &s.ServiceTemplates[j]) })
	sort.Slice(s.PromxyServerGroups, func(i, j int) bool {
		return byKey(&s.PromxyServerGroups[i], &s.PromxyServerGroups[j])
	})
	sort.Slice(s.StorageConnections, func(i, j int) bool {
		return byKey(&s.StorageConnections[i], &s.StorageConnections[j])
	})
	seen := map[string]bool{}
	cms := s.ConfigMaps[:0]
	for _, cm := range s.ConfigMaps {
		if k := cm.Namespace + "/" + cm.Name; !seen[k] {
			seen[k] = true
			cms = append(cms, cm)
		}
	}
	s.ConfigMaps = cms
	sort.Slice(s.ConfigMaps, func(i, j int) bool { return byKey(&s.ConfigMaps[i], &s.ConfigMaps[j]) })
	seenEvent := map[string]bool{}
	evs := s.Events[:0]
	for _, e := range s.Events {
		if k := e.Namespace + "/" + e.Name; !seenEvent[k] {
			seenEvent[k] = true
			evs = append(evs, e)
		}
	}
	s.Events = evs
	sort.SliceStable(s.Events, func(i, j int) bool { return eventTime(s.Events[j]).Before(eventTime(s.Events[i])) })
}

// configMap returns the ConfigMap namespace/name of the snapshot, nil when absent.
func (s *Snapshot) configMap(namespace, name string) *corev1.ConfigMap {
	for i := range s.ConfigMaps {
		if s.ConfigMaps[i].Namespace == namespace && s.ConfigMaps[i].Name == name {
			return &s.ConfigMaps[i]
		}
	}
	return nil
}

// template returns the ClusterTemplate namespace/name, nil when absent.
func (s *Snapshot) template(namespace, name string) *kcmv1.ClusterTemplate {
	for i := range s.Templates {
		if s.Templates[i].Namespace == namespace && s.Templates[i].Name == name {
			return &s.Templates[i]
		}
	}
	return nil
}

// readable reports whether the list named what was read.
func (s *Snapshot) readable(what string) bool {
	for _, u := range s.Unreadable {
		if u.What == what {
			return false
		}
	}
	return true
}

// toUnstructured converts a typed object into the unstructured form the fleet render reads, with its apiVersion and
// kind set and the fields the API server adds (managedFields, resourceVersion, uid, generation, creation time)
// removed, so that it looks like an object a user wrote.
func toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	u.SetManagedFields(nil)
	u.SetResourceVersion("")
	u.SetUID("")
	u.SetGeneration(0)
	u.SetCreationTimestamp(metav1.Time{})
	for k := range u.GetAnnotations() {
		if strings.HasPrefix(k, "kubectl.kubernetes.io/") {
			unstructured.RemoveNestedField(u.Object, "metadata", "annotations", k)
		}
	}
	return u, nil
}
