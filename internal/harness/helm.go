package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/manifest"
)

// helmDriver is where Helm keeps release history: Secrets in the release namespace, as the helm CLI does.
const helmDriver = "secret"

// helmTimeout bounds one Helm action (nothing waits for Pods: the control plane runs none).
const helmTimeout = 2 * time.Minute

// Helm installs, upgrades and uninstalls charts through the Helm SDK (helm.sh/helm/v3/pkg/action) — real
// releases with hooks and history — after checking every object the release would write with strict server-side
// validation (Helm's own writes only warn about unknown fields).
type Helm struct {
	// Kubeconfig is the kubeconfig file of the target API server.
	Kubeconfig string
	// Client validates objects before they are written (strictCheck) and creates release namespaces.
	Client client.Client
	// Debug receives Helm's debug log; nil discards it.
	Debug func(format string, v ...any)
}

// Release is one Helm release to install or upgrade.
type Release struct {
	// Name and Namespace of the release; the namespace is created when missing.
	Name, Namespace string
	// ChartDir is the chart directory.
	ChartDir string
	// Values are the user values (`helm -f`); nil means none.
	Values map[string]any
}

func (h *Helm) config(namespace string) (*action.Configuration, error) {
	cfg := &action.Configuration{}
	debug := h.Debug
	if debug == nil {
		debug = func(string, ...any) {}
	}
	if err := cfg.Init(kube.GetConfig(h.Kubeconfig, "", namespace), namespace, helmDriver, debug); err != nil {
		return nil, fmt.Errorf("helm configuration for namespace %q: %w", namespace, err)
	}
	return cfg, nil
}

// Get returns the deployed release name in namespace, or nil when there is none. Errors are Helm's storage errors.
func (h *Helm) Get(name, namespace string) (*release.Release, error) {
	cfg, err := h.config(namespace)
	if err != nil {
		return nil, err
	}
	rel, err := action.NewGet(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get release %s/%s: %w", namespace, name, err)
	}
	return rel, nil
}

// Install installs r, or upgrades it when a release of that name exists (`helm upgrade --install`). It returns the
// new release (revision 1 for an install). Errors name the release and the step: chart load, strict validation of a
// rendered object, or the Helm action.
func (h *Helm) Install(ctx context.Context, r Release) (*release.Release, error) {
	existing, err := h.Get(r.Name, r.Namespace)
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, h.Client, r.Namespace, nil); err != nil {
		return nil, err
	}
	chrt, err := loader.Load(r.ChartDir)
	if err != nil {
		return nil, fmt.Errorf("load chart %q: %w", r.ChartDir, err)
	}
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return nil, err
	}
	vals := r.Values
	if vals == nil {
		vals = map[string]any{}
	}
	if existing != nil {
		return h.upgrade(ctx, cfg, r, chrt, vals)
	}
	dry := action.NewInstall(cfg)
	dry.ReleaseName, dry.Namespace = r.Name, r.Namespace
	dry.DryRun, dry.DryRunOption = true, "server"
	planned, err := dry.RunWithContext(ctx, chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("helm install %s/%s (dry run): %w", r.Namespace, r.Name, err)
	}
	if err := h.checkRelease(ctx, planned); err != nil {
		return nil, fmt.Errorf("helm install %s/%s: %w", r.Namespace, r.Name, err)
	}
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace, inst.Timeout = r.Name, r.Namespace, helmTimeout
	rel, err := inst.RunWithContext(ctx, chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("helm install %s/%s: %w", r.Namespace, r.Name, err)
	}
	return rel, nil
}

func (h *Helm) upgrade(ctx context.Context, cfg *action.Configuration, r Release, chrt *chart.Chart, vals map[string]any) (*release.Release, error) {
	dry := action.NewUpgrade(cfg)
	dry.Namespace, dry.DryRun, dry.DryRunOption = r.Namespace, true, "server"
	planned, err := dry.RunWithContext(ctx, r.Name, chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("helm upgrade %s/%s (dry run): %w", r.Namespace, r.Name, err)
	}
	if err := h.checkRelease(ctx, planned); err != nil {
		return nil, fmt.Errorf("helm upgrade %s/%s: %w", r.Namespace, r.Name, err)
	}
	up := action.NewUpgrade(cfg)
	up.Namespace, up.Timeout = r.Namespace, helmTimeout
	rel, err := up.RunWithContext(ctx, r.Name, chrt, vals)
	if err != nil {
		return nil, fmt.Errorf("helm upgrade %s/%s: %w", r.Namespace, r.Name, err)
	}
	return rel, nil
}

// checkRelease validates every object of a planned release (manifest and hooks) strictly against the API server.
// It returns every failure at once.
func (h *Helm) checkRelease(ctx context.Context, rel *release.Release) error {
	docs := map[string]string{"manifest": rel.Manifest}
	for _, hook := range rel.Hooks {
		docs[hook.Path] += "\n---\n" + hook.Manifest
	}
	set, err := manifest.Parse(docs)
	if err != nil {
		return fmt.Errorf("parse rendered manifest: %w", err)
	}
	var errs []error
	for _, obj := range set.Objects() {
		if obj.GetNamespace() == "" && namespaced(obj) {
			obj = obj.DeepCopy()
			obj.SetNamespace(rel.Namespace)
		}
		if err := strictCheck(ctx, h.Client, obj); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// namespaced reports whether obj's kind is namespaced; kinds the API server does not know count as namespaced (the
// check then fails with the server's own message).
func namespaced(obj interface {
	GetAPIVersion() string
	GetKind() string
}) bool {
	switch obj.GetKind() {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "ClusterIssuer",
		"MultiClusterService", "StorageClass", "PriorityClass", "ValidatingWebhookConfiguration",
		"MutatingWebhookConfiguration", "APIService", "GatewayClass", "ClusterProfile":
		return false
	}
	return true
}

// Uninstall uninstalls the release name in namespace (`helm uninstall`); a missing release is no error. It
// returns Helm's error naming the release.
func (h *Helm) Uninstall(name, namespace string) error {
	cfg, err := h.config(namespace)
	if err != nil {
		return err
	}
	un := action.NewUninstall(cfg)
	un.Timeout = helmTimeout
	un.IgnoreNotFound = true
	if _, err := un.Run(name); err != nil {
		return fmt.Errorf("helm uninstall %s/%s: %w", namespace, name, err)
	}
	return nil
}
