package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reasons LocalFlux writes into a HelmRelease's Ready condition.
const (
	ReasonLocalInstall = "InstalledByLocalFluxStandIn"
	ReasonThirdParty   = "ThirdPartyChartSkipped"
)

// maxFluxRounds bounds how often LocalFlux re-lists HelmReleases after an install made new ones.
const maxFluxRounds = 5

// LocalFlux is a local stand-in for Flux's helm-controller, NOT Flux: it installs each HelmRelease whose chart is a
// local KOF chart (`<ChartsDir>/<chart>`) with Helm, in dependsOn order, with that HelmRelease's release name,
// target namespace and spec.values, and marks the HelmRelease Ready. Third-party charts cannot be fetched offline:
// they are skipped with a note (their dependants still install). A HelmRelease that disappears has its release
// uninstalled, as Flux's uninstall on deletion does. No intervals, retries, remediation, valuesFrom or drift
// detection. Source: fluxcd helm-controller v2 API (HelmReleaseSpec), docs/design.md ("layer 1").
type LocalFlux struct {
	// Client reads HelmReleases and HelmCharts and writes HelmRelease status.
	Client client.Client
	// Helm performs the installs.
	Helm *Helm
	// ChartsDir holds the local KOF charts.
	ChartsDir string
	// Note receives one line per decision (installed, upgraded, skipped); nil discards them.
	Note func(format string, args ...any)

	// done maps a HelmRelease (namespace/name) to what was installed for it.
	done map[string]FluxRelease
}

// FluxRelease is what LocalFlux did for one HelmRelease.
type FluxRelease struct {
	// HelmRelease is `namespace/name` of the HelmRelease.
	HelmRelease string
	// Name and Namespace of the Helm release.
	Name, Namespace string
	// Chart, Version and Repository name the chart of the release's HelmChart.
	Chart, Version, Repository string
	// Local is true when the chart was installed from ChartsDir; Revision is then the Helm release revision.
	Local    bool
	Revision int
	// Skipped says why nothing was installed ("" when installed).
	Skipped string

	generation int64
}

func (f *LocalFlux) note(format string, args ...any) {
	if f.Note != nil {
		f.Note(format, args...)
	}
}

// Reconcile installs or upgrades every HelmRelease that is new or changed since the last call, in dependsOn order,
// repeating while installs create new HelmReleases, and uninstalls the releases of HelmReleases that are gone. It
// returns the outcome of every HelmRelease present, in install order. Errors: an unreadable HelmRelease or
// HelmChart, a dependsOn cycle, or a failed Helm action (the others still run; all are returned).
func (f *LocalFlux) Reconcile(ctx context.Context) ([]FluxRelease, error) {
	if f.done == nil {
		f.done = map[string]FluxRelease{}
	}
	var out []FluxRelease
	var errs []error
	for round := 0; round < maxFluxRounds; round++ {
		hrs, err := f.list(ctx)
		if err != nil {
			return nil, err
		}
		if err := f.prune(hrs); err != nil {
			errs = append(errs, err)
		}
		ordered, err := dependencyOrder(hrs)
		if err != nil {
			return nil, err
		}
		changed := false
		out = out[:0]
		for _, hr := range ordered {
			key := hr.Namespace + "/" + hr.Name
			if prev, ok := f.done[key]; ok && prev.generation == hr.Generation {
				out = append(out, prev)
				continue
			}
			changed = true
			rel, err := f.reconcileOne(ctx, hr)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			f.done[key] = rel
			out = append(out, rel)
		}
		if !changed {
			break
		}
	}
	return out, errors.Join(errs...)
}

func (f *LocalFlux) list(ctx context.Context) ([]helmv2.HelmRelease, error) {
	var list helmv2.HelmReleaseList
	if err := f.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list HelmReleases: %w", err)
	}
	return list.Items, nil
}

// prune uninstalls the releases of HelmReleases that no longer exist.
func (f *LocalFlux) prune(present []helmv2.HelmRelease) error {
	keep := map[string]bool{}
	for _, hr := range present {
		keep[hr.Namespace+"/"+hr.Name] = true
	}
	var errs []error
	for key, rel := range f.done {
		if keep[key] {
			continue
		}
		delete(f.done, key)
		if !rel.Local {
			continue
		}
		if err := f.Helm.Uninstall(rel.Name, rel.Namespace); err != nil {
			errs = append(errs, err)
			continue
		}
		f.note("local Flux stand-in: HelmRelease %s is gone: uninstalled %s/%s", key, rel.Namespace, rel.Name)
	}
	return errors.Join(errs...)
}

func (f *LocalFlux) reconcileOne(ctx context.Context, hr helmv2.HelmRelease) (FluxRelease, error) {
	key := hr.Namespace + "/" + hr.Name
	rel := FluxRelease{HelmRelease: key, Name: hr.Spec.ReleaseName, Namespace: hr.Spec.TargetNamespace,
		generation: hr.Generation}
	if rel.Name == "" {
		rel.Name = hr.Name
	}
	if rel.Namespace == "" {
		rel.Namespace = hr.Namespace
	}
	if err := f.resolveChart(ctx, hr, &rel); err != nil {
		return rel, err
	}
	if len(hr.Spec.ValuesFrom) > 0 {
		f.note("local Flux stand-in: HelmRelease %s: valuesFrom is not supported; only spec.values are used", key)
	}
	dir := filepath.Join(f.ChartsDir, rel.Chart)
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		rel.Skipped = fmt.Sprintf("third-party chart %s %s from %s: not installed (no network)",
			rel.Chart, rel.Version, rel.Repository)
		f.note("local Flux stand-in: skip %s: %s", key, rel.Skipped)
		return rel, f.markReady(ctx, hr, ReasonThirdParty, rel.Skipped)
	}
	rel.Local = true
	installed, err := f.Helm.Install(ctx, Release{Name: rel.Name, Namespace: rel.Namespace, ChartDir: dir,
		Values: hr.GetValues()})
	if err != nil {
		return rel, fmt.Errorf("HelmRelease %s: %w", key, err)
	}
	rel.Revision = installed.Version
	verb := "installed"
	if installed.Version > 1 {
		verb = "upgraded"
	}
	f.note("local Flux stand-in: %s %s/%s from charts/%s (revision %d)", verb, rel.Namespace, rel.Name, rel.Chart,
		rel.Revision)
	return rel, f.markReady(ctx, hr, ReasonLocalInstall,
		fmt.Sprintf("Helm release %s/%s revision %d installed by the local Flux stand-in", rel.Namespace, rel.Name,
			rel.Revision))
}

// resolveChart fills rel.Chart, Version and Repository from spec.chartRef (a HelmChart) or spec.chart.
func (f *LocalFlux) resolveChart(ctx context.Context, hr helmv2.HelmRelease, rel *FluxRelease) error {
	key := hr.Namespace + "/" + hr.Name
	var spec sourcev1.HelmChartSpec
	switch {
	case hr.Spec.ChartRef != nil && hr.Spec.ChartRef.Kind == sourcev1.HelmChartKind:
		ns := hr.Spec.ChartRef.Namespace
		if ns == "" {
			ns = hr.Namespace
		}
		var hc sourcev1.HelmChart
		if err := f.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hr.Spec.ChartRef.Name}, &hc); err != nil {
			return fmt.Errorf("HelmRelease %s: chartRef HelmChart %s/%s: %w", key, ns, hr.Spec.ChartRef.Name, err)
		}
		spec = hc.Spec
		spec.SourceRef.Name = ns + "/" + spec.SourceRef.Name
	case hr.Spec.Chart != nil:
		t := hr.Spec.Chart.Spec
		spec = sourcev1.HelmChartSpec{Chart: t.Chart, Version: t.Version}
		ns := t.SourceRef.Namespace
		if ns == "" {
			ns = hr.Namespace
		}
		spec.SourceRef.Name = ns + "/" + t.SourceRef.Name
	default:
		return fmt.Errorf("HelmRelease %s: spec.chartRef (kind HelmChart) or spec.chart is required", key)
	}
	rel.Chart, rel.Version = spec.Chart, spec.Version
	rel.Repository = f.repositoryURL(ctx, spec.SourceRef.Name)
	return nil
}

// repositoryURL returns the URL of the HelmRepository `namespace/name`, or the key itself when it cannot be read.
func (f *LocalFlux) repositoryURL(ctx context.Context, key string) string {
	ns, name := filepath.Split(key)
	var repo sourcev1.HelmRepository
	if err := f.Client.Get(ctx, client.ObjectKey{Namespace: filepath.Clean(ns), Name: name}, &repo); err != nil {
		return "HelmRepository " + key
	}
	return repo.Spec.URL
}

// markReady writes the Ready condition of hr (status subresource), as helm-controller reports a finished release.
func (f *LocalFlux) markReady(ctx context.Context, hr helmv2.HelmRelease, reason, message string) error {
	patch := client.MergeFrom(hr.DeepCopy())
	hr.Status.ObservedGeneration = hr.Generation
	apimeta.SetStatusCondition(&hr.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
		Reason: reason, Message: message, ObservedGeneration: hr.Generation})
	if err := f.Client.Status().Patch(ctx, &hr, patch); err != nil {
		return fmt.Errorf("HelmRelease %s/%s: write status: %w", hr.Namespace, hr.Name, err)
	}
	return nil
}

// dependencyOrder sorts HelmReleases so that each comes after everything in its spec.dependsOn (ties by
// namespace/name). A dependency that does not exist is ignored (Flux would wait for it; the caller notes the
// missing release by its absence). It returns an error naming the releases of a dependsOn cycle.
func dependencyOrder(hrs []helmv2.HelmRelease) ([]helmv2.HelmRelease, error) {
	byKey := map[string]helmv2.HelmRelease{}
	keys := make([]string, 0, len(hrs))
	for _, hr := range hrs {
		k := hr.Namespace + "/" + hr.Name
		byKey[k] = hr
		keys = append(keys, k)
	}
	sort.Strings(keys)
	const (
		unseen = iota
		visiting
		finished
	)
	state := map[string]int{}
	var out []helmv2.HelmRelease
	var visit func(k string, path []string) error
	visit = func(k string, path []string) error {
		switch state[k] {
		case finished:
			return nil
		case visiting:
			return fmt.Errorf("HelmRelease dependsOn cycle: %v", append(path, k))
		}
		state[k] = visiting
		hr := byKey[k]
		for _, d := range hr.Spec.DependsOn {
			ns := d.Namespace
			if ns == "" {
				ns = hr.Namespace
			}
			dk := ns + "/" + d.Name
			if _, ok := byKey[dk]; !ok {
				continue
			}
			if err := visit(dk, append(path, k)); err != nil {
				return err
			}
		}
		state[k] = finished
		out = append(out, hr)
		return nil
	}
	for _, k := range keys {
		if err := visit(k, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}
