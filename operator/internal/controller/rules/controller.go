// Package rules is the controller that merges KOF's default Prometheus rules with the users' rule patch ConfigMaps
// into promxy's rules ConfigMap and each regional cluster's `kof-record-vmrules-<cluster>` ConfigMap.
//
// Inputs (docs/contract.md, "Rule merging"): the PrometheusRules in the release namespace (kof-mothership renders KOF's
// default rules there), ConfigMaps labelled `k0rdent.mirantis.com/kof-alert-rules-cluster-name` or
// `k0rdent.mirantis.com/kof-record-rules-cluster-name`, and the regional ConfigMaps (which clusters get vmrules).
// The merge itself is the pure package kof.dev/kof/operator/rules. Outputs are written by server-side apply only
// when their data differs; a faulty input is reported by a Warning event on that ConfigMap and the outputs it feeds
// keep their previous content.
package rules

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	merge "kof.dev/kof/operator/rules"
)

// ControllerName names the controller (metrics, logs, events).
const ControllerName = "rules"

// VMRulesValuesKey is the data key of a vmrules ConfigMap that the regional MCS reads through valuesFrom.
const VMRulesValuesKey = "values"

// actionMerge is the events.k8s.io action of this controller's events.
const actionMerge = "MergeRules"

// Reconciler keeps the promxy rules ConfigMap and the vmrules ConfigMaps in line with the rule inputs. Client,
// Recorder, Namespace and RulesConfigMap are required.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Recorder emits Warning events on faulty rule ConfigMaps (once per distinct problem).
	Recorder events.EventRecorder
	// Namespace is the release namespace: PrometheusRules are read and the promxy rules ConfigMap written there
	// (config RELEASE_NAMESPACE).
	Namespace string
	// RulesConfigMap is the promxy rules ConfigMap name (config KOF_PROMXY_RULES_CONFIGMAP).
	RulesConfigMap string

	mu       sync.Mutex
	reported map[string]bool // problems already announced by an event
}

// RBAC of this controller (collected by controller-gen into operator/config/rbac).
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=prometheusrules,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller with mgr. Every input or output event enqueues the one key
// (Namespace/RulesConfigMap): the merge always works on the whole rule set. It returns the builder's error.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil || r.Namespace == "" || r.RulesConfigMap == "" {
		return fmt.Errorf("setup %s controller: Client, Recorder, Namespace and RulesConfigMap are required", ControllerName)
	}
	key := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.RulesConfigMap}}}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&monitoringv1.PrometheusRule{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if o.GetNamespace() != r.Namespace {
				return nil
			}
			return key
		})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if r.relevant(o) {
				return key
			}
			return nil
		})).
		Complete(r)
}

// relevant reports whether a ConfigMap is an input or an output of the merge.
func (r *Reconciler) relevant(o client.Object) bool {
	l := o.GetLabels()
	_, alert := l[kofv1.AlertRulesClusterLabel]
	_, record := l[kofv1.RecordRulesClusterLabel]
	regional := l[kofv1.ClusterRoleLabel] == kofv1.RoleRegional && l[kofv1.GeneratedLabel] == kofv1.TrueValue
	output := (o.GetNamespace() == r.Namespace && o.GetName() == r.RulesConfigMap) ||
		(l[kofv1.ManagedByLabel] == kofv1.ManagedBy && strings.HasPrefix(o.GetName(), names.VMRulesConfigMapPrefix))
	return alert || record || regional || output
}

// regionalCluster is a cluster that gets a vmrules ConfigMap.
type regionalCluster struct{ namespace, name string }

// Reconcile merges all rule inputs and writes the outputs that differ. API errors are returned for backoff;
// faulty inputs are reported by events and do not fail the reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	in, clusters, err := r.inputs(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	prev, err := r.previous(ctx, clusters)
	if err != nil {
		return reconcile.Result{}, err
	}
	out, problems := merge.Merge(in, prev)
	r.report(ctx, problems)
	if err := r.applyConfigMap(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.RulesConfigMap}, out.PromxyFiles, nil); err != nil {
		return reconcile.Result{}, err
	}
	// Every object the operator writes carries both of its labels (docs/contract.md, "Objects the operator
	// writes"), whichever controller creates it first: the regional controller's empty one has them too.
	managed := outputs.Labels()
	for _, c := range clusters {
		values, ok := out.VMRules[c.name]
		if !ok {
			continue // faulty input and nothing to keep: leave the ConfigMap as it is
		}
		key := types.NamespacedName{Namespace: c.namespace, Name: names.VMRulesConfigMap(c.name)}
		if err := r.applyConfigMap(ctx, key, map[string]string{VMRulesValuesKey: values}, managed); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.prune(ctx, clusters)
}

// inputs reads the PrometheusRules, the rule ConfigMaps and the regional clusters.
func (r *Reconciler) inputs(ctx context.Context) (merge.Input, []regionalCluster, error) {
	var prs monitoringv1.PrometheusRuleList
	if err := r.Client.List(ctx, &prs, client.InNamespace(r.Namespace)); err != nil {
		return merge.Input{}, nil, fmt.Errorf("list PrometheusRules in %s: %w", r.Namespace, err)
	}
	in := merge.Input{Groups: merge.FromPrometheusRules(prs.Items)}
	for _, src := range []struct {
		label string
		kind  merge.Kind
	}{{kofv1.AlertRulesClusterLabel, merge.Alert}, {kofv1.RecordRulesClusterLabel, merge.Record}} {
		var cms corev1.ConfigMapList
		if err := r.Client.List(ctx, &cms, client.HasLabels{src.label}); err != nil {
			return merge.Input{}, nil, fmt.Errorf("list ConfigMaps labelled %s: %w", src.label, err)
		}
		for _, cm := range cms.Items {
			in.Sources = append(in.Sources, merge.Source{Namespace: cm.Namespace, Name: cm.Name, Kind: src.kind,
				Cluster: cm.Labels[src.label], Data: cm.Data})
		}
	}
	clusters, err := r.regionals(ctx)
	if err != nil {
		return merge.Input{}, nil, err
	}
	for _, c := range clusters {
		in.Clusters = append(in.Clusters, c.name)
	}
	return in, clusters, nil
}

// regionals lists the regional clusters from their generated ConfigMaps, skipping the regionless one (its
// storage needs no vmrules ConfigMap), sorted by namespace/name.
func (r *Reconciler) regionals(ctx context.Context) ([]regionalCluster, error) {
	var cms corev1.ConfigMapList
	if err := r.Client.List(ctx, &cms, client.MatchingLabels{kofv1.ClusterRoleLabel: kofv1.RoleRegional, kofv1.GeneratedLabel: kofv1.TrueValue}); err != nil {
		return nil, fmt.Errorf("list regional ConfigMaps: %w", err)
	}
	var out []regionalCluster
	for _, cm := range cms.Items {
		if cm.Labels[kofv1.RegionlessLabel] == kofv1.TrueValue || cm.Data[discovery.KeyRegionalClusterName] == "" {
			continue
		}
		ns := cm.Data[discovery.KeyRegionalClusterNamespace]
		if ns == "" {
			ns = cm.Namespace
		}
		out = append(out, regionalCluster{namespace: ns, name: cm.Data[discovery.KeyRegionalClusterName]})
	}
	slices.SortFunc(out, func(a, b regionalCluster) int { return strings.Compare(a.namespace+"/"+a.name, b.namespace+"/"+b.name) })
	return slices.Compact(out), nil
}

// previous reads the current outputs, which Merge keeps for outputs fed by a faulty input.
func (r *Reconciler) previous(ctx context.Context, clusters []regionalCluster) (merge.Output, error) {
	prev := merge.Output{PromxyFiles: map[string]string{}, VMRules: map[string]string{}}
	var cm corev1.ConfigMap
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.RulesConfigMap}, &cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return prev, fmt.Errorf("get promxy rules ConfigMap: %w", err)
	}
	maps.Copy(prev.PromxyFiles, cm.Data)
	for _, c := range clusters {
		var v corev1.ConfigMap
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: names.VMRulesConfigMap(c.name)}, &v)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return prev, fmt.Errorf("get vmrules ConfigMap of %s/%s: %w", c.namespace, c.name, err)
		}
		if values, ok := v.Data[VMRulesValuesKey]; ok {
			prev.VMRules[c.name] = values
		}
	}
	return prev, nil
}

// applyConfigMap applies data (and labels, when given) to the ConfigMap key when its data differs; it writes
// nothing otherwise. Data keys are owned by this field manager, so keys dropped from data are removed.
func (r *Reconciler) applyConfigMap(ctx context.Context, key types.NamespacedName, data, labels map[string]string) error {
	var cm corev1.ConfigMap
	err := r.Client.Get(ctx, key, &cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get ConfigMap %s: %w", key, err)
	}
	labelsOK := true
	for k, v := range labels {
		labelsOK = labelsOK && cm.Labels[k] == v
	}
	if err == nil && labelsOK && maps.Equal(cm.Data, data) {
		return nil
	}
	ac := corev1ac.ConfigMap(key.Name, key.Namespace).WithData(data)
	if len(labels) > 0 {
		ac = ac.WithLabels(labels)
	}
	if err := r.Client.Apply(ctx, ac, client.FieldOwner(apply.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply ConfigMap %s: %w", key, err)
	}
	return nil
}

// prune deletes vmrules ConfigMaps this operator made for clusters that are no longer regional.
func (r *Reconciler) prune(ctx context.Context, clusters []regionalCluster) error {
	want := map[types.NamespacedName]bool{}
	for _, c := range clusters {
		want[types.NamespacedName{Namespace: c.namespace, Name: names.VMRulesConfigMap(c.name)}] = true
	}
	var cms corev1.ConfigMapList
	if err := r.Client.List(ctx, &cms, client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		return fmt.Errorf("list operator ConfigMaps: %w", err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		if !strings.HasPrefix(cm.Name, names.VMRulesConfigMapPrefix) || want[client.ObjectKeyFromObject(cm)] {
			continue
		}
		if _, isRules := cm.Data[VMRulesValuesKey]; !isRules {
			continue
		}
		if err := r.Client.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete stale vmrules ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return nil
}

// report emits one Warning event per new problem on the ConfigMap at fault and logs every problem; problems that
// went away are forgotten so that a recurrence is announced again.
func (r *Reconciler) report(ctx context.Context, problems []merge.Problem) {
	log := ctrl.LoggerFrom(ctx)
	current := map[string]bool{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range problems {
		msg := p.Error()
		current[msg] = true
		log.Info("rule input left out", "source", p.Source, "problem", p.Err.Error())
		if r.reported[msg] {
			continue
		}
		for _, src := range strings.Split(p.Source, ",") {
			ns, name, ok := strings.Cut(src, "/")
			if !ok {
				continue
			}
			cm := &corev1.ConfigMap{}
			cm.Namespace, cm.Name = ns, name
			if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
				continue // gone meanwhile: nothing to attach the event to
			}
			r.Recorder.Eventf(cm, nil, corev1.EventTypeWarning, kofv1.ReasonInvalidSpec, actionMerge, "%s", p.Err.Error())
		}
	}
	r.reported = current
}
