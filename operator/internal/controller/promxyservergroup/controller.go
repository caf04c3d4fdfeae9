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
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kofv1 "kof.dev/kof/operator/api/v1beta1"
	"kof.dev/kof/operator/internal/apply"
	"kof.dev/kof/operator/promxy"
)

// ControllerName names the controller (metrics, logs, events).
const ControllerName = "promxyservergroup"

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
		return fmt.Errorf("setup %s controller: Client, Recorder, Namespace and PodSelector are required", ControllerName)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
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

// secretToSecrets maps a Secret to the config Secrets it feeds: itself when it is a config Secret, and the config
// Secret of every PromxyServerGroup whose basic auth references it.
func (r *Reconciler) secretToSecrets(ctx context.Context, obj client.Object) []reconcile.Request {
	var list kofv1.PromxyServerGroupList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list PromxyServerGroups for a Secret event", "secret", client.ObjectKeyFromObject(obj))
		return nil
	}
	seen := map[string]bool{}
	var out []reconcile.Request
	for _, g := range list.Items {
		name := g.Labels[kofv1.SecretNameLabel]
		if name == "" || seen[name] {
			continue
		}
		own := obj.GetNamespace() == r.Namespace && obj.GetName() == name
		ref := obj.GetNamespace() == g.Namespace && obj.GetName() == g.Spec.HTTPClient.BasicAuth.CredentialsSecretName
		if own || ref {
			seen[name] = true
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: name}})
		}
	}
	return out
}

// Reconcile builds the promxy config Secret req (namespace = promxy namespace, name = secret-name label value) from
// its PromxyServerGroups, applies it when it differs, reloads promxy when the config changed (and once more after
// SettleDelay, asking to be requeued for it), and patches the status of each group once at the end. Transient API
// errors are returned for backoff.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (result reconcile.Result, err error) {
	log := ctrl.LoggerFrom(ctx).WithValues("secret", req.NamespacedName)
	var list kofv1.PromxyServerGroupList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{kofv1.SecretNameLabel: req.Name}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list PromxyServerGroups of secret %s: %w", req.Name, err)
	}
	groups := slices.Clone(list.Items)
	slices.SortFunc(groups, func(a, b kofv1.PromxyServerGroup) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	outcomes := make([]outcome, len(groups))
	defer func() {
		if perr := r.patchStatuses(ctx, groups, outcomes); perr != nil && err == nil {
			err = perr
		}
	}()
	if problems := validation.IsDNS1123Subdomain(req.Name); len(problems) > 0 {
		markAll(outcomes, failure(kofv1.ReasonInvalidSpec, fmt.Sprintf("metadata.labels[%s]: %q is not a Secret name (%s); fix the label",
			kofv1.SecretNameLabel, req.Name, strings.Join(problems, "; "))))
		return reconcile.Result{}, nil
	}

	inputs, err := r.collect(ctx, groups, outcomes)
	if err != nil {
		return reconcile.Result{}, err
	}
	config, err := promxy.Render(r.Options, inputs)
	if err != nil {
		// Options are validated at start-up and groups before rendering, so this is a configuration fault.
		markAll(outcomes, failure(kofv1.ReasonInvalidSpec, err.Error()))
		return reconcile.Result{}, nil
	}
	written, err := r.applySecret(ctx, req.NamespacedName, config)
	if err != nil {
		markAll(outcomes, failure(kofv1.ReasonApplyFailed, err.Error()))
		return reconcile.Result{}, err
	}
	if written {
		log.Info("promxy config Secret written", "serverGroups", len(inputs))
	}
	wait, err := r.reloadIfChanged(ctx, req.NamespacedName, config)
	if err != nil {
		markAll(outcomes, failure(kofv1.ReasonReloadFailed, err.Error()))
		return reconcile.Result{}, err
	}
	markAll(outcomes, outcome{ok: true, reason: kofv1.ReasonSucceeded, message: "part of promxy config Secret " + req.Name})
	return reconcile.Result{RequeueAfter: wait}, nil
}

// collect turns the groups into promxy inputs, recording in outcomes why a group is left out. Missing credential
// Secrets or keys leave the group out (the Secret watch brings it back); other read errors are returned.
func (r *Reconciler) collect(ctx context.Context, groups []kofv1.PromxyServerGroup, outcomes []outcome) ([]promxy.Group, error) {
	var inputs []promxy.Group
	for i := range groups {
		g := &groups[i]
		if !g.DeletionTimestamp.IsZero() {
			outcomes[i] = outcome{skip: true}
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
			outcomes[i] = failure(kofv1.ReasonInvalidSpec, joinErrors(problems))
			continue
		}
		auth, reason, err := r.basicAuth(ctx, g)
		if err != nil {
			if reason == "" {
				return nil, err
			}
			outcomes[i] = failure(reason, err.Error())
			continue
		}
		in.BasicAuth = auth
		inputs = append(inputs, in)
	}
	return inputs, nil
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

// applySecret applies the config Secret's `config.yaml` when it differs from config and reports whether it wrote.
func (r *Reconciler) applySecret(ctx context.Context, key types.NamespacedName, config []byte) (bool, error) {
	var current corev1.Secret
	err := r.getSecret(ctx, key, &current, true)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("get promxy config Secret %s: %w", key, err)
	}
	if err == nil && string(current.Data[promxy.ConfigKey]) == string(config) {
		return false, nil
	}
	// Only the config key is applied: the kof-mothership chart may create the Secret with its own labels, and this
	// field manager must not fight Helm over them.
	ac := corev1ac.Secret(key.Name, key.Namespace).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{promxy.ConfigKey: config})
	if err := r.Client.Apply(ctx, ac, client.FieldOwner(apply.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("apply promxy config Secret %s: %w", key, err)
	}
	return true, nil
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
