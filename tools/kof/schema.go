package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"kof.dev/kof/chartlib/schema"
	"kof.dev/kof/chartlib/values"
)

// newSchemaCommand returns `kof schema generate|verify`.
func newSchemaCommand(s streams) *cobra.Command {
	var chartsDir, schemasDir string
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Generate or verify the charts' values JSON schemas",
		Long: "Values schemas (draft-07) are generated from each chart's values.yaml and its helm-docs `# --` " +
			"comments and `# @schema` markers (see chartlib/schema), written to <schemas>/<chart>.schema.json and " +
			"<charts>/<chart>/values.schema.json; values.yaml starts with a yaml-language-server modeline. Values a " +
			"chart hands to another KOF chart (chartlib/values.DefaultHandoffs, e.g. <component>.values of the " +
			"umbrella, storage of kof-child) are checked against that chart's schema, embedded under definitions.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&chartsDir, "charts", "charts", "directory holding the chart directories")
	cmd.PersistentFlags().StringVar(&schemasDir, "schemas", "schemas", "directory of the schema sources")
	sync := func(write bool) func(*cobra.Command, []string) error {
		return func(_ *cobra.Command, names []string) error {
			drift, err := schema.Sync(chartsDir, schemasDir, names, values.DefaultHandoffs(), write)
			if err != nil {
				return failed(err)
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
		Use:   "generate [CHART]...",
		Short: "Write the schemas of the named charts (default: every chart)",
		RunE:  sync(true),
	}, &cobra.Command{
		Use:   "verify [CHART]...",
		Short: "Fail (exit code 1) when a generated schema or modeline differs from what is committed",
		RunE:  sync(false),
	})
	return cmd
}
