package support

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/yaml"

	"kof.dev/kof/doctor/diagnose"
)

// readyCondition is the condition type Flux and KCM summarise an object's state with (fluxcd/pkg/apis/meta).
const readyCondition = "Ready"

// Versions is the content of versions.yaml: which chart versions the prediction rendered, which ones the
// umbrella's HelmReleases run, and which ServiceTemplate every MultiClusterService service uses.
type Versions struct {
	// Prediction is where the prediction's charts came from (diagnose.PredictionInfo.Charts) and their versions.
	Prediction string         `json:"prediction"`
	Charts     []ChartVersion `json:"charts"`
	// Releases are the umbrella's HelmReleases.
	Releases []ReleaseVersion `json:"releases"`
	// Services are the MultiClusterServices' services: `<mcs>/<service>` → ServiceTemplate.
	Services map[string]string `json:"services"`
}

// ChartVersion is one chart's Chart.yaml.
type ChartVersion struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion,omitempty"`
}

// ReleaseVersion is one HelmRelease: the chart and version it asks for, the revision helm-controller last
// attempted and the chart version of its latest Helm release, and its Ready condition.
type ReleaseVersion struct {
	Name          string `json:"name"`
	Chart         string `json:"chart"`
	Version       string `json:"version,omitempty"`
	LastAttempted string `json:"lastAttemptedRevision,omitempty"`
	Installed     string `json:"installedChartVersion,omitempty"`
	Ready         string `json:"ready,omitempty"`
}

// versions adds versions.yaml.
func (b *builder) versions(s *diagnose.Snapshot, opts diagnose.PredictOptions) error {
	v := Versions{Prediction: diagnose.EmbeddedCharts, Services: map[string]string{}}
	fsys := opts.Charts
	if opts.ChartsDir != "" {
		v.Prediction, fsys = "the charts in "+opts.ChartsDir, os.DirFS(opts.ChartsDir)
	}
	if fsys != nil {
		charts, err := chartVersions(fsys)
		if err != nil {
			return err
		}
		v.Charts = charts
	}
	for _, hr := range s.HelmReleases {
		r := ReleaseVersion{Name: hr.Namespace + "/" + hr.Name, LastAttempted: hr.Status.LastAttemptedRevision}
		if hr.Spec.Chart != nil {
			r.Chart, r.Version = hr.Spec.Chart.Spec.Chart, hr.Spec.Chart.Spec.Version
		}
		if latest := hr.Status.History.Latest(); latest != nil {
			r.Installed = latest.ChartVersion
		}
		if c := apimeta.FindStatusCondition(hr.Status.Conditions, readyCondition); c != nil {
			r.Ready = string(c.Status) + " " + c.Reason
		}
		v.Releases = append(v.Releases, r)
	}
	for _, m := range s.MCSs {
		for _, svc := range m.Spec.ServiceSpec.Services {
			v.Services[m.Name+"/"+svc.Name] = svc.Template
		}
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("versions: %w", err)
	}
	b.add("versions.yaml", "chart versions: the prediction's charts, the umbrella's HelmReleases, the "+
		"MultiClusterServices' ServiceTemplates", len(v.Charts)+len(v.Releases), data)
	return nil
}

// chartVersions reads `<chart>/Chart.yaml` of every chart folder of fsys, sorted by name.
func chartVersions(fsys fs.FS) ([]ChartVersion, error) {
	files, err := fs.Glob(fsys, path.Join("*", "Chart.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list charts: %w", err)
	}
	var out []ChartVersion
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		var c ChartVersion
		if err := yaml.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
