package collector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/render"
)

// CollectorsChart is the chart that renders KOF's OpenTelemetryCollectors.
const CollectorsChart = "kof-collectors"

// ChartCase is one render of the collectors chart: its defaults (ValuesFile "") or one ci/ values file.
type ChartCase struct {
	// ValuesFile is the ci/ values file, relative to the chart ("" = defaults).
	ValuesFile string
	// Objects are the rendered objects.
	Objects []*unstructured.Unstructured
}

// Name returns the case's name for messages: `kof-collectors` or `kof-collectors/ci/01-cloudwatch-values.yaml`.
func (c ChartCase) Name() string {
	if c.ValuesFile == "" {
		return CollectorsChart
	}
	return CollectorsChart + "/" + c.ValuesFile
}

// RenderChartCases renders the collectors chart under chartsDir with its defaults and with each
// `ci/*-values.yaml` file (the chart's golden cases), in file order. A render error names the case.
func RenderChartCases(ctx context.Context, chartsDir string) ([]ChartCase, error) {
	dir := filepath.Join(chartsDir, CollectorsChart)
	chrt, err := render.Load(dir)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "ci", "*-values.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", filepath.Join(dir, "ci"), err)
	}
	sort.Strings(files)
	cases := []ChartCase{{}}
	for _, f := range files {
		cases = append(cases, ChartCase{ValuesFile: filepath.ToSlash(strings.TrimPrefix(f, dir+string(os.PathSeparator)))})
	}
	for i := range cases {
		opts := render.Options{Chart: chrt, ReleaseName: CollectorsChart, Namespace: "kof"}
		if cases[i].ValuesFile != "" {
			opts.ValuesFiles = []string{filepath.Join(dir, filepath.FromSlash(cases[i].ValuesFile))}
		}
		set, err := render.Chart(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", cases[i].Name(), err)
		}
		cases[i].Objects = set.Objects()
	}
	return cases, nil
}

// ChartManifest renders the chart cases under chartsDir (RenderChartCases) and returns the builder manifest of the
// distribution their collector configs need (Used, Resolve, Manifest) at the release their images run (Release).
func ChartManifest(ctx context.Context, chartsDir string) ([]byte, error) {
	cases, err := RenderChartCases(ctx, chartsDir)
	if err != nil {
		return nil, err
	}
	var cfgs []Config
	var all []*unstructured.Unstructured
	for _, c := range cases {
		got, err := FromObjects(c.Name(), c.Objects)
		if err != nil {
			return nil, err
		}
		cfgs = append(cfgs, got...)
		all = append(all, c.Objects...)
	}
	release, err := Release(all)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CollectorsChart, err)
	}
	used, err := Used(cfgs)
	if err != nil {
		return nil, err
	}
	mods, err := Resolve(used)
	if err != nil {
		return nil, err
	}
	return Manifest(release, mods)
}
