package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"kof.dev/kof/internal/harness"
)

// newDemoCommand returns `kof demo`: the flags of harness.Demo; the flow itself lives in internal/harness.
func newDemoCommand(s streams) *cobra.Command {
	opts := harness.DemoOptions{}
	root := "."
	scenarios := ""
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Install KOF on a local control plane and show what every cluster receives",
		Long: `demo starts kube-apiserver and etcd from bin/ on loopback, installs the CRDs, helm-installs charts/kof
with the scenario's values, lets Flux's source-controller and helm-controller (from bin/) install every KOF
HelmRelease from the repository's charts served on loopback, starts the kof-operator, applies the scenario's ClusterDeployments, waits for the operator's ConfigMaps and Secrets, renders
the fleet with those live objects into --out/<cluster>/<service>/ and prints a summary table. Everything it
started is stopped before it exits.

Exit status: 0 when the run finished, also when single clusters have errors (a malformed annotation, say): those
are listed under the summary and in --out/<cluster>/errors.txt. 1 when the run itself failed (tools or CRDs
missing, the install or the operator failed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Root = root
			opts.ScenariosDir = scenarios
			if opts.ScenariosDir == "" {
				opts.ScenariosDir = filepath.Join(root, "tests", "scenarios", "testdata")
			}
			if opts.OutDir == "" {
				opts.OutDir = filepath.Join(root, "out", opts.Scenario)
			}
			opts.Out = s.out
			// The control plane helpers log through controller-runtime; the demo prints its own progress lines.
			ctrllog.SetLogger(logr.Discard())
			res, err := harness.Demo(cmd.Context(), opts)
			if err != nil {
				return failed(err)
			}
			status := "every cluster rendered"
			if res.Failed() {
				status = "some clusters have errors (listed above)"
			}
			fmt.Fprintf(s.out, "demo of %s finished in %s: %s\n", opts.Scenario,
				res.Elapsed.Round(100*time.Millisecond), status)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Scenario, "scenario", "01-regional-child", "scenario folder name under --scenarios")
	f.StringVar(&scenarios, "scenarios", "", "folder of scenarios (default <root>/tests/scenarios/testdata)")
	f.StringVar(&opts.OutDir, "out", "", "output folder (default <root>/out/<scenario>)")
	f.StringVar(&root, "root", ".", "repository root (charts/, operator/, bin/)")
	f.DurationVar(&opts.OperatorWait, "operator-wait", harness.DefaultOperatorWait,
		"how long to wait for the kof-operator's objects")
	return cmd
}
