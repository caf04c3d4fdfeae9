package diagnose

import (
	"sort"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	addonv1 "github.com/projectsveltos/addon-controller/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/fleet"
	kofv1 "kof.dev/kof/operator/api/v1beta1"
)

// index holds the snapshot and the prediction by key, so that the diagnosis grows linearly with the fleet.
type index struct {
	deployments map[string]*kcmv1.ClusterDeployment
	configMaps  map[string]*corev1.ConfigMap
	// objects are the live Secrets, VMUsers, PromxyServerGroups, VMStorageConnections and MultiClusterServices by
	// `kind/namespace/name`, with their labels and conditions.
	objects     map[string]liveObject
	serviceSets map[string]*kcmv1.ServiceSet
	// summaries are the ClusterSummaries by their cluster's `namespace/name`.
	summaries map[string][]*addonv1.ClusterSummary
	// events are the events by the `kind/namespace/name` of the object they regard, newest first.
	events map[string][]corev1.Event
	// byName are the MultiClusterServices whose selector requires a cluster name (the operator's propagation ones),
	// by that name; general are the others.
	byName  map[string][]*kcmv1.MultiClusterService
	general []*kcmv1.MultiClusterService
	// predicted are the prediction's operator objects by `kind/namespace/name`, and its clusters by `namespace/name`.
	predicted map[string]*unstructured.Unstructured
	clusters  map[string]*fleet.Cluster
}

// liveObject is what the diagnosis needs of one live operator object.
type liveObject struct {
	labels     map[string]string
	conditions []Condition
}

func objectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// newIndex indexes s and pred (nil: no prediction).
func newIndex(s *Snapshot, pred *fleet.Fleet) *index {
	x := &index{deployments: map[string]*kcmv1.ClusterDeployment{}, configMaps: map[string]*corev1.ConfigMap{},
		objects: map[string]liveObject{}, serviceSets: map[string]*kcmv1.ServiceSet{},
		summaries: map[string][]*addonv1.ClusterSummary{}, events: map[string][]corev1.Event{},
		byName: map[string][]*kcmv1.MultiClusterService{}, predicted: map[string]*unstructured.Unstructured{},
		clusters: map[string]*fleet.Cluster{}}
	for i := range s.Deployments {
		x.deployments[s.Deployments[i].Namespace+"/"+s.Deployments[i].Name] = &s.Deployments[i]
	}
	for i := range s.ConfigMaps {
		x.configMaps[s.ConfigMaps[i].Namespace+"/"+s.ConfigMaps[i].Name] = &s.ConfigMaps[i]
	}
	for _, m := range s.Secrets {
		x.objects[objectKey(kindSecret, m.Namespace, m.Name)] = liveObject{labels: m.Labels}
	}
	for _, m := range s.VMUsers {
		x.objects[objectKey(kindVMUser, m.Namespace, m.Name)] = liveObject{labels: m.Labels}
	}
	for _, p := range s.PromxyServerGroups {
		x.objects[objectKey(kindPromxyServerGroup, p.Namespace, p.Name)] = liveObject{labels: p.Labels,
			conditions: conditions(p.Status.Conditions)}
	}
	for _, c := range s.StorageConnections {
		x.objects[objectKey(kindStorageConnection, c.Namespace, c.Name)] = liveObject{labels: c.Labels,
			conditions: conditions(c.Status.Conditions)}
	}
	for i := range s.MCSs {
		m := &s.MCSs[i]
		x.objects[objectKey(kindMultiClusterService, "", m.Name)] = liveObject{labels: m.Labels,
			conditions: conditions(m.Status.Conditions)}
		if name, ok := m.Spec.ClusterSelector.MatchLabels[kofv1.ClusterNameLabel]; ok {
			x.byName[name] = append(x.byName[name], m)
		} else {
			x.general = append(x.general, m)
		}
	}
	for i := range s.ServiceSets {
		x.serviceSets[s.ServiceSets[i].Namespace+"/"+s.ServiceSets[i].Name] = &s.ServiceSets[i]
	}
	for i := range s.Summaries {
		sum := &s.Summaries[i]
		k := sum.Namespace + "/" + sum.GetLabels()[summaryClusterLabel]
		x.summaries[k] = append(x.summaries[k], sum)
	}
	for _, e := range s.Events {
		io := e.InvolvedObject
		k := objectKey(io.Kind, io.Namespace, io.Name)
		x.events[k] = append(x.events[k], e)
	}
	if pred != nil {
		for _, o := range pred.Operator {
			x.predicted[objectKey(o.GetKind(), o.GetNamespace(), o.GetName())] = o
		}
		for _, c := range pred.Clusters {
			x.clusters[c.Namespace+"/"+c.Name] = c
		}
	}
	return x
}

// candidates returns the MultiClusterServices that may select a cluster with lbls: every one whose selector does
// not require a cluster name, and those that require this cluster's name (a selector whose matchLabels require a
// value matches only clusters with that value).
func (x *index) candidates(lbls map[string]string) []*kcmv1.MultiClusterService {
	named := x.byName[lbls[kofv1.ClusterNameLabel]]
	if len(named) == 0 {
		return x.general
	}
	out := append(append([]*kcmv1.MultiClusterService{}, x.general...), named...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
