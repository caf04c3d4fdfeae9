package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kof.dev/kof/chartlib/manifest"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/charts"
)

// newRenderCommand returns `kof render` and its `chart` subcommand.
func newRenderCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render KOF charts offline",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRenderChartCommand(s))
	addRenderFleet(cmd, s)
	return cmd
}

// renderChartFlags are the flags of `kof render chart`.
type renderChartFlags struct {
	values, set, setString, apiVersions, lookup []string
	namespace, release, kubeVersion             string
	strict, validate                            bool
}

// newRenderChartCommand returns `kof render chart DIR`.
func newRenderChartCommand(s streams) *cobra.Command {
	var f renderChartFlags
	cmd := &cobra.Command{
		Use:   "chart DIR",
		Short: "Render one chart directory like `helm template` and print its objects as YAML",
		Long: "Render one chart directory through the Helm SDK (values files, --set, values.schema.json, pinned " +
			"capabilities) and print the objects in install order. --lookup answers the templates' `lookup` from " +
			"the objects of YAML files; --validate checks every object against its API schema and KOF's rules and " +
			"prints the findings on stderr (exit code 1 when there are any).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return renderChart(cmd, s, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.values, "values", "f", nil, "values file (repeatable; later files win)")
	fl.StringArrayVar(&f.set, "set", nil, "set a value: key.path=value (repeatable)")
	fl.StringArrayVar(&f.setString, "set-string", nil, "set a string value: key.path=value (repeatable)")
	fl.StringVarP(&f.namespace, "namespace", "n", render.DefaultNamespace, "release namespace")
	fl.StringVar(&f.release, "release", "", "release name (default: the chart name)")
	fl.StringVar(&f.kubeVersion, "kube-version", render.DefaultKubeVersion, "Kubernetes version of .Capabilities")
	fl.StringArrayVar(&f.apiVersions, "api-versions", nil, "extra .Capabilities.APIVersions entry (repeatable)")
	fl.StringArrayVar(&f.lookup, "lookup", nil, "YAML file of objects the `lookup` function sees (repeatable)")
	fl.BoolVar(&f.strict, "strict", false, "fail on a template reading a missing value key")
	fl.BoolVar(&f.validate, "validate", false, "check the rendered objects against their API schemas")
	return cmd
}

// renderChart renders dir with f, prints the YAML and, with --validate, the findings.
func renderChart(cmd *cobra.Command, s streams, dir string, f renderChartFlags) error {
	fixtures, err := readObjects("lookup", f.lookup)
	if err != nil {
		return failed(err)
	}
	if _, serr := os.Stat(dir); serr != nil {
		return failed(fmt.Errorf("chart folder %s: %w; give the folder of a chart, e.g. charts/kof-storage in a "+
			"checkout (charts built into kof: %s)", dir, serr, strings.Join(embeddedCharts(), ", ")))
	}
	set, err := render.Chart(cmd.Context(), render.Options{
		ChartDir: dir, ValuesFiles: f.values, Set: f.set, SetString: f.setString,
		ReleaseName: f.release, Namespace: f.namespace, KubeVersion: f.kubeVersion, APIVersions: f.apiVersions,
		Lookup: fixtures, Strict: f.strict,
	})
	if err != nil {
		return failed(withValuesFindings(err, filepath.Dir(dir), true, filepath.Base(dir), f.values))
	}
	data, err := set.YAML()
	if err != nil {
		return failed(err)
	}
	if _, err := s.out.Write(data); err != nil {
		return failed(err)
	}
	if !f.validate {
		return nil
	}
	findings, err := validate.Objects(set)
	if err != nil {
		return failed(err)
	}
	for _, fd := range findings {
		fmt.Fprintln(s.err, fd)
	}
	if len(findings) > 0 {
		return findingsError{n: len(findings)}
	}
	return nil
}

// readObjects parses the objects of the YAML files given with --flag (documents separated by `---`); a file that
// cannot be read is an error naming the flag and the file.
func readObjects(flag string, files []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %w", flag, file, err)
		}
		objs, err := manifest.ParseDocuments(file, data)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			out = append(out, o.Unstructured)
		}
	}
	return out, nil
}

// embeddedCharts returns the names of the chart folders built into kof (those with a Chart.yaml), sorted.
func embeddedCharts() []string {
	entries, err := fs.ReadDir(charts.FS(), ".")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if _, err := fs.Stat(charts.FS(), e.Name()+"/Chart.yaml"); e.IsDir() && err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}
