package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"kof.dev/kof/chartlib/dashboards"
)

// newDashboardsCommand returns `kof dashboards generate|verify`.
func newDashboardsCommand(s streams) *cobra.Command {
	var dirs []string
	cmd := &cobra.Command{
		Use:   "dashboards",
		Short: "Generate or verify the JSON of KOF's Grafana dashboards in charts/kof-dashboards and charts/kof-storage",
		Long: "KOF's dashboards are Go code written with the Grafana Foundation SDK (chartlib/dashboards); " +
			"generate writes each as <dir>/<name>.json into every --dir, which charts/kof-dashboards (management " +
			"cluster) and charts/kof-storage (a regional Grafana) wrap in GrafanaDashboards.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringSliceVar(&dirs, "dir", dashboards.ChartDirs, "directories of the dashboard JSON files "+
		"(repeatable)")
	sync := func(write bool) func(*cobra.Command, []string) error {
		return func(*cobra.Command, []string) error {
			var drift []string
			for _, dir := range dirs {
				d, err := dashboards.Sync(dir, write)
				if err != nil {
					return failed(err)
				}
				drift = append(drift, d...)
			}
			for _, d := range drift {
				fmt.Fprintln(s.out, d)
			}
			if !write && len(drift) > 0 {
				return findingsError{n: len(drift)}
			}
			return nil
		}
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "generate",
		Short: "Write every dashboard's JSON file and remove files no dashboard has",
		Args:  cobra.NoArgs,
		RunE:  sync(true),
	}, &cobra.Command{
		Use:   "verify",
		Short: "Fail (exit code 1) when a dashboard's JSON file differs from the Go code",
		Args:  cobra.NoArgs,
		RunE:  sync(false),
	})
	return cmd
}
