package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/chartlib/values"
	"kof.dev/kof/charts"
)

// renderFleetFlags are the flags of `kof render` (the fleet render).
type renderFleetFlags struct {
	values, clusters, management []string
	namespaceObject, out, mode   string
	charts, namespace, release   string
	workers                      int
	strict                       bool
}

// addRenderFleet makes the `kof render` command itself render the whole fleet:
//
//	kof render --values FILE... --clusters FILE... [--namespace-object FILE] [--out DIR] [--mode double-pass|single-pass] [--strict]
//
// Without --values and --clusters it is a usage error (exit 2) that names both flags. Exit code 1 when the render
// fails or any cluster has an error (the summary lists them), and with --strict when it printed any warning.
func addRenderFleet(cmd *cobra.Command, s streams) {
	var f renderFleetFlags
	cmd.Long = "Without a subcommand, render what every cluster of a KOF fleet receives: the umbrella chart with the " +
		"--values files (layer 1), each KOF component it installs on the management cluster, the KOF operator's " +
		"per-cluster ConfigMaps and credential Secrets (computed offline, or read from --management-objects), and " +
		"every MultiClusterService service instantiated for every matching ClusterDeployment of the --clusters files " +
		"(layer 2, Sveltos' evaluation), rendered when it is a KOF chart. Writes <out>/<cluster>/<service>/" +
		"manifest.yaml (a KOF chart's objects), values.yaml and chart.yaml (the chart reference, the only record of a " +
		"third-party service's chart) (with --out), validates every object, runs the generic checks on every cluster " +
		"(one-owner, installable, waits, upgrades, secrets) and prints a summary table, then each cluster's " +
		"problems and check findings with the object and the fix, then the warnings (`warning: ` lines: a " +
		"mistyped KOF key, a role KOF ignores). Exit code 1 on any problem, and with --strict on any warning."
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if len(f.values) == 0 && len(f.clusters) == 0 {
			return errors.New("nothing to render: give the umbrella values with -f/--values and the ClusterDeployments " +
				"with --clusters (e.g. from `kubectl get clusterdeployments,clustertemplates -A -o yaml`), or use " +
				"`kof render chart DIR` for one chart")
		}
		return renderFleet(cmd, s, f)
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.values, "values", "f", nil, "umbrella values file (repeatable; later files win)")
	fl.StringArrayVar(&f.clusters, "clusters", nil, "YAML file of ClusterDeployments, ClusterTemplates and other "+
		"management-cluster objects (repeatable)")
	fl.StringVar(&f.namespaceObject, "namespace-object", "", "YAML file of the kof Namespace as on the management cluster")
	fl.StringArrayVar(&f.management, "management-objects", nil, "YAML file of the operator-made objects read from a "+
		"live management cluster; replaces the offline computation (repeatable)")
	fl.StringVar(&f.out, "out", "", "directory to write <cluster>/<service>/ files into (none: summary only)")
	fl.StringVar(&f.mode, "mode", string(sveltos.DoublePass), "layer-2 evaluation: double-pass (Sveltos <= 1.15) or single-pass")
	fl.StringVar(&f.charts, "charts", "", "directory holding the KOF charts (default: the charts built into kof)")
	fl.StringVarP(&f.namespace, "namespace", "n", fleet.DefaultNamespace, "umbrella release namespace")
	fl.StringVar(&f.release, "release", fleet.DefaultReleaseName, "umbrella release name")
	fl.IntVar(&f.workers, "workers", 0, "clusters rendered at once (0: one per CPU)")
	fl.BoolVar(&f.strict, "strict", false, "exit 1 on warnings too (a mistyped KOF label or annotation, a cluster "+
		"role that is neither regional nor child, no ClusterDeployment in --clusters, layer-2 lint)")
}

// renderFleet runs the fleet render with f and prints the summary.
func renderFleet(cmd *cobra.Command, s streams, f renderFleetFlags) error {
	mode, err := sveltos.ParseMode(f.mode)
	if err != nil {
		return fmt.Errorf("--mode: %w", err)
	}
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	clusters, err := readObjects("clusters", f.clusters)
	if err != nil {
		return failed(err)
	}
	opts := fleet.Options{
		ChartsDir: f.charts, Charts: charts.FS(), ValuesFiles: f.values, Clusters: clusters, Mode: mode,
		ReleaseName: f.release, Namespace: f.namespace, Workers: f.workers,
	}
	if f.namespaceObject != "" {
		objs, err := readObjects("namespace-object", []string{f.namespaceObject})
		if err != nil {
			return failed(err)
		}
		if len(objs) != 1 || objs[0].GetKind() != "Namespace" {
			kinds := make([]string, 0, len(objs))
			for _, o := range objs {
				kinds = append(kinds, o.GetKind()+" "+o.GetName())
			}
			found := "nothing"
			if len(kinds) > 0 {
				found = fmt.Sprintf("%d object(s): %s", len(kinds), strings.Join(kinds, ", "))
			}
			return failed(fmt.Errorf("--namespace-object %s: want exactly one Namespace object, found %s; give the "+
				"kof Namespace as `kubectl get namespace kof -o yaml` prints it", f.namespaceObject, found))
		}
		opts.NamespaceObject = objs[0]
	}
	if len(f.management) > 0 {
		if opts.ManagementObjects, err = readObjects("management-objects", f.management); err != nil {
			return failed(err)
		}
	}
	if opts.Validator, err = validate.New(); err != nil {
		return failed(err)
	}
	result, err := fleet.Render(cmd.Context(), opts)
	if err != nil {
		return failed(withValuesFindings(err, f.charts, f.charts != "", "kof", f.values))
	}
	if f.out != "" {
		if err := fleet.Write(f.out, result); err != nil {
			return failed(err)
		}
	}
	if err := fleet.Summary(s.out, result); err != nil {
		return failed(err)
	}
	warnings := fleet.InputWarnings(clusters)
	if len(f.clusters) > 0 && len(result.Clusters) == 1 {
		warnings = append(warnings, fmt.Sprintf("--clusters %s: no ClusterDeployment (apiVersion "+
			"k0rdent.mirantis.com/v1beta1, kind ClusterDeployment) in the files, so only the management cluster is "+
			"rendered; export them with `kubectl get clusterdeployments,clustertemplates -A -o yaml`",
			strings.Join(f.clusters, ", ")))
	}
	for _, w := range warnings {
		if _, err := fmt.Fprintf(s.out, "warning: %s\n", w); err != nil {
			return failed(err)
		}
	}
	n := 0
	for _, c := range result.Clusters {
		if c.Failed() {
			n++
		}
	}
	if n > 0 {
		return failed(fmt.Errorf("%d of %d clusters failed", n, len(result.Clusters)))
	}
	return strictError(f.strict, len(warnings)+len(result.Lint))
}

// withValuesFindings returns err, a failed render of chart, followed by what `kof check values` finds in the values
// files (unknown keys with a did-you-mean suggestion, wrong types, each with its full path) when it finds anything,
// so a typo that makes the chart fail its schema is named with its fix. chartsDir holds chart; set says the user
// gave it (unset: ./charts or the charts built into kof, as checkChartsDir). err is returned unchanged when there
// are no files, the check finds nothing or cannot run.
func withValuesFindings(err error, chartsDir string, set bool, chart string, files []string) error {
	if len(files) == 0 {
		return err
	}
	dir, cleanup, cerr := checkChartsDir(chartsDir, set)
	if cerr != nil {
		return err
	}
	defer cleanup()
	findings, cerr := values.NewChecker(dir).CheckFiles(chart, files)
	if cerr != nil || len(findings) == 0 {
		return err
	}
	lines := make([]string, 0, len(findings))
	for _, f := range findings {
		lines = append(lines, f.String())
	}
	return fmt.Errorf("%w\nfix the values (kof check values):\n%s", err, strings.Join(lines, "\n"))
}

// checkWorkers returns a usage error naming --workers when n is negative (0 means one per CPU).
func checkWorkers(n int) error {
	if n < 0 {
		return fmt.Errorf("--workers %d: want 0 (one per CPU) or a positive number of clusters rendered at once", n)
	}
	return nil
}
