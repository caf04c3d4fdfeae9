// Package promxyservergroup is the controller that turns PromxyServerGroups into promxy's config Secret.
//
// All PromxyServerGroups that carry the label `k0rdent.mirantis.com/secret-name: <S>` (in any namespace) make one
// Secret `<S>` in the promxy namespace, key `config.yaml`, with one server group each in namespace/name order
// (docs/contract.md, "Promxy configuration"). Basic auth credentials are read from the Secrets the groups reference, and
// those Secrets are watched. The Secret is written by server-side apply only when its content differs, and only
// then is every Running promxy pod asked to reload (HTTP POST `/-/reload`).
package promxyservergroup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/internal/phase"
	"kof.dev/kof/operator/promxy"
)

// Name names the controller: the controller label of its metrics, its logger and the reporting controller of its
// events (every controller of the operator is named kof-<duty>).
const Name = "kof-promxyservergroup"

// DefaultReloadPort is the port promxy listens on for HTTP (promxy's `--bind-addr` default :8082).
const DefaultReloadPort = 8082

// Reconciler keeps the promxy config Secrets in line with the PromxyServerGroups. Set every field except those
// marked optional before calling SetupWithManager.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads Secrets the cache may not hold: the promxy config Secret (the kof-mothership chart creates it
	// without the operator's label) and credential Secrets a user made. Optional; Client only when nil. Changes of
	// Secrets outside the cache are noticed on the next reconcile, not by the watch.
	APIReader client.Reader
	// Recorder emits events on PromxyServerGroups (transitions and failures only).
	Recorder events.EventRecorder
	// Namespace is where the promxy config Secrets and the promxy pods live (config RELEASE_NAMESPACE).
	Namespace string
	// PodSelector selects the promxy pods to reload (config KOF_PROMXY_POD_SELECTOR).
	PodSelector labels.Selector
	// Options carry the Alertmanager and remote_write URLs of the promxy configuration.
	Options promxy.Options
	// HTTPClient sends the reload requests; optional, http.DefaultClient when nil. Tests inject a client that
	// reaches an httptest server.
	HTTPClient *http.Client
	// ReloadPort is the promxy pods' HTTP port; optional: when 0, the pod's container port named `http`, else
	// DefaultReloadPort.
	ReloadPort int

	// SettleDelay is the wait before the follow-up reload after a change; optional, DefaultSettleDelay when 0,
	// no follow-up when negative.
	SettleDelay time.Duration
	// Now is the clock; optional, time.Now when nil.
	Now func() time.Time

	// statuses keeps the status each group was last patched with until the cache holds that patch, so a reconcile
	// in between writes it once (phase.Statuses).
	statuses phase.Statuses
	// reloaded remembers, per Secret, the config that every promxy pod last reloaded successfully.
	mu       sync.Mutex
	reloaded map[types.NamespacedName]reloadState
}

// RBAC of this controller (collected by controller-gen into operator/config/rbac).
// +kubebuilder:rbac:groups=kof.k0rdent.mirantis.com,resources=promxyservergroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=kof.k0rdent.mirantis.com,resources=promxyservergroups/status,verbs=get;patch;update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller with mgr: PromxyServerGroup events and events of the Secrets they
// reference (or that they name as config Secret) enqueue the config Secret's key. It returns the builder's error.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil || r.Recorder == nil || r.Namespace == "" || r.PodSelector == nil {
		return fmt.Errorf("setup %s controller: Client, Recorder, Namespace and PodSelector are required", Name)
	}
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &kofv1.PromxyServerGroup{}, configSecretIndex, func(o client.Object) []string {
		if name := o.GetLabels()[kofv1.SecretNameLabel]; name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("setup %s controller: index %s: %w", Name, configSecretIndex, err)
	}
	if err := idx.IndexField(ctx, &kofv1.PromxyServerGroup{}, credentialsIndex, func(o client.Object) []string {
		g := o.(*kofv1.PromxyServerGroup)
		if n := g.Spec.HTTPClient.BasicAuth.CredentialsSecretName; n != "" {
			return []string{g.Namespace + "/" + n}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("setup %s controller: index %s: %w", Name, credentialsIndex, err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		Watches(&kofv1.PromxyServerGroup{}, handler.EnqueueRequestsFromMapFunc(r.groupToSecret)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretToSecrets)).
		Complete(r)
}

// groupToSecret maps a PromxyServerGroup to the key of its config Secret.
func (r *Reconciler) groupToSecret(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[kofv1.SecretNameLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: name}}}
}

// Field indexes of PromxyServerGroups in the cache, so that a Secret event finds its groups without listing every
// group.
const (
	// configSecretIndex holds a group's config Secret name (label kofv1.SecretNameLabel).
	configSecretIndex = "kof.configSecret"
	// credentialsIndex holds "<namespace>/<name>" of the Secret a group's basic auth references.
	credentialsIndex = "kof.credentialsSecret"
)

// secretToSecrets maps a Secret to the config Secrets it feeds: itself when it is a config Secret (some group names
// it), and the config Secret of every PromxyServerGroup whose basic auth references it.
func (r *Reconciler) secretToSecrets(ctx context.Context, obj client.Object) []reconcile.Request {
	seen := map[string]bool{}
	var out []reconcile.Request
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: name}})
		}
	}
	if obj.GetNamespace() == r.Namespace {
		var own kofv1.PromxyServerGroupList
		if err := r.Client.List(ctx, &own, client.MatchingFields{configSecretIndex: obj.GetName()}, client.Limit(1),
			client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list PromxyServerGroups for a Secret event", "secret", client.ObjectKeyFromObject(obj))
			return nil
		}
		if len(own.Items) > 0 {
			add(obj.GetName())
		}
	}
	var refs kofv1.PromxyServerGroupList
	if err := r.Client.List(ctx, &refs, client.MatchingFields{credentialsIndex: obj.GetNamespace() + "/" + obj.GetName()},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list PromxyServerGroups for a Secret event", "secret", client.ObjectKeyFromObject(obj))
		return nil
	}
	for i := range refs.Items {
		add(refs.Items[i].Labels[kofv1.SecretNameLabel])
	}
	return out
}

// state is one reconcile of one promxy config Secret: its groups in namespace/name order, what each group's own
// checks found, and the rendered config.
type state struct {
	key    types.NamespacedName
	groups []kofv1.PromxyServerGroup
	// own is the outcome of each group's own checks (spec, credentials); skip marks groups being deleted.
	own    []phase.Outcome
	skip   []bool
	inputs []promxy.Group
	config []byte
}

// Reconcile builds the promxy config Secret req (namespace = promxy namespace, name = secret-name label value) from
// its PromxyServerGroups, applies it when it differs, reloads promxy when the config changed (and once more after
// SettleDelay, asking to be requeued for it), and patches the status of each group once at the end, in the one
// shape (operator/internal/phase). Transient API errors and failed reloads are returned for backoff; no Running
// promxy pod is a wait (requeue) with a False condition.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return phase.Reconcile[*state](ctx, r, req)
}

// Get lists the groups of the Secret req (none is a valid state: the Secret then holds no server group).
func (r *Reconciler) Get(ctx context.Context, req reconcile.Request) (*state, bool, error) {
	var list kofv1.PromxyServerGroupList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{kofv1.SecretNameLabel: req.Name}); err != nil {
		return nil, false, fmt.Errorf("list PromxyServerGroups of secret %s: %w", req.Name, err)
	}
	groups := slices.Clone(list.Items)
	slices.SortFunc(groups, func(a, b kofv1.PromxyServerGroup) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return &state{key: req.NamespacedName, groups: groups, own: make([]phase.Outcome, len(groups)),
		skip: make([]bool, len(groups))}, true, nil
}

// Finalize has nothing to do: PromxyServerGroups carry no finalizer (a deleted group leaves the Secret on the
// next reconcile).
func (r *Reconciler) Finalize(context.Context, *state) (bool, error) { return false, nil }

// Phases returns secret name → groups → render → apply → reload.
func (r *Reconciler) Phases(*state) []phase.Phase[*state] {
	return []phase.Phase[*state]{
		{Name: "secret-name", Run: r.checkName},
		{Name: "groups", FailReason: kofv1.ReasonApplyFailed, Run: r.collect},
		{Name: "render", Run: r.render},
		{Name: "apply", FailReason: kofv1.ReasonApplyFailed, Run: r.applySecret},
		{Name: "reload", FailReason: kofv1.ReasonReloadFailed, Run: r.reload},
	}
}

// checkName stops on a secret-name label that is no Secret name.
func (r *Reconciler) checkName(_ context.Context, s *state) (phase.Outcome, error) {
	if problems := validation.IsDNS1123Subdomain(s.key.Name); len(problems) > 0 {
		return phase.Invalid(kofv1.ReasonInvalidSpec, fmt.Sprintf("metadata.labels[%s]: %q is not a Secret name (%s); fix the label",
			kofv1.SecretNameLabel, s.key.Name, strings.Join(problems, "; "))), nil
	}
	return phase.Done(""), nil
}

// render renders the promxy configuration of the usable groups.
func (r *Reconciler) render(_ context.Context, s *state) (phase.Outcome, error) {
	config, err := promxy.Render(r.Options, s.inputs)
	if err != nil {
		// Options are validated at start-up and groups before rendering, so this is a configuration fault.
		return phase.Invalid(kofv1.ReasonInvalidSpec, err.Error()), nil
	}
	s.config = config
	return phase.Done("part of promxy config Secret " + s.key.Name), nil
}

// reload asks promxy to reload a changed config (reloadIfChanged).
func (r *Reconciler) reload(ctx context.Context, s *state) (phase.Outcome, error) {
	wait, err := r.reloadIfChanged(ctx, s.key, s.config)
	var none *noPodsError
	if errors.As(err, &none) {
		return phase.Wait(kofv1.ReasonNoPromxyPods, err.Error(), NoPodsRetry), nil
	}
	if err != nil {
		return phase.Outcome{}, err
	}
	return phase.Outcome{Requeue: wait}, nil
}

// collect turns the groups into promxy inputs, recording in s.own why a group is left out. Missing credential
// Secrets or keys leave the group out (the Secret watch brings it back); other read errors are returned.
func (r *Reconciler) collect(ctx context.Context, s *state) (phase.Outcome, error) {
	for i := range s.groups {
		g := &s.groups[i]
		if !g.DeletionTimestamp.IsZero() {
			s.skip[i] = true
			continue
		}
		in := promxy.Group{
			Namespace: g.Namespace, Name: g.Name, Cluster: g.Spec.ClusterName,
			Targets: g.Spec.Targets, PathPrefix: g.Spec.PathPrefix, Scheme: g.Spec.Scheme,
			DialTimeout:        g.Spec.HTTPClient.DialTimeout,
			InsecureSkipVerify: g.Spec.HTTPClient.TLSConfig.InsecureSkipVerify,
		}
		if in.Scheme == "" {
			in.Scheme = kofv1.SchemeHTTPS
		}
		if problems := in.Validate(); len(problems) > 0 {
			s.own[i] = phase.Invalid(kofv1.ReasonInvalidSpec, joinErrors(problems))
			continue
		}
		auth, reason, err := r.basicAuth(ctx, g)
		if err != nil {
			if reason == "" {
				return phase.Outcome{}, err
			}
			s.own[i] = phase.Invalid(reason, err.Error())
			continue
		}
		in.BasicAuth = auth
		s.inputs = append(s.inputs, in)
	}
	return phase.Done(""), nil
}

// basicAuth reads the credentials a group references. It returns nil when the group has none; a reason with the
// error when the user must fix something (missing Secret or key); no reason for transient API errors.
func (r *Reconciler) basicAuth(ctx context.Context, g *kofv1.PromxyServerGroup) (*promxy.BasicAuth, string, error) {
	ref := g.Spec.HTTPClient.BasicAuth
	if ref.CredentialsSecretName == "" {
		return nil, "", nil
	}
	var s corev1.Secret
	key := types.NamespacedName{Namespace: g.Namespace, Name: ref.CredentialsSecretName}
	if err := r.getSecret(ctx, key, &s, false); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, kofv1.ReasonNotFound, fmt.Errorf("spec.http_client.basic_auth.credentials_secret_name: Secret %s not found; create it or fix the name", key)
		}
		return nil, "", fmt.Errorf("get credentials Secret %s: %w", key, err)
	}
	user, okUser := s.Data[ref.UsernameKey]
	pass, okPass := s.Data[ref.PasswordKey]
	if !okUser || !okPass {
		return nil, kofv1.ReasonNotFound, fmt.Errorf("spec.http_client.basic_auth: Secret %s lacks key %q or %q; fix username_key/password_key", key, ref.UsernameKey, ref.PasswordKey)
	}
	return &promxy.BasicAuth{Username: string(user), Password: string(pass)}, "", nil
}

// applySecret applies the config Secret's type and `config.yaml` when they differ from what this field manager
// owns (apply.Applier, reading the Secret from the API server: the chart makes it without the operator's label).
// Only that key is applied: the kof-mothership chart may create the Secret with its own labels, and this field
// manager must not fight Helm over them.
func (r *Reconciler) applySecret(ctx context.Context, s *state) (phase.Outcome, error) {
	reader := client.Reader(r.Client)
	if r.APIReader != nil {
		reader = r.APIReader
	}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: s.key.Namespace, Name: s.key.Name},
		Type:       corev1.SecretTypeOpaque, Data: map[string][]byte{promxy.ConfigKey: s.config}}
	written, err := apply.Applier{Reader: reader, Writer: r.Client}.Apply(ctx, secret)
	if err != nil {
		return phase.Outcome{}, err
	}
	if written {
		ctrl.LoggerFrom(ctx).Info("promxy config Secret written", "secret", s.key, "serverGroups", len(s.inputs))
	}
	return phase.Done(""), nil
}

// getSecret reads a Secret through the cache, or straight from the API server when direct is set or the cache does
// not hold it (and APIReader is set).
func (r *Reconciler) getSecret(ctx context.Context, key types.NamespacedName, s *corev1.Secret, direct bool) error {
	if direct && r.APIReader != nil {
		return r.APIReader.Get(ctx, key, s)
	}
	err := r.Client.Get(ctx, key, s)
	if apierrors.IsNotFound(err) && r.APIReader != nil {
		return r.APIReader.Get(ctx, key, s)
	}
	return err
}

// joinErrors joins error messages with "; ".
func joinErrors(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}
