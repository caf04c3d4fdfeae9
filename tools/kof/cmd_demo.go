package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
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
	keep := false
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Install KOF on a local control plane and show what every cluster receives",
		Long: `demo starts kube-apiserver and etcd from bin/ on loopback, installs the CRDs, helm-installs charts/kof
with the scenario's values, lets Flux's source-controller and helm-controller (from bin/) install every KOF
HelmRelease from the repository's charts served on loopback, runs KCM's controller manager (from bin/) beside
them, starts the kof-operator, applies the scenario's ClusterDeployments, waits for the operator's ConfigMaps and
Secrets and for KCM's verdict on the templates, renders the fleet with those live objects into
--out/<cluster>/<service>/ and prints a summary table with what KCM reports. The logs of the Flux controllers,
KCM and the kof-operator are written to --out/_logs/ and kept after the run. Everything it
started is stopped before it exits; with --keep it keeps running (the kubeconfig is printed) until Ctrl-C, so that
kof doctor and kof ui can read it.

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
			if keep {
				opts.Hold = func(kubeconfig string) error { return holdDemo(cmd.Context(), s, kubeconfig, selfPath()) }
			}
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
	f.BoolVar(&keep, "keep", false, "keep the control plane, Flux and the kof-operator running after the summary "+
		"until Ctrl-C (for kof doctor and kof ui)")
	return cmd
}

// holdDemo prints how to reach the demo's control plane through kubeconfig, with kof as the path of this kof binary
// (`make demo` builds it as bin/kof, which is not on PATH, so a bare `kof` would not run), and waits for Ctrl-C
// (SIGINT or SIGTERM) or the end of ctx. It returns nil; the demo stops everything afterwards.
func holdDemo(ctx context.Context, s streams, kubeconfig, kof string) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(s.out, "\nThe control plane keeps running; in another shell:\n  export KUBECONFIG=%s\n"+
		"  %s doctor         # or %s ui, kubectl get clusterdeployments -A\nCtrl-C stops it.\n", kubeconfig, kof, kof)
	<-ctx.Done()
	return nil
}

// selfPath returns the absolute path of the running kof binary, or "kof" when it cannot be found.
func selfPath() string {
	p, err := os.Executable()
	if err != nil {
		return "kof"
	}
	return p
}
