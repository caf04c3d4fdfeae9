package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"kof.dev/kof/doctor/support"
)

// newSupportBundleCommand returns `kof support-bundle`.
func newSupportBundleCommand(s streams) *cobra.Command {
	var f clusterFlags
	var out string
	var lines int64
	var since time.Duration
	cmd := &cobra.Command{
		Use:   "support-bundle",
		Short: "Write one archive of what support needs to analyse a KOF installation (read-only)",
		Long: `support-bundle reads the management cluster of your kubeconfig (read-only, with your rights) and writes
one gzip-compressed tar archive: the kof doctor diagnosis (JSON and text), KOF's objects (ClusterDeployments with a
KOF label or annotation, MultiClusterServices, ServiceSets, ClusterSummaries, the operator's ConfigMaps,
PromxyServerGroups, VMStorageConnections, the umbrella's HelmReleases with their status, Events), the recent logs of
the kof-operator and the exporters, the charts' versions and the kof render prediction of the same inputs.
Secrets are listed by name only and every value that looks like a credential is replaced by REDACTED.
manifest.json lists every file; what you may not read is listed there too and the bundle says it is partial.
See docs/support-bundle.md.

Exit status: 0 when the archive is written (complete or partial), 1 when it cannot be, 2 on a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lines <= 0 {
				return fmt.Errorf("--log-lines %d: want a positive number of lines", lines)
			}
			if since < 0 {
				return fmt.Errorf("--log-since %s: want a positive duration (or 0 for no limit)", since)
			}
			e, err := f.engine()
			if err != nil {
				return failed(err)
			}
			cfg, err := f.restConfig()
			if err != nil {
				return failed(err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return failed(fmt.Errorf("create client for %s: %w", cfg.Host, err))
			}
			if out == "" {
				out = "kof-support-bundle-" + time.Now().UTC().Format("20060102T150405Z") + ".tar.gz"
			}
			file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return failed(fmt.Errorf("--output %s: %w (choose another file; an existing one is never replaced)",
					out, err))
			}
			m, err := support.Write(cmd.Context(), file, support.Options{Reader: e.Reader, Clientset: cs,
				Read: e.Read, Predict: e.Predict, LogLines: lines, LogSince: since, Server: cfg.Host})
			if cerr := file.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("write %s: %w", out, cerr)
			}
			if err != nil {
				return failed(errors.Join(err, os.Remove(out)))
			}
			state := "complete"
			if !m.Complete {
				state = fmt.Sprintf("partial: %d unreadable (listed in %s)", len(m.Unreadable), support.ManifestFile)
			}
			fmt.Fprintf(s.out, "wrote %s: %d files, %d values redacted, %s\n", out, len(m.Items), m.Redactions, state)
			for _, u := range m.Unreadable {
				fmt.Fprintf(s.out, "  not read: %s: %s\n", u.What, u.Reason)
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive to write (default: kof-support-bundle-<UTC time>.tar.gz "+
		"in the current folder); never replaces an existing file")
	cmd.Flags().Int64Var(&lines, "log-lines", support.DefaultLogLines, "newest lines kept of each container's log")
	cmd.Flags().DurationVar(&since, "log-since", 0, "keep only log lines younger than this (0: no limit)")
	return cmd
}
