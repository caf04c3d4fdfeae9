package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"kof.dev/kof/chartlib/fleet"
	"kof.dev/kof/chartlib/validate"
	"kof.dev/kof/charts"
	"kof.dev/kof/doctor/diagnose"
)

// Output formats of `kof doctor`.
const (
	outputTable = "table"
	outputJSON  = "json"
)

// clusterFlags are the flags that choose the management cluster and the prediction, shared by doctor and ui.
type clusterFlags struct {
	kubeconfig, context string
	charts, namespace   string
	release             string
	values              []string
}

func (f *clusterFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&f.context, "context", "", "kubeconfig context (default: the current context)")
	fl.StringVar(&f.charts, "charts", "", "directory holding the KOF charts the prediction renders (default: the "+
		"charts built into kof)")
	fl.StringVarP(&f.namespace, "namespace", "n", fleet.DefaultNamespace, "umbrella release namespace")
	fl.StringVar(&f.release, "release", fleet.DefaultReleaseName, "umbrella release name")
	fl.StringArrayVarP(&f.values, "values", "f", nil, "umbrella values the prediction renders layer 1 with "+
		"(repeatable; default: the umbrella's live HelmReleases)")
}

// restConfig loads the kubeconfig the way kubectl does (explicit file, else $KUBECONFIG, else ~/.kube/config).
func (f *clusterFlags) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: f.context}).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		env := "unset"
		if v := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); v != "" {
			env = fmt.Sprintf("%q: no such file", v) // client-go skips the files of $KUBECONFIG that do not exist
		}
		home := clientcmd.RecommendedHomeFile + ": no such file"
		if _, serr := os.Stat(clientcmd.RecommendedHomeFile); serr == nil {
			home = clientcmd.RecommendedHomeFile + ": holds no cluster"
		}
		return nil, fmt.Errorf("no kubeconfig: none at --kubeconfig, $KUBECONFIG or ~/.kube/config; pass "+
			"--kubeconfig FILE of the management cluster (with --context NAME to pick one of its contexts) "+
			"($KUBECONFIG %s; %s)", env, home)
	}
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig (--kubeconfig, --context): %w", err)
	}
	return cfg, nil
}

// engine returns the diagnosis engine for the chosen cluster.
func (f *clusterFlags) engine() (*diagnose.Engine, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	reader, err := diagnose.NewReader(cfg)
	if err != nil {
		return nil, err
	}
	v, err := validate.New()
	if err != nil {
		return nil, fmt.Errorf("validator: %w", err)
	}
	return &diagnose.Engine{Reader: reader, Read: diagnose.ReadOptions{Namespace: f.namespace, Release: f.release},
		Predict: diagnose.PredictOptions{ChartsDir: f.charts, Charts: charts.FS(), ValuesFiles: f.values,
			Validator: v}}, nil
}

// newDoctorCommand returns `kof doctor [CLUSTER]`.
func newDoctorCommand(s streams) *cobra.Command {
	var f clusterFlags
	output := outputTable
	cmd := &cobra.Command{
		Use:   "doctor [CLUSTER]",
		Short: "Diagnose a live management cluster: why a cluster does not get a service or send data",
		Long: `doctor reads the management cluster of your kubeconfig (read-only, with your rights): every
ClusterDeployment with its KOF role, regional binding and endpoints, the MultiClusterServices that select it (and
the failing selector terms of those that do not), each service's state as KCM and Sveltos report it, the objects the
kof-operator made for it and the operator's events, and compares them with what kof render predicts for the same
inputs. It prints a table of the clusters and every finding with the object, the field and the fix; with CLUSTER
(a name or namespace/name) only that cluster and the fleet-wide findings. The findings catalogue is in docs/ui.md.

Exit status: 0 when no finding is an error, 1 when one is (or the cluster cannot be read), 2 on a usage error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != outputTable && output != outputJSON {
				return fmt.Errorf("--output %q: want %s or %s", output, outputTable, outputJSON)
			}
			e, err := f.engine()
			if err != nil {
				return failed(err)
			}
			d, err := e.Run(cmd.Context())
			if err != nil {
				return failed(err)
			}
			clusters, findings := d.Clusters, d.AllFindings()
			if len(args) == 1 {
				c := d.Cluster(args[0])
				if c == nil {
					return fmt.Errorf("cluster %q: not found or ambiguous; known: %s", args[0], clusterNames(d))
				}
				clusters, findings = []*diagnose.Cluster{c}, scoped(findings, c.Dir)
			}
			if output == outputJSON {
				err = writeDoctorJSON(s.out, d, clusters, findings)
			} else {
				err = diagnose.WriteText(s.out, clusters, findings)
			}
			if err != nil {
				return failed(err)
			}
			if n := diagnose.CountSeverity(findings, diagnose.SeverityError); n > 0 {
				// Regression: the line said "23 finding(s)" under a summary of 24 (23 errors and a warning).
				return findingsError{n: n, severity: "error"}
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", outputTable, "output format: table or json")
	return cmd
}

// clusterNames lists the diagnosis's clusters as `namespace/name`.
func clusterNames(d *diagnose.Diagnosis) string {
	var out []string
	for _, c := range d.Clusters {
		out = append(out, c.Key())
	}
	return strings.Join(out, ", ")
}

// scoped keeps the fleet-wide findings and those of cluster dir.
func scoped(fs []diagnose.Finding, dir string) []diagnose.Finding {
	var out []diagnose.Finding
	for _, f := range fs {
		if f.Cluster == "" || f.Cluster == dir {
			out = append(out, f)
		}
	}
	return out
}

// writeDoctorJSON prints the diagnosis as JSON; with one cluster chosen, only it and the findings in scope.
func writeDoctorJSON(w io.Writer, d *diagnose.Diagnosis, clusters []*diagnose.Cluster,
	findings []diagnose.Finding) error {
	out := *d
	if len(clusters) != len(d.Clusters) {
		out.Clusters = clusters
		out.Findings = nil
		for _, f := range findings {
			if f.Cluster == "" {
				out.Findings = append(out.Findings, f)
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
