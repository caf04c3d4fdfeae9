package clusterdeployment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/discovery"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/bundle"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/names"
	"kof.dev/kof/operator/outputs"
)

// template returns the ClusterTemplate of cd, or nil when it does not exist (the cloud is then unknown). The
// template is the cache's own object, not a copy: callers only read it.
func (r *Reconciler) template(ctx context.Context, cd *kcmv1.ClusterDeployment) (*kcmv1.ClusterTemplate, error) {
	if cd.Spec.Template == "" {
		return nil, nil
	}
	tpl := &kcmv1.ClusterTemplate{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.Template}, tpl,
		ctrl.UnsafeDisableDeepCopy)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get clustertemplate %s/%s: %w", cd.Namespace, cd.Spec.Template, err)
	}
	return tpl, nil
}

// view returns the discovery view of cd and the error of reading it (discovery.FromClusterDeployment); the second
// error is an API failure.
func (r *Reconciler) view(ctx context.Context, cd *kcmv1.ClusterDeployment) (discovery.Cluster, error, error) {
	tpl, err := r.template(ctx, cd)
	if err != nil {
		return discovery.Cluster{}, nil, err
	}
	c, viewErr := discovery.FromClusterDeployment(cd, tpl)
	return c, viewErr, nil
}

// problems turns the problems of an output into the outcome of the phase that wrote it: the first fatal one stops
// the reconcile, others are reported with the note of what was written.
func problems(ps []outputs.Problem, note string) phase.Outcome {
	if p := outputs.Fatal(ps); p != nil {
		return phase.Invalid(p.Reason, p.Error())
	}
	if len(ps) == 0 {
		return phase.Done(note)
	}
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return phase.Degraded(ps[0].Reason, strings.Join(msgs, "; ")+" ("+note+")")
}

// regionalConfigMap writes the regional ConfigMap `kof-<c>` (outputs.ForRegional), controlled by the
// ClusterDeployment.
func (r *Reconciler) regionalConfigMap(ctx context.Context, s *state) (phase.Outcome, error) {
	c, viewErr, err := r.view(ctx, s.cd)
	if err != nil {
		return phase.Outcome{}, err
	}
	s.regional, err = r.keepHTTPConfig(ctx, outputs.ForRegional(r.Config, c, viewErr))
	if err != nil {
		return phase.Outcome{}, err
	}
	if s.regional.Unused {
		if err := r.deleteOwned(ctx, s.cd, regionalObjects(s.cd)); err != nil {
			return phase.Outcome{}, err
		}
		return phase.Done("regionless mode: the management cluster stores the data, this regional cluster gets no " +
			"ConfigMap"), nil
	}
	cm := s.regional.ConfigMap()
	if cm == nil {
		return problems(s.regional.Problems, ""), nil
	}
	a := r.applier()
	if err := a.Own(cm, s.cd); err != nil {
		return phase.Outcome{}, err
	}
	if _, err := a.Apply(ctx, cm); err != nil {
		return phase.Outcome{}, err
	}
	return problems(s.regional.Problems, "regional ConfigMap "+cm.Name+" is up to date"), nil
}

// keepHTTPConfig returns reg with the last valid `kof_http_config` of its ConfigMap `kof-<c>` kept when its
// `kof-http-config` annotation is malformed (outputs.Regional.KeepHTTPConfig); the ConfigMap is read only then. The
// error is an API failure other than NotFound.
func (r *Reconciler) keepHTTPConfig(ctx context.Context, reg outputs.Regional) (outputs.Regional, error) {
	if !reg.HTTPConfigMalformed() {
		return reg, nil
	}
	var cm corev1.ConfigMap
	key := types.NamespacedName{Namespace: reg.Cluster.Namespace, Name: names.RegionalConfigMap(reg.Cluster.Name)}
	switch err := r.Client.Get(ctx, key, &cm); {
	case apierrors.IsNotFound(err):
		return reg, nil
	case err != nil:
		return reg, fmt.Errorf("get configmap %s: %w", key, err)
	}
	return reg.KeepHTTPConfig(cm.Data), nil
}

// regionPropagation keeps the propagation MCSs of a KCM region cluster (outputs.RegionPropagation) and removes them
// from any other regional.
func (r *Reconciler) regionPropagation(ctx context.Context, s *state) (phase.Outcome, error) {
	a := r.applier()
	mcss, err := outputs.RegionPropagation(r.Config, s.regional)
	if err != nil {
		return phase.Invalid(kofv1.ReasonInvalidSpec, err.Error()), nil
	}
	if len(mcss) == 0 {
		for _, n := range []string{names.ChildConfigPropagation(s.cd.Namespace, s.cd.Name),
			names.VMRulesPropagation(s.cd.Namespace, s.cd.Name)} {
			if _, err := a.Delete(ctx, &kcmv1.MultiClusterService{ObjectMeta: objectMeta(n, "")}); err != nil {
				return phase.Outcome{}, err
			}
		}
		return phase.Done(""), nil
	}
	for _, m := range mcss {
		if _, err := a.Apply(ctx, m); err != nil {
			return phase.Outcome{}, err
		}
	}
	return phase.Done(fmt.Sprintf("KCM region propagation %s and %s are up to date", mcss[0].Name, mcss[1].Name)), nil
}

// bind binds the child to its regional (outputs.ForChild) over the regional ClusterDeployments the cache holds.
func (r *Reconciler) bind(ctx context.Context, s *state) (phase.Outcome, error) {
	c, viewErr, err := r.view(ctx, s.cd)
	if err != nil {
		return phase.Outcome{}, err
	}
	var regionals []outputs.Regional
	var others []discovery.Cluster
	if !r.Config.Regionless && viewErr == nil {
		if regionals, err = r.regionals(ctx); err != nil {
			return phase.Outcome{}, err
		}
		if others, err = r.named(ctx, c, regionals); err != nil {
			return phase.Outcome{}, err
		}
	}
	s.child = outputs.ForChild(r.Config, c, viewErr, regionals, others)
	if p := outputs.Fatal(s.child.Problems); p != nil {
		return phase.Invalid(p.Reason, p.Error()), nil
	}
	return phase.Done(""), nil
}

// regionals returns outputs.ForRegional of every regional ClusterDeployment the cache holds (not being deleted). The
// result is kept in r.snapshot until a regional or a ClusterTemplate changes, so a burst of child reconciles lists
// the regionals once; listRegionals finds them by roleIndex and takes each one's view from r.views while the regional
// and its ClusterTemplate keep their resource versions, so no regional is parsed again.
func (r *Reconciler) regionals(ctx context.Context) ([]outputs.Regional, error) {
	tag := r.snapshot.changes.Load()
	if list, ok := r.snapshot.get(tag); ok {
		return list, nil
	}
	out, err := r.listRegionals(ctx)
	if err == nil {
		r.snapshot.put(tag, out)
	}
	return slices.Clone(out), err
}

// regionalSnapshot keeps the result of listRegionals until a regional ClusterDeployment or a ClusterTemplate
// changes: its invalidator handler (SetupWithManager) counts their events, which arrive after the cache holds the
// change, and a result is only used while the count is the one read before it was computed. It is safe for
// concurrent reconciles.
type regionalSnapshot struct {
	changes atomic.Uint64
	mu      sync.Mutex
	tag     uint64
	valid   bool
	list    []outputs.Regional
}

// get returns a copy of the kept list when it was computed at change count tag.
func (s *regionalSnapshot) get(tag uint64) ([]outputs.Regional, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.valid || s.tag != tag {
		return nil, false
	}
	return slices.Clone(s.list), true
}

func (s *regionalSnapshot) put(tag uint64, list []outputs.Regional) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tag, s.valid, s.list = tag, true, list
}

// listRegionals computes what regionals returns from the cache. The lists are read without copies (nothing here
// changes them).
func (r *Reconciler) listRegionals(ctx context.Context) ([]outputs.Regional, error) {
	var list kcmv1.ClusterDeploymentList
	if err := r.Client.List(ctx, &list, ctrl.MatchingFields{roleIndex: kofv1.RoleRegional},
		ctrl.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list regional clusterdeployments: %w", err)
	}
	// One list of the templates instead of a read per regional: every cache read pays a REST mapping.
	var tpls kcmv1.ClusterTemplateList
	if err := r.Client.List(ctx, &tpls, ctrl.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list clustertemplates: %w", err)
	}
	templates := make(map[types.NamespacedName]*kcmv1.ClusterTemplate, len(tpls.Items))
	for i := range tpls.Items {
		templates[types.NamespacedName{Namespace: tpls.Items[i].Namespace, Name: tpls.Items[i].Name}] = &tpls.Items[i]
	}
	out := make([]outputs.Regional, 0, len(list.Items))
	listed := make(map[types.UID]bool, len(list.Items))
	defer func() { r.views.keepOnly(listed) }() // a regional gone or no longer regional is forgotten
	for i := range list.Items {
		cd := &list.Items[i]
		if !cd.DeletionTimestamp.IsZero() {
			continue
		}
		listed[cd.UID] = true
		tpl := templates[types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.Template}]
		tplVersion := ""
		if tpl != nil {
			tplVersion = tpl.ResourceVersion
		}
		reg, ok := r.views.get(cd, tplVersion)
		if !ok {
			c, viewErr := discovery.FromClusterDeployment(cd, tpl)
			reg = outputs.ForRegional(r.Config, c, viewErr)
			r.views.put(cd, tplVersion, reg)
		}
		reg, err := r.keepHTTPConfig(ctx, reg)
		if err != nil {
			return nil, err
		}
		out = append(out, reg)
	}
	return out, nil
}

// regionalViews keeps outputs.ForRegional of each regional ClusterDeployment (by UID) with the resource versions of
// the regional and its ClusterTemplate it was computed from. It is safe for concurrent reconciles.
type regionalViews struct {
	mu sync.Mutex
	m  map[types.UID]regionalView
}

type regionalView struct {
	version, template string
	regional          outputs.Regional
}

// get returns the kept view of cd when cd and its template (resource version tpl, "" when there is none) are still
// the versions it was computed from.
func (v *regionalViews) get(cd *kcmv1.ClusterDeployment, tpl string) (outputs.Regional, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.m[cd.UID]
	if !ok || e.version != cd.ResourceVersion || e.template != tpl {
		return outputs.Regional{}, false
	}
	return e.regional, true
}

func (v *regionalViews) put(cd *kcmv1.ClusterDeployment, tpl string, reg outputs.Regional) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[types.UID]regionalView{}
	}
	v.m[cd.UID] = regionalView{version: cd.ResourceVersion, template: tpl, regional: reg}
}

// keepOnly drops the kept views of every ClusterDeployment whose UID is not in uids.
func (v *regionalViews) keepOnly(uids map[types.UID]bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for uid := range v.m {
		if !uids[uid] {
			delete(v.m, uid)
		}
	}
}

// forget drops the kept view of the ClusterDeployment with uid.
func (v *regionalViews) forget(uid types.UID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, uid)
}

// named returns the ClusterDeployment the child's regional label names when it is not among regionals (so that
// the binding can say it is no regional), nil when there is none or it is outside the watch scope.
func (r *Reconciler) named(ctx context.Context, child discovery.Cluster, regionals []outputs.Regional) ([]discovery.Cluster, error) {
	ref, ok := discovery.ExplicitRegional(child)
	if !ok || !r.Config.Watches(ref.Namespace) {
		return nil, nil
	}
	for _, reg := range regionals {
		if reg.Ref() == ref {
			return nil, nil
		}
	}
	cd := &kcmv1.ClusterDeployment{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, cd)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get clusterdeployment %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return []discovery.Cluster{{Name: cd.Name, Namespace: cd.Namespace, Role: discovery.Role(cd), Labels: cd.Labels}}, nil
}

// childObjects writes the child ConfigMap (childConfigMap) and the child's VMUser bundle (bundle) at once, since
// neither reads the other: a reconcile waits for one round trip fewer. A problem of the ConfigMap is the outcome
// (as the condition would report it alone); otherwise the outcome notes both.
func (r *Reconciler) childObjects(ctx context.Context, s *state) (phase.Outcome, error) {
	var cmOut, bundleOut phase.Outcome
	var cmErr, bundleErr error
	var wg sync.WaitGroup
	wg.Go(func() { cmOut, cmErr = r.childConfigMap(ctx, s) })
	wg.Go(func() { bundleOut, bundleErr = r.bundle(ctx, s) })
	wg.Wait()
	if err := errors.Join(cmErr, bundleErr); err != nil {
		return phase.Outcome{}, err
	}
	if cmOut.Failed {
		return cmOut, nil
	}
	return phase.Done(cmOut.Message + "; " + bundleOut.Message), nil
}

// childConfigMap writes the child ConfigMap (outputs.Child.ConfigMap), controlled by the ClusterDeployment.
func (r *Reconciler) childConfigMap(ctx context.Context, s *state) (phase.Outcome, error) {
	cm := s.child.ConfigMap()
	a := r.applier()
	if err := a.Own(cm, s.cd); err != nil {
		return phase.Outcome{}, err
	}
	if _, err := a.Apply(ctx, cm); err != nil {
		return phase.Outcome{}, err
	}
	return problems(s.child.Problems, fmt.Sprintf("child ConfigMap %s is up to date (regional %s/%s)", cm.Name,
		s.child.Regional.Namespace, s.child.Regional.Name)), nil
}

// bundle keeps the child's VMUser bundle (outputs.ChildBundle).
func (r *Reconciler) bundle(ctx context.Context, s *state) (phase.Outcome, error) {
	b := outputs.ChildBundle(r.Config, s.child)
	if _, err := r.keeper().Ensure(ctx, b, s.cd); err != nil {
		return phase.Outcome{}, err
	}
	return phase.Done("VMUser " + names.VMUser(b.Base) + " is up to date"), nil
}

// removeLegacy deletes, once per ClusterDeployment and process, the bundle an earlier KOF release named with
// decimal Adler-32; it runs only after the replacement bundle was written. The objects are looked up through the
// API reader because the cache holds only objects this operator labelled.
func (r *Reconciler) removeLegacy(ctx context.Context, s *state) (phase.Outcome, error) {
	if r.APIReader == nil {
		return phase.Done(""), nil
	}
	cd := s.cd
	key := types.NamespacedName{Namespace: cd.Namespace, Name: cd.Name}
	keeper := bundle.Keeper{Applier: apply.Applier{Reader: r.APIReader, Writer: r.Client}, Config: r.Config}
	if err := r.legacy.Remove(ctx, keeper, key, cd.Namespace, names.LegacyChildVMUserBase(cd.Namespace, cd.Name)); err != nil {
		return phase.Outcome{}, fmt.Errorf("remove legacy bundle of %s: %w", key, err)
	}
	return phase.Done(""), nil
}
