package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"kof.dev/kof/chartlib/diff"
	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/sveltos"
	"kof.dev/kof/charts"
	"kof.dev/kof/doctor/diagnose"
)

// diffFlags are the flags of `kof diff`.
type diffFlags struct {
	cluster                        clusterFlags
	live                           bool
	fromCharts, fromVersion        string
	toCharts, toVersion            string
	plainHTTP                      bool
	fromValues, toValues, clusters []string
	namespaceObject, mode, output  string
	workers                        int
}

// newDiffCommand returns `kof diff`.
func newDiffCommand(s streams) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff",
		Short: "Show what every cluster of a fleet gets when the charts or values change, and the changes that hurt",
		Long: `diff renders the same fleet twice, with the old charts and values (--from-charts, --from-values) and with
the new ones (--to-charts, --to-values; -f gives both sides the same values), for the ClusterDeployments of
--clusters, as kof render does; or, with --live, reads the management cluster of your kubeconfig as kof doctor does
(its ClusterDeployments, and the umbrella's live HelmReleases as the old side's layer 1) and renders it with the new
charts and values. A chart source is a folder, empty for the charts built into kof, or an OCI chart repository of a
release (oci://REGISTRY/charts) with --from-version / --to-version.

It prints, per cluster and per release, the objects added (+), removed (-), changed (~, with each field that
changes) and moved to another release (>), the changes of each release's values (the layer-2 values instantiated
for that cluster), and flags every change that hurts with its reason: an immutable field, a workload selector, a CRD
version no longer served, an object or release that moves to another owner, a credential Secret or VMUser that is
renamed or removed, a storage volume that would be replaced, a problem only the new render has. Secret data is
shown as a digest only.

Exit status: 0 no change, 1 changes, 2 changes that hurt, or the diff could not be made (a usage error, a render
that fails as a whole); gate CI on 2.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDiff(cmd, s, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.live, "live", false, "read the management cluster of the kubeconfig as the old side (with "+
		"--kubeconfig, --context)")
	fl.StringVar(&f.cluster.kubeconfig, "kubeconfig", "", "kubeconfig file of --live (default: $KUBECONFIG, else "+
		"~/.kube/config)")
	fl.StringVar(&f.cluster.context, "context", "", "kubeconfig context of --live (default: the current context)")
	fl.StringVar(&f.fromCharts, "from-charts", "", "old charts: a folder, oci://REGISTRY/charts, or empty for the "+
		"charts built into kof")
	fl.StringVar(&f.fromVersion, "from-version", "", "release version of an oci:// --from-charts")
	fl.StringVar(&f.toCharts, "to-charts", "", "new charts: a folder, oci://REGISTRY/charts, or empty for the "+
		"charts built into kof")
	fl.StringVar(&f.toVersion, "to-version", "", "release version of an oci:// --to-charts")
	fl.BoolVar(&f.plainHTTP, "plain-http", false, "talk plain HTTP to the registries of oci:// chart sources")
	fl.StringArrayVarP(&f.cluster.values, "values", "f", nil, "umbrella values file of both sides, unless "+
		"--from-values or --to-values is given (repeatable)")
	fl.StringArrayVar(&f.fromValues, "from-values", nil, "umbrella values file of the old side (repeatable)")
	fl.StringArrayVar(&f.toValues, "to-values", nil, "umbrella values file of the new side (repeatable)")
	fl.StringArrayVar(&f.clusters, "clusters", nil, "YAML file of ClusterDeployments, ClusterTemplates and other "+
		"management-cluster objects, as for kof render (repeatable; not with --live)")
	fl.StringVar(&f.namespaceObject, "namespace-object", "", "YAML file of the kof Namespace as on the management "+
		"cluster (not with --live)")
	fl.StringVar(&f.mode, "mode", string(sveltos.DoublePass), "layer-2 evaluation: double-pass (Sveltos <= 1.15) "+
		"or single-pass")
	fl.StringVarP(&f.cluster.namespace, "namespace", "n", fleet.DefaultNamespace, "umbrella release namespace")
	fl.StringVar(&f.cluster.release, "release", fleet.DefaultReleaseName, "umbrella release name")
	fl.IntVar(&f.workers, "workers", 0, "clusters rendered at once per side (0: one per CPU)")
	fl.StringVarP(&f.output, "output", "o", outputText, "output format: text or json")
	return cmd
}

// outputText is the text format of `kof diff`.
const outputText = "text"

// runDiff renders both sides, prints the report and returns its exit code as an exitError (nil for no change).
func runDiff(cmd *cobra.Command, s streams, f diffFlags) error {
	opts, err := diffOptions(cmd, f)
	if err != nil {
		return exitError{code: diff.ExitHurts, err: err}
	}
	r, err := diff.Run(cmd.Context(), opts)
	if err != nil {
		return exitError{code: diff.ExitHurts, err: withValuesFindings(err, f.toCharts, f.toCharts != "", "kof", opts.New.ValuesFiles)}
	}
	if f.output == outputJSON {
		err = diff.WriteJSON(s.out, r)
	} else {
		err = diff.WriteText(s.out, r)
	}
	if err != nil {
		return exitError{code: diff.ExitHurts, err: err}
	}
	if code := r.ExitCode(); code != diff.ExitNoChange {
		return exitError{code: code}
	}
	return nil
}

// diffOptions checks the flags and builds the diff's inputs: both sides' charts and values, and the shared fleet
// inputs from --clusters or, with --live, from the management cluster.
func diffOptions(cmd *cobra.Command, f diffFlags) (diff.Options, error) {
	var opts diff.Options
	if f.output != outputText && f.output != outputJSON {
		return opts, fmt.Errorf("--output %q: want %s or %s", f.output, outputText, outputJSON)
	}
	mode, err := sveltos.ParseMode(f.mode)
	if err != nil {
		return opts, fmt.Errorf("--mode: %w", err)
	}
	if err := checkWorkers(f.workers); err != nil {
		return opts, err
	}
	if opts.Old.Charts, err = diff.ParseSource("--from-charts", f.fromCharts, f.fromVersion, f.plainHTTP,
		charts.FS()); err != nil {
		return opts, err
	}
	if opts.New.Charts, err = diff.ParseSource("--to-charts", f.toCharts, f.toVersion, f.plainHTTP,
		charts.FS()); err != nil {
		return opts, err
	}
	opts.Old.ValuesFiles, opts.New.ValuesFiles = f.cluster.values, f.cluster.values
	if len(f.fromValues) > 0 {
		opts.Old.ValuesFiles = f.fromValues
	}
	if len(f.toValues) > 0 {
		opts.New.ValuesFiles = f.toValues
	}
	if f.live {
		if len(f.clusters) > 0 || f.namespaceObject != "" {
			return opts, errors.New("--live reads the ClusterDeployments and the Namespace from the management " +
				"cluster; drop --clusters and --namespace-object")
		}
		if len(f.fromValues) > 0 {
			return opts, errors.New("--live renders the old side with the umbrella's live HelmReleases; drop " +
				"--from-values (give the new side's values with --to-values or -f)")
		}
		if err := liveOptions(cmd, f, &opts); err != nil {
			return opts, err
		}
	} else {
		if len(f.clusters) == 0 {
			return opts, errors.New("no fleet: give the ClusterDeployments with --clusters (e.g. from `kubectl get " +
				"clusterdeployments,clustertemplates -A -o yaml`), or read the management cluster with --live")
		}
		if opts.Fleet.Clusters, err = readObjects("clusters", f.clusters); err != nil {
			return opts, err
		}
		if f.namespaceObject != "" {
			objs, err := readObjects("namespace-object", []string{f.namespaceObject})
			if err != nil {
				return opts, err
			}
			if len(objs) != 1 || objs[0].GetKind() != "Namespace" {
				return opts, fmt.Errorf("--namespace-object %s: want exactly one Namespace object", f.namespaceObject)
			}
			opts.Fleet.NamespaceObject = objs[0]
		}
	}
	opts.Fleet.Mode, opts.Fleet.Workers = mode, f.workers
	opts.Fleet.ReleaseName, opts.Fleet.Namespace = f.cluster.release, f.cluster.namespace
	return opts, nil
}

// liveOptions reads the management cluster (read-only, as kof doctor does) into opts: its ClusterDeployments,
// ClusterTemplates, rule ConfigMaps and Namespace for both sides, and the umbrella's live Flux objects as the old
// side's layer 1 (and the new side's when it has no values of its own).
func liveOptions(cmd *cobra.Command, f diffFlags, opts *diff.Options) error {
	cfg, err := f.cluster.restConfig()
	if err != nil {
		return err
	}
	reader, err := diagnose.NewReader(cfg)
	if err != nil {
		return err
	}
	snap, err := diagnose.Read(cmd.Context(), reader, diagnose.ReadOptions{Namespace: f.cluster.namespace,
		Release: f.cluster.release})
	if err != nil {
		return err
	}
	base, err := diagnose.FleetOptions(snap, diagnose.PredictOptions{Charts: charts.FS()})
	if err != nil {
		return fmt.Errorf("read the live management cluster: %w", err)
	}
	opts.Fleet = base
	opts.Old.ValuesFiles, opts.Old.Layer1 = nil, base.Layer1
	if len(opts.New.ValuesFiles) == 0 {
		opts.New.Layer1 = base.Layer1
	}
	return nil
}
