// Command kof is the KOF developer and operator CLI: render a chart offline, check values and name helpers,
// generate or verify values schemas, build KOF's images and publish a release. Flags and output only; the logic
// lives in chartlib and release.
//
// Exit codes: 0 clean, 1 findings (printed one per line with their path) or a failed operation, 2 usage error;
// `kof diff` has its own: 0 no change, 1 changes, 2 changes that hurt or no diff.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes of every kof command.
const (
	exitClean    = 0
	exitFindings = 1
	exitUsage    = 2
)

// streams are the outputs commands write to.
type streams struct {
	out, err io.Writer
}

// findingsError reports that a command printed findings; it maps to exit code 1.
type findingsError struct {
	n int
	// severity, when set, says which findings n counts ("error": kof doctor fails on its errors only).
	severity string
}

func (e findingsError) Error() string {
	if e.severity != "" {
		return fmt.Sprintf("%d %s finding(s)", e.n, e.severity)
	}
	return fmt.Sprintf("%d finding(s)", e.n)
}

// opError wraps an operational failure of a command (exit code 1), as opposed to a usage error (exit code 2).
type opError struct{ err error }

func (e opError) Error() string { return e.err.Error() }
func (e opError) Unwrap() error { return e.err }

// exitError ends a command with its own exit code (`kof diff`: 1 changes, 2 changes that hurt); err, when set, is
// printed first.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// failed marks err as an operational failure (exit code 1); nil stays nil.
func failed(err error) error {
	if err == nil {
		return nil
	}
	return opError{err}
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], streams{out: os.Stdout, err: os.Stderr}))
}

// run executes the CLI with args and returns the exit code.
func run(ctx context.Context, args []string, s streams) int {
	root := newRoot(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var fe findingsError
	var oe opError
	var ee exitError
	switch {
	case err == nil:
		return exitClean
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(s.err, "kof: %v\n", ee.err)
		}
		return ee.code
	case errors.As(err, &fe):
		fmt.Fprintf(s.err, "kof: %s\n", fe)
		return exitFindings
	case errors.As(err, &oe):
		fmt.Fprintf(s.err, "kof: %v\n", oe.err)
		return exitFindings
	default:
		fmt.Fprintf(s.err, "kof: %v\nRun 'kof --help' for usage.\n", err)
		return exitUsage
	}
}

// newRoot returns the root command with every subcommand.
func newRoot(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "kof",
		Short:         "KOF's charts offline (render, diff, check, schema), live diagnosis (doctor, ui), audit, images and release",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.AddCommand(newRenderCommand(s), newCheckCommand(s), newSchemaCommand(s), newDashboardsCommand(s),
		newBundleCommand(s), newDemoCommand(s), newCollectorCommand(s), newAuditCommand(s), newImagesCommand(s),
		newReleaseCommand(s), newDoctorCommand(s), newUICommand(s), newSupportBundleCommand(s), newDiffCommand(s))
	return root
}
