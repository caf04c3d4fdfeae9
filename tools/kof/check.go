package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"kof.dev/kof/chartlib/parity"
	"kof.dev/kof/chartlib/render"
	"kof.dev/kof/chartlib/schema"
	"kof.dev/kof/chartlib/values"
	"kof.dev/kof/charts"
)

// newCheckCommand returns `kof check` with `values` and `names`.
func newCheckCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check values files and the charts' name helpers",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCheckValuesCommand(s), newCheckNamesCommand(s))
	return cmd
}

// newCheckValuesCommand returns `kof check values [-f FILE]...`.
func newCheckValuesCommand(s streams) *cobra.Command {
	var files []string
	var chartsDir, chart string
	var strict bool
	cmd := &cobra.Command{
		Use:   "values [-f FILE]... [--strict]",
		Short: "Report unknown keys (with suggestions) and wrong types in values files",
		Long: "With -f, check the merged values files against --chart (default the kof umbrella, descending into " +
			"each <component>.values) and print every unknown key with a did-you-mean suggestion and every wrong " +
			"type, one per line with its full path. Without -f, check the chart's own defaults " +
			"(<charts>/<chart>/values.yaml) the same way, and that every default under <component>.values of the " +
			"umbrella exists in that component chart with a compatible type. When keys and types are right, the " +
			"chart is rendered offline and its cross-field rules (e.g. more than one storage mode) are reported " +
			"the same way. Warnings (`warning: ` lines) are what is valid but likely not meant: a key given twice " +
			"in one file (Helm keeps the later one), values of a third-party component no schema checks. With no " +
			"finding it prints `ok: N files checked` (exit 0, also with warnings unless --strict); findings, and " +
			"warnings with --strict, exit 1.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flagDir := chartsDir
			chartsDir, cleanup, err := checkChartsDir(chartsDir, cmd.Flags().Changed("charts"))
			if err != nil {
				return failed(err)
			}
			defer cleanup()
			if known, err := schema.RequireCharts(chartsDir); err != nil {
				return failed(fmt.Errorf("--charts %s: %w; give the KOF charts folder, or leave --charts out to use "+
					"the charts built into kof", chartsDir, err))
			} else if !slices.Contains(known, chart) {
				where := "the charts built into kof"
				if chartsDir == flagDir {
					where = chartsDir
				}
				return fmt.Errorf("--chart %s: no such chart in %s; known charts: %s", chart, where, strings.Join(known, ", "))
			}
			var findings []values.Finding
			checked := files
			if len(files) == 0 {
				checked = []string{filepath.Join(chartsDir, chart, "values.yaml")}
				consistency, err := values.Consistency(chartsDir, chart, values.PassThroughAllowList())
				if err != nil {
					return failed(err)
				}
				findings = append(findings, consistency...)
			}
			own, err := values.NewChecker(chartsDir).CheckFiles(chart, checked)
			if err != nil {
				return failed(err)
			}
			findings = append(findings, own...)
			if len(findings) == 0 {
				// Keys and types are right: render the chart so that its cross-field rules (templates/_validate.tpl
				// `fail` messages, e.g. regionless / M2M / M2R set together) are reported too.
				findings = append(findings, crossFieldFindings(cmd.Context(), filepath.Join(chartsDir, chart), files)...)
			}
			warnings, err := values.NewChecker(chartsDir).Warnings(chart, checked)
			if err != nil {
				return failed(err)
			}
			for _, f := range findings {
				fmt.Fprintln(s.out, f)
			}
			for _, w := range warnings {
				fmt.Fprintf(s.out, "warning: %s\n", w)
			}
			if len(findings) > 0 {
				return findingsError{n: len(findings)}
			}
			if err := strictError(strict, len(warnings)); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "ok: %d files checked%s\n", len(checked), warningsNote(len(warnings)))
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings too (a key given twice in one file, "+
		"values of a third-party component that no schema checks)")
	cmd.Flags().StringArrayVarP(&files, "values", "f", nil, "values file to check (repeatable; merged like helm -f)")
	cmd.Flags().StringVar(&chartsDir, "charts", "charts", "directory holding the chart directories (when not given "+
		"and ./charts does not exist: the charts built into kof)")
	cmd.Flags().StringVar(&chart, "chart", "kof", "chart the values are for")
	return cmd
}

// newCheckNamesCommand returns `kof check names`.
func newCheckNamesCommand(s streams) *cobra.Command {
	var chartsDir string
	cmd := &cobra.Command{
		Use:   "names",
		Short: "Compare the charts' name helpers with operator/names for a table of inputs",
		Long: "Render every kof.names.* helper defined by a chart under --charts through the Helm engine for " +
			"short, long (253 characters), dotted, upper-case, unicode and cut-edge cluster names, and compare each " +
			"output with the Go function of operator/names. Charts without the helpers are skipped; no chart " +
			"defining any is an error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			chartsDir, cleanup, err := checkChartsDir(chartsDir, cmd.Flags().Changed("charts"))
			if err != nil {
				return failed(err)
			}
			defer cleanup()
			rep, err := parity.Check(cmd.Context(), chartsDir, parity.DefaultHelpers(), parity.DefaultCases())
			if err != nil {
				return failed(err)
			}
			for _, m := range rep.Mismatches {
				fmt.Fprintln(s.out, m)
			}
			var checked []string
			for chart, helpers := range rep.Checked {
				checked = append(checked, fmt.Sprintf("%s (%s)", filepath.Join(chartsDir, chart),
					strings.Join(helpers, ", ")))
			}
			fmt.Fprintf(s.err, "kof check names: %d comparisons, %d mismatches; charts: %s\n", rep.Comparisons,
				len(rep.Mismatches), strings.Join(sorted(checked), "; "))
			if len(rep.Mismatches) > 0 {
				return findingsError{n: len(rep.Mismatches)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&chartsDir, "charts", "charts", "directory holding the chart directories (when not given "+
		"and ./charts does not exist: the charts built into kof)")
	return cmd
}

// checkChartsDir returns the charts folder a check reads and a cleanup to call when done: dir itself when the user
// gave --charts (set) or dir exists, otherwise the charts built into kof (kof.dev/kof/charts.FS), copied into a new
// temporary folder that cleanup removes, so the checks work from any folder as `kof render` does. The error is a
// failure to create or fill the temporary folder.
func checkChartsDir(dir string, set bool) (string, func(), error) {
	if _, err := os.Stat(dir); set || err == nil {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "kof-charts-")
	if err != nil {
		return "", nil, fmt.Errorf("copy the charts built into kof: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	if err := os.CopyFS(tmp, charts.FS()); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copy the charts built into kof to %s: %w", tmp, err)
	}
	return tmp, cleanup, nil
}

// sorted returns s sorted ascending (insertion sort; lists here are short).
func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// crossFieldFindings renders the chart in chartDir with the values files (offline, chartlib/render) and returns the
// chart's own validation failures (`fail` in its templates) as findings on the chart, with Helm's template position
// removed: nil when it renders.
func crossFieldFindings(ctx context.Context, chartDir string, files []string) []values.Finding {
	_, err := render.Chart(ctx, render.Options{ChartDir: chartDir, ValuesFiles: files})
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "): "); i >= 0 && strings.Contains(msg[:i], "execution error at (") {
		msg = msg[i+3:]
	}
	chart := filepath.Base(chartDir)
	// A chart's fail message may start with its own name already ("cold-storage-exporter: sources: ..."); the
	// finding's path says it once.
	msg = strings.TrimPrefix(strings.TrimSpace(msg), chart+": ")
	return []values.Finding{{Path: chart, Message: msg}}
}

// strictError returns the error that ends a command with exit code 1 when strict is set and it printed n > 0
// warnings (`kof render --strict`, `kof check values --strict`); nil otherwise.
func strictError(strict bool, n int) error {
	if !strict || n == 0 {
		return nil
	}
	return exitError{code: exitFindings, err: fmt.Errorf("%d warning(s) and --strict: fix them (each is printed "+
		"above as `warning: ...` with its fix), or drop --strict to let warnings pass", n)}
}

// warningsNote returns ` (N warnings)` for the ok line of a check that printed n > 0 warnings, "" for none.
func warningsNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d warning(s))", n)
}
