package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"kof.dev/kof/chartlib/collector"
)

// newCollectorCommand returns `kof collector` and its subcommand `manifest`.
func newCollectorCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "collector",
		Short: "The KOF OpenTelemetry Collector distribution",
		Args:  cobra.NoArgs,
	}
	var chartsDir, out string
	manifest := &cobra.Command{
		Use:   "manifest",
		Short: "Write the OpenTelemetry Collector Builder manifest of the components the charts' collectors use",
		Long: `manifest renders kof-collectors with its defaults and every ci/ values file, collects the component
types of every OpenTelemetryCollector config, and writes the builder manifest of exactly those components at the
release of the collector image (--out, default stdout). make generate writes ci/otelcol/manifest.yaml with it;
ci/tools/otelcol.sh builds the distribution from that file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := collector.ChartManifest(cmd.Context(), chartsDir)
			if err != nil {
				return failed(err)
			}
			if out == "" {
				_, err := s.out.Write(data)
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return failed(fmt.Errorf("write %s: %w", out, err))
			}
			fmt.Fprintf(s.out, "wrote %s\n", out)
			return nil
		},
	}
	manifest.Flags().StringVar(&chartsDir, "charts", "charts", "the charts folder")
	manifest.Flags().StringVar(&out, "out", "", "output file (default stdout)")
	cmd.AddCommand(manifest)
	return cmd
}
