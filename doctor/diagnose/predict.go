package diagnose

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	kcmv1 "github.com/K0rdent/kcm/api/v1beta1"
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/validate"
)

// EmbeddedCharts is PredictionInfo.Charts when the prediction renders PredictOptions.Charts.
const EmbeddedCharts = "the charts built into this binary"

// PredictOptions configures the offline render the live objects are compared with.
type PredictOptions struct {
	// ChartsDir holds the KOF charts; when empty, Charts does (such as the embedded kof.dev/kof/charts.FS()). One
	// of them is required.
	ChartsDir string
	Charts    fs.FS
	// ValuesFiles, when given, are the umbrella values the prediction renders layer 1 with; without them the
	// umbrella's live HelmRepositories, HelmCharts and HelmReleases stand for layer 1 (fleet.Options.Layer1).
	ValuesFiles []string
	// Validator checks every predicted object; nil skips validation.
	Validator *validate.Validator
}

// Predict renders with chartlib/fleet what every cluster should receive, from the live inputs of s: its
// ClusterDeployments, ClusterTemplates, rule patch ConfigMaps and umbrella Namespace, layer 1 from opts, and the
// kof-operator's outputs computed offline (the prediction the live operator objects are compared with). It returns
// the fleet, or nil and the reason in PredictionInfo.Error when the render fails as a whole.
func Predict(ctx context.Context, s *Snapshot, opts PredictOptions) (*fleet.Fleet, PredictionInfo) {
	info := PredictionInfo{Charts: EmbeddedCharts, Layer1: "the umbrella's live HelmReleases"}
	if opts.ChartsDir != "" {
		info.Charts = "the charts in " + opts.ChartsDir
	}
	if len(opts.ValuesFiles) > 0 {
		info.Layer1 = "values " + strings.Join(opts.ValuesFiles, ", ")
	}
	fo, err := FleetOptions(s, opts)
	if err != nil {
		info.Error = err.Error()
		return nil, info
	}
	f, err := fleet.Render(ctx, fo)
	if err != nil {
		info.Error = err.Error()
		return nil, info
	}
	return f, info
}

// FleetOptions turns the snapshot into the inputs of fleet.Render, as Predict renders them (and `kof diff --live`
// reads the live side): the charts and validator of opts; the ClusterDeployments, ClusterTemplates, rule patch
// ConfigMaps and umbrella Namespace of s as inputs; layer 1 from opts.ValuesFiles, else the umbrella's live
// HelmRepositories, HelmCharts and HelmReleases (fleet.Options.Layer1). Errors: no charts, an object that cannot be
// converted, or no values and no readable HelmRelease of the umbrella (the options are returned as far as they
// were built).
func FleetOptions(s *Snapshot, opts PredictOptions) (fleet.Options, error) {
	fo := fleet.Options{ChartsDir: opts.ChartsDir, Charts: opts.Charts, ValuesFiles: opts.ValuesFiles,
		ReleaseName: s.Release, Namespace: s.Namespace, Validator: opts.Validator}
	if opts.ChartsDir == "" && opts.Charts == nil {
		return fo, errors.New("no charts; give the KOF charts the cluster was installed from (--charts)")
	}
	var errs []error
	add := func(list *[]*unstructured.Unstructured, obj runtime.Object, gvk schema.GroupVersionKind) {
		u, err := toUnstructured(obj, gvk)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*list = append(*list, u)
	}
	for i := range s.Templates {
		add(&fo.Clusters, &s.Templates[i], kcmv1.GroupVersion.WithKind("ClusterTemplate"))
	}
	for i := range s.Deployments {
		add(&fo.Clusters, &s.Deployments[i], kcmv1.GroupVersion.WithKind(kcmv1.ClusterDeploymentKind))
	}
	for i := range s.ConfigMaps {
		if !isOperatorMade(&s.ConfigMaps[i]) {
			add(&fo.Clusters, &s.ConfigMaps[i], corev1.SchemeGroupVersion.WithKind(kindConfigMap))
		}
	}
	if s.NamespaceObject != nil {
		var ns []*unstructured.Unstructured
		add(&ns, s.NamespaceObject, corev1.SchemeGroupVersion.WithKind("Namespace"))
		if len(ns) == 1 {
			fo.NamespaceObject = ns[0]
		}
	}
	if len(opts.ValuesFiles) == 0 {
		if len(s.HelmReleases) == 0 {
			errs = append(errs, fmt.Errorf("no HelmRelease of the umbrella release %s/%s (Helm annotations %s, %s) "+
				"is readable; give the umbrella values with -f", s.Namespace, s.Release, helmReleaseNameAnnotation,
				helmReleaseNamespaceAnnotation))
		}
		fo.Layer1 = []*unstructured.Unstructured{}
		for i := range s.HelmRepositories {
			add(&fo.Layer1, &s.HelmRepositories[i], sourcev1.GroupVersion.WithKind(sourcev1.HelmRepositoryKind))
		}
		for i := range s.HelmCharts {
			add(&fo.Layer1, &s.HelmCharts[i], sourcev1.GroupVersion.WithKind(sourcev1.HelmChartKind))
		}
		for i := range s.HelmReleases {
			add(&fo.Layer1, &s.HelmReleases[i], helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind))
		}
	}
	return fo, errors.Join(errs...)
}
