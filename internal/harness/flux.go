package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"kof.dev/kof/chartlib/flux"
	"kof.dev/kof/internal/proc"
)

// Flux API versions of the objects the harness reads (helm-controller api/v2, source-controller api/v1).
const (
	helmReleaseAPIVersion = "helm.toolkit.fluxcd.io/v2"
	sourceAPIVersion      = "source.toolkit.fluxcd.io/v1"
)

// conditionReady is the condition Flux reports a reconciled object with (fluxcd/pkg/apis/meta ReadyCondition).
const conditionReady = "Ready"

// Names of the Flux controller binaries in bin/ (ci/tools/source-controller.sh, ci/tools/helm-controller.sh).
const (
	SourceController = "source-controller"
	HelmController   = "helm-controller"
)

// fluxRequeue is how soon helm-controller looks again at a HelmRelease whose dependencies are not Ready yet
// (its default of 30s would dominate an install of five chained releases).
const fluxRequeue = "2s"

// notReconciled is the message of a Flux object no controller has looked at yet.
const notReconciled = "not reconciled yet"

// pollInterval is how often the harness re-reads what it waits for.
const pollInterval = 250 * time.Millisecond

// FluxControllers are Flux's source-controller and helm-controller running as local processes against the
// control plane: source-controller fetches charts (from the harness's chart repository; every other address meets
// the refusing proxy) and serves them as artifacts on a loopback port, helm-controller installs the HelmReleases.
type FluxControllers struct {
	Source, Helm *Process
}

// StartFlux starts source-controller and helm-controller from assetsDir with kubeconfig, logs and artifact storage
// in workDir, and proxy's environment. Metrics and health listeners and leader election are off. On error nothing
// is left running; the error names the binary and the fix.
func StartFlux(assetsDir, kubeconfig, workDir string, proxy *Proxy) (*FluxControllers, error) {
	return startFlux(assetsDir, kubeconfig, workDir, workDir, proxy)
}

// startFlux is StartFlux with the artifact storage in workDir and the logs in logDir.
func startFlux(assetsDir, kubeconfig, workDir, logDir string, proxy *Proxy) (*FluxControllers, error) {
	for _, b := range []string{SourceController, HelmController} {
		if _, err := os.Stat(filepath.Join(assetsDir, b)); err != nil {
			return nil, fmt.Errorf("flux %s: %w; build it with `make tools`", b, err)
		}
	}
	storage := filepath.Join(workDir, "flux-artifacts")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return nil, fmt.Errorf("create artifact storage: %w", err)
	}
	addr, err := proc.LoopbackAddr()
	if err != nil {
		return nil, err
	}
	common := []string{"--metrics-addr=0", "--health-addr=0", "--enable-leader-election=false", "--log-level=info"}
	env := append([]string{"RUNTIME_NAMESPACE=" + KCMNamespace}, proxy.Env()...)
	src, err := StartProcess(SourceController, filepath.Join(assetsDir, SourceController), kubeconfig,
		append(common, "--storage-path="+storage, "--storage-addr="+addr, "--storage-adv-addr="+addr,
			"--requeue-dependency="+fluxRequeue), env, filepath.Join(logDir, SourceController+".log"))
	if err != nil {
		return nil, err
	}
	helm, err := StartProcess(HelmController, filepath.Join(assetsDir, HelmController), kubeconfig,
		append(common, "--requeue-dependency="+fluxRequeue, "--graceful-shutdown-timeout=5s"), env,
		filepath.Join(logDir, HelmController+".log"))
	if err != nil {
		return nil, errors.Join(err, src.Stop())
	}
	return &FluxControllers{Source: src, Helm: helm}, nil
}

// Stop ends helm-controller, then source-controller, at once (Process.Kill): what they hold lives in the control
// plane and the artifact folder, both thrown away with them, and a graceful stop is not clean while a Helm action is
// in flight (helm-controller exits with status 1 when its --graceful-shutdown-timeout passes during an install that
// waits). It returns an error for each controller that had ended on its own before.
func (f *FluxControllers) Stop() error { return errors.Join(f.Helm.Kill(), f.Source.Kill()) }

// exited returns an error naming the first controller that has ended on its own, nil while both run.
func (f *FluxControllers) exited() error {
	for _, p := range []*Process{f.Source, f.Helm} {
		if err, ok := p.Exited(); ok {
			return fmt.Errorf("%s ended: %w; last lines of its log:\n%s", p.Name, err, tail(p.LogPath, 15))
		}
	}
	return nil
}

// FluxRelease is the state of one HelmRelease as Flux reports it.
type FluxRelease struct {
	flux.Release
	// Local is true when the chart comes from the harness's chart repository (a KOF chart).
	Local bool
	// Ready is the HelmRelease's Ready condition for its current generation, and for a release of one chart
	// version, that version installed (status.history); Reason and Message are the condition's (for a third-party
	// release whose chart cannot be fetched, the HelmChart's message is added).
	Ready           bool
	Reason, Message string
	// Revision is the Helm release revision Flux last installed (status.history), 0 when none.
	Revision int
}

// String formats the release as `namespace/name (chart version): Ready|Reason: message`.
func (r FluxRelease) String() string {
	state := "Ready"
	if !r.Ready {
		state = "not Ready"
		if r.Reason != "" {
			state += " (" + r.Reason + ")"
		}
	}
	return fmt.Sprintf("HelmRelease %s (chart %s %s): %s: %s", r.HelmRelease, r.Chart, r.Version, state, r.Message)
}

// ReadFluxReleases reads every HelmRelease of the control plane but KCM's components (kcmComponentRelease) through
// chartlib/flux (the reader the offline preview uses), with its Ready state and revision, in install order.
// repoURL marks the local charts. Errors: a list or read failure, or a HelmRelease flux.Read rejects.
func ReadFluxReleases(ctx context.Context, c client.Client, repoURL string) ([]FluxRelease, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(helmReleaseAPIVersion)
	list.SetKind(flux.KindHelmRelease + "List")
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list HelmReleases: %w", err)
	}
	var findErr error // a read that failed for another reason than NotFound: the answer would be wrong
	find := func(kind, ns, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(schema.FromAPIVersionAndKind(sourceAPIVersion, kind))
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o); err != nil {
			if !apierrors.IsNotFound(err) && findErr == nil {
				findErr = fmt.Errorf("get %s %s/%s: %w", kind, ns, name, err)
			}
			return nil
		}
		return o
	}
	var out []FluxRelease
	for i := range list.Items {
		hr := &list.Items[i]
		if kcmComponentRelease(hr) {
			continue
		}
		rel, err := flux.Read(hr, find)
		if findErr != nil {
			return nil, findErr
		}
		if err != nil {
			return nil, err
		}
		fr := FluxRelease{Release: rel, Local: rel.Repository == repoURL}
		fr.Ready, fr.Reason, fr.Message = readyOf(hr)
		installed := ""
		if history, _, _ := unstructured.NestedSlice(hr.Object, "status", "history"); len(history) > 0 {
			if h, ok := history[0].(map[string]any); ok {
				v, _, _ := unstructured.NestedInt64(h, "version")
				fr.Revision = int(v)
				installed, _, _ = unstructured.NestedString(h, "chartVersion")
			}
		}
		if fr.Ready && exactVersion(rel.Version) && strings.TrimPrefix(installed, "v") != strings.TrimPrefix(rel.Version, "v") {
			// A HelmRelease whose chart comes by spec.chartRef keeps its generation when only the HelmChart's
			// version changes (an upgrade or rollback of the umbrella): its Ready condition is still the one of
			// the chart it installed before.
			fr.Ready, fr.Reason = false, "Progressing"
			fr.Message = fmt.Sprintf("chart version %s asked for, %q installed: %s", rel.Version, installed,
				notReconciled)
		}
		if !fr.Ready && !fr.Local {
			if problem := chartProblem(hr, find); !strings.Contains(fr.Message, problem) {
				fr.Message += "; " + problem
			}
			fr.Message = fmt.Sprintf("third-party chart: needs the internet (%s); this machine's proxy refuses every "+
				"outside address: %s", fr.Repository, fr.Message)
		}
		out = append(out, fr)
	}
	if findErr != nil { // from chartProblem
		return nil, findErr
	}
	rels := make([]flux.Release, len(out))
	byKey := map[string]FluxRelease{}
	for i, r := range out {
		rels[i] = r.Release
		byKey[r.HelmRelease] = r
	}
	ordered, err := flux.Order(rels)
	if err != nil {
		return nil, err
	}
	for i, r := range ordered {
		out[i] = byKey[r.HelmRelease]
	}
	return out, nil
}

// kcmComponentRelease reports whether hr is one of the HelmReleases KCM makes for its Management's components
// (KCMBootstrap): KCM labels them k0rdent.mirantis.com/managed (KCM v1.10.0 internal/helm ReconcileHelmRelease) in
// its system namespace, where KOF's umbrella renders no HelmRelease. They are KCM's, not KOF's: the waits for KOF's
// releases leave them out.
func kcmComponentRelease(hr *unstructured.Unstructured) bool {
	return hr.GetNamespace() == KCMNamespace && hr.GetLabels()[kcmv1.KCMManagedLabelKey] == kcmv1.KCMManagedLabelValue
}

// exactVersion reports whether v names one chart version (`2.0.1`, `v5.18.0`), not a semver range Flux would
// resolve (`*`, `^1.2`, `>=1.0 <2.0`, `1.x`) or nothing.
func exactVersion(v string) bool {
	return v != "" && !strings.ContainsAny(v, " *^~<>=|,xX")
}

// readyOf returns the Ready condition of a Flux object for its current generation: a condition written for an
// older generation, or none, is not Ready ("Progressing").
func readyOf(o *unstructured.Unstructured) (bool, string, string) {
	observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	var typed []metav1.Condition
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typed = append(typed, metav1.Condition{Type: str(m, "type"), Status: metav1.ConditionStatus(str(m, "status")),
			Reason: str(m, "reason"), Message: str(m, "message")})
	}
	ready := apimeta.FindStatusCondition(typed, conditionReady)
	if ready == nil || observed != o.GetGeneration() {
		msg := notReconciled
		if ready != nil {
			msg = ready.Message
		}
		return false, "Progressing", msg
	}
	return ready.Status == metav1.ConditionTrue, ready.Reason, ready.Message
}

// chartProblem returns the HelmChart's Ready message of a HelmRelease whose chart is not ready (why a third-party
// chart cannot be fetched), "" when there is none.
func chartProblem(hr *unstructured.Unstructured, find flux.Find) string {
	ns, _, _ := unstructured.NestedString(hr.Object, "status", "helmChart")
	chartNS, name, ok := strings.Cut(ns, "/")
	if !ok {
		return ""
	}
	hc := find(flux.KindHelmChart, chartNS, name)
	if hc == nil {
		return ""
	}
	if ready, _, msg := readyOf(hc); !ready && msg != "" {
		return msg
	}
	return ""
}

// str returns the string at path of obj, "" when absent or not a string.
func str(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

// WaitFlux waits until Flux reports every HelmRelease of a KOF chart (one from kofRepo, the URL of KOF's
// HelmRepository: the session's chart repository or a release registry) Ready for its current generation and
// every other HelmRelease has been looked at (not Ready: its chart needs the internet), then returns them all in
// install order. A dependency or HelmChart that does not exist yet is pending, not an error: helm-controller may still
// create it. Errors: the timeout, naming each KOF release that is not Ready with Flux's message (or the reference
// still missing), a read that fails for another reason, or a Flux controller that ended.
func (s *Session) WaitFlux(ctx context.Context, timeout time.Duration, kofRepo string) ([]FluxRelease, error) {
	deadline := time.Now().Add(timeout)
	for {
		rels, err := ReadFluxReleases(ctx, s.ControlPlane.Client, kofRepo)
		var pending []string
		switch {
		case flux.IsMissing(err), Retryable(err): // not created yet, or the API server may answer next time
			pending = append(pending, err.Error())
		case err != nil:
			return nil, err
		case len(rels) == 0:
			pending = append(pending, "no HelmRelease exists yet")
		}
		for _, r := range rels {
			if (r.Local && !r.Ready) || (!r.Local && strings.HasSuffix(r.Message, ": "+notReconciled)) {
				pending = append(pending, r.String())
			}
		}
		if len(rels) > 0 && len(pending) == 0 {
			return rels, nil
		}
		if err := s.Flux.exited(); err != nil {
			return rels, err
		}
		if time.Now().After(deadline) {
			sort.Strings(pending)
			return rels, fmt.Errorf("Flux did not make every KOF HelmRelease Ready within %s (logs: %s, %s):\n%s",
				timeout, s.Flux.Source.LogPath, s.Flux.Helm.LogPath, strings.Join(pending, "\n"))
		}
		select {
		case <-ctx.Done():
			return rels, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// WaitFluxGone waits until no HelmRelease but KCM's components is left (helm-controller uninstalls each release before it lets its
// HelmRelease go). Errors: the timeout, naming the HelmReleases left.
func (s *Session) WaitFluxGone(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(helmReleaseAPIVersion)
		list.SetKind(flux.KindHelmRelease + "List")
		err := s.ControlPlane.Client.List(ctx, list)
		switch {
		case err != nil && !Retryable(err):
			return fmt.Errorf("list HelmReleases: %w", err)
		case err == nil:
			list.Items = slices.DeleteFunc(list.Items, func(hr unstructured.Unstructured) bool {
				return kcmComponentRelease(&hr)
			})
			if len(list.Items) == 0 {
				return nil
			}
		}
		if exitErr := s.Flux.exited(); exitErr != nil {
			return exitErr
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("HelmReleases unreadable %s after the umbrella was uninstalled: %w", timeout, err)
			}
			var left []string
			for _, hr := range list.Items {
				left = append(left, hr.GetNamespace()+"/"+hr.GetName())
			}
			return fmt.Errorf("HelmReleases %s still exist %s after the umbrella was uninstalled (log: %s)",
				strings.Join(left, ", "), timeout, s.Flux.Helm.LogPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}
