// Package rules is the controller that merges KOF's default Prometheus rules with the users' rule patch ConfigMaps
// into promxy's rules ConfigMap and each regional cluster's `kof-record-vmrules-<cluster>` ConfigMap.
//
// Inputs (docs/contract.md, "Rule merging"): the PrometheusRules in the release namespace (kof-mothership renders KOF's
// default rules there), ConfigMaps labelled `k0rdent.mirantis.com/kof-alert-rules-cluster-name` or
// `k0rdent.mirantis.com/kof-record-rules-cluster-name`, and the regional ConfigMaps (which clusters get vmrules).
// The merge itself is the pure package kof.dev/kof/operator/rules, its inputs and the vmrules ConfigMaps are those
// of operator/outputs. Outputs are written by server-side apply only when they differ; a faulty input is reported
// by its RulesMerged condition, published as an Event on that ConfigMap when it changes, and the outputs it feeds keep
// their previous content. This controller is the only writer of the vmrules ConfigMaps, each controlled by its
// regional ConfigMap.
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/config"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
	merge "kof.dev/kof/operator/rules"
)

// Name names the controller: the controller label of its metrics, its logger and the reporting controller of its
// events (every controller of the operator is named kof-<duty>).
const Name = "kof-rules"

// VMRulesValuesKey is the data key of a vmrules ConfigMap that the regional MCS reads through valuesFrom.
const VMRulesValuesKey = outputs.VMRulesKey

// Reconciler keeps the promxy rules ConfigMap and the vmrules ConfigMaps in line with the rule inputs. Client,
// Recorder, Namespace and RulesConfigMap are required.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Recorder emits the RulesMerged condition of faulty rule ConfigMaps as Events, when it changes.
	Recorder events.EventRecorder
	// Namespace is the release namespace: PrometheusRules are read and the promxy rules ConfigMap written there
	// (config RELEASE_NAMESPACE).
	Namespace string
	// RulesConfigMap is the promxy rules ConfigMap name (config KOF_PROMXY_RULES_CONFIGMAP).
	RulesConfigMap string

	once   sync.Once
	memory *phase.Memory // the RulesMerged condition of each rule input ConfigMap a problem named
}

// RBAC of this controller (collected by controller-gen into operator/config/rbac).
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=prometheusrules,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller with mgr. Every input or output event enqueues the one key
// (Namespace/RulesConfigMap): the merge always works on the whole rule set. It returns the builder's error.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil || r.Namespace == "" || r.RulesConfigMap == "" {
		return fmt.Errorf("setup %s controller: Client, Recorder, Namespace and RulesConfigMap are required", Name)
	}
	key := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.RulesConfigMap}}}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
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
	_, vmrules := l[kofv1.VMRulesClusterLabel]
	regional := l[kofv1.ClusterRoleLabel] == kofv1.RoleRegional && l[kofv1.GeneratedLabel] == kofv1.TrueValue
	output := o.GetNamespace() == r.Namespace && o.GetName() == r.RulesConfigMap
	return alert || record || regional || vmrules || output
}

// state is one merge: its inputs, the regional ConfigMaps that get vmrules, the previous and the merged outputs.
type state struct {
	in        merge.Input
	regionals []*corev1.ConfigMap
	prev, out merge.Output
	problems  []merge.Problem
}

// Reconcile implements reconcile.Reconciler in the one shape (operator/internal/phase).
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return phase.Reconcile[*state](ctx, r, req)
}

// Get starts a merge: the one key always exists.
func (r *Reconciler) Get(context.Context, reconcile.Request) (*state, bool, error) {
	return &state{}, true, nil
}

// Finalize has nothing to do: the outputs are owned by the regional ConfigMaps.
func (r *Reconciler) Finalize(context.Context, *state) (bool, error) { return false, nil }

// Phases returns inputs → previous outputs → merge → promxy rules → vmrules → prune.
func (r *Reconciler) Phases(*state) []phase.Phase[*state] {
	apply := kofv1.ReasonApplyFailed
	return []phase.Phase[*state]{
		{Name: "inputs", FailReason: apply, Run: r.inputs},
		{Name: "previous", FailReason: apply, Run: r.previous},
		{Name: "merge", Run: r.merge},
		{Name: "promxy-rules", FailReason: apply, Run: r.applyPromxyRules},
		{Name: "vmrules", FailReason: apply, Run: r.applyVMRules},
		{Name: "prune", FailReason: apply, Run: r.prune},
	}
}

// Publish reports the merge problems as the RulesMerged condition of the faulty input ConfigMaps (Events).
func (r *Reconciler) Publish(ctx context.Context, s *state, _ []phase.Outcome) error {
	r.report(ctx, s.problems)
	return nil
}

// inputs reads the PrometheusRules, the rule ConfigMaps (outputs.RulesInput) and the regional ConfigMaps.
func (r *Reconciler) inputs(ctx context.Context, s *state) (phase.Outcome, error) {
	var prs monitoringv1.PrometheusRuleList
	if err := r.Client.List(ctx, &prs, client.InNamespace(r.Namespace)); err != nil {
		return phase.Outcome{}, fmt.Errorf("list PrometheusRules in %s: %w", r.Namespace, err)
	}
	var sources []corev1.ConfigMap
	for _, label := range []string{kofv1.AlertRulesClusterLabel, kofv1.RecordRulesClusterLabel} {
		var cms corev1.ConfigMapList
		if err := r.Client.List(ctx, &cms, client.HasLabels{label}); err != nil {
			return phase.Outcome{}, fmt.Errorf("list ConfigMaps labelled %s: %w", label, err)
		}
		sources = append(sources, cms.Items...)
	}
	s.in = outputs.RulesInput(config.Config{ReleaseNamespace: r.Namespace}, prs.Items, sources)
	var cms corev1.ConfigMapList
	if err := r.Client.List(ctx, &cms, client.MatchingLabels{kofv1.ClusterRoleLabel: kofv1.RoleRegional, kofv1.GeneratedLabel: kofv1.TrueValue}); err != nil {
		return phase.Outcome{}, fmt.Errorf("list regional ConfigMaps: %w", err)
	}
	seen := map[string]bool{}
	for i := range cms.Items {
		cm := &cms.Items[i]
		name := cm.Data[discovery.KeyRegionalClusterName]
		if cm.Labels[kofv1.RegionlessLabel] == kofv1.TrueValue || name == "" || !cm.DeletionTimestamp.IsZero() ||
			seen[cm.Namespace+"/"+name] {
			continue // the regionless storage needs no vmrules ConfigMap
		}
		seen[cm.Namespace+"/"+name] = true
		cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		s.regionals = append(s.regionals, cm)
		s.in.Clusters = append(s.in.Clusters, name)
	}
	slices.SortFunc(s.regionals, func(a, b *corev1.ConfigMap) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return phase.Done(""), nil
}

// previous reads the current outputs, which Merge keeps for outputs fed by a faulty input.
func (r *Reconciler) previous(ctx context.Context, s *state) (phase.Outcome, error) {
	s.prev = merge.Output{PromxyFiles: map[string]string{}, VMRules: map[string]string{}}
	var cm corev1.ConfigMap
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.RulesConfigMap}, &cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return phase.Outcome{}, fmt.Errorf("get promxy rules ConfigMap: %w", err)
	}
	maps.Copy(s.prev.PromxyFiles, cm.Data)
	for _, reg := range s.regionals {
		name := reg.Data[discovery.KeyRegionalClusterName]
		var v corev1.ConfigMap
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: reg.Namespace, Name: names.VMRulesConfigMap(name)}, &v)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return phase.Outcome{}, fmt.Errorf("get vmrules ConfigMap of %s/%s: %w", reg.Namespace, name, err)
		}
		if values, ok := v.Data[VMRulesValuesKey]; ok {
			s.prev.VMRules[name] = values
		}
	}
	return phase.Done(""), nil
}

// merge merges the inputs (operator/rules.Merge); faulty inputs are reported and the outputs they feed kept.
func (r *Reconciler) merge(_ context.Context, s *state) (phase.Outcome, error) {
	s.out, s.problems = merge.Merge(s.in, s.prev)
	if len(s.problems) > 0 {
		return phase.Degraded(kofv1.ReasonInvalidSpec, fmt.Sprintf("%d rule input problem(s)", len(s.problems))), nil
	}
	return phase.Done(""), nil
}

func (r *Reconciler) applier() apply.Applier {
	return apply.Applier{Reader: r.Client, Writer: r.Client}
}

// applyPromxyRules applies the promxy rules ConfigMap's data (its keys only: the chart may own its labels).
func (r *Reconciler) applyPromxyRules(ctx context.Context, s *state) (phase.Outcome, error) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.RulesConfigMap}, Data: s.out.PromxyFiles}
	_, err := r.applier().Apply(ctx, cm)
	return phase.Done(""), err
}

// applyVMRules applies each regional's vmrules ConfigMap (outputs.VMRulesConfigMap), controlled by its regional
// ConfigMap.
func (r *Reconciler) applyVMRules(ctx context.Context, s *state) (phase.Outcome, error) {
	a := r.applier()
	for _, reg := range s.regionals {
		name := reg.Data[discovery.KeyRegionalClusterName]
		cm := outputs.VMRulesConfigMap(reg.Namespace, name, outputs.VMRulesValues(s.out, name))
		if err := a.Own(cm, reg); err != nil {
			return phase.Outcome{}, err
		}
		if _, err := a.Apply(ctx, cm); err != nil {
			return phase.Outcome{}, err
		}
	}
	return phase.Done(""), nil
}

// prune deletes vmrules ConfigMaps (label `k0rdent.mirantis.com/kof-record-vmrules-cluster-name`) of clusters that
// are no longer regional.
func (r *Reconciler) prune(ctx context.Context, s *state) (phase.Outcome, error) {
	want := map[types.NamespacedName]bool{}
	for _, reg := range s.regionals {
		want[types.NamespacedName{Namespace: reg.Namespace, Name: names.VMRulesConfigMap(reg.Data[discovery.KeyRegionalClusterName])}] = true
	}
	var cms corev1.ConfigMapList
	if err := r.Client.List(ctx, &cms, client.HasLabels{kofv1.VMRulesClusterLabel},
		client.MatchingLabels{kofv1.ManagedByLabel: kofv1.ManagedBy}); err != nil {
		return phase.Outcome{}, fmt.Errorf("list vmrules ConfigMaps: %w", err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		if want[client.ObjectKeyFromObject(cm)] {
			continue
		}
		if err := r.Client.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return phase.Outcome{}, fmt.Errorf("delete stale vmrules ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return phase.Done(""), nil
}

// report publishes the RulesMerged condition of every rule input ConfigMap a problem names (phase.Memory: one
// Event per change): False (reason InvalidSpec) with every problem of that ConfigMap, and True again once a
// ConfigMap reported before merges cleanly; every problem is also logged. A ConfigMap gone meanwhile is forgotten.
func (r *Reconciler) report(ctx context.Context, problems []merge.Problem) {
	log := ctrl.LoggerFrom(ctx)
	faults := map[types.NamespacedName][]string{}
	for _, p := range problems {
		log.Info("rule input left out", "source", p.Source, "problem", p.Err.Error())
		for _, src := range strings.Split(p.Source, ",") {
			if ns, name, ok := strings.Cut(src, "/"); ok {
				key := types.NamespacedName{Namespace: ns, Name: name}
				faults[key] = append(faults[key], p.Err.Error())
			}
		}
	}
	mem := r.mem()
	keys := slices.Collect(maps.Keys(faults))
	for _, key := range mem.Unsettled() {
		if _, ok := faults[key]; !ok {
			keys = append(keys, key)
		}
	}
	for _, key := range keys {
		cm := &corev1.ConfigMap{}
		if err := r.Client.Get(ctx, key, cm); err != nil {
			mem.Forget(key) // gone meanwhile: nothing to attach the event to
			continue
		}
		mem.Publish(cm, Merged(faults[key]))
	}
}

// Merged returns the RulesMerged condition of one rule input ConfigMap with the given problems: True (reason
// Succeeded) without any, else False (reason InvalidSpec) naming each.
func Merged(problems []string) metav1.Condition {
	if len(problems) == 0 {
		return metav1.Condition{Type: kofv1.ConditionRulesMerged, Status: metav1.ConditionTrue,
			Reason: kofv1.ReasonSucceeded, Message: "merged into the promxy and vmrules ConfigMaps"}
	}
	return metav1.Condition{Type: kofv1.ConditionRulesMerged, Status: metav1.ConditionFalse,
		Reason: kofv1.ReasonInvalidSpec, Message: strings.Join(problems, "; ")}
}

func (r *Reconciler) mem() *phase.Memory {
	r.once.Do(func() { r.memory = &phase.Memory{Recorder: r.Recorder, Action: kofv1.ActionMergeRules} })
	return r.memory
}
