package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"kof.dev/kof/release/bundle"
)

// newBundleCommand returns `kof bundle`: builds dist/install-crds.yaml and dist/install.yaml with release/bundle.
func newBundleCommand(s streams) *cobra.Command {
	var configDir, outDir string
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Build the install bundles of the kof-operator without Helm (kustomize)",
		Long: `bundle builds operator/config/default with the kustomize API and writes install-crds.yaml (the KOF
CRDs) and install.yaml (CRDs, namespace, RBAC and the kof-operator Deployment) into --out. make generate runs it;
make verify fails when the committed files differ.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b, err := bundle.Build(configDir)
			if err != nil {
				return failed(err)
			}
			if err := bundle.Write(b, outDir); err != nil {
				return failed(err)
			}
			fmt.Fprintf(s.out, "wrote %s and %s\n", filepath.Join(outDir, bundle.CRDsFile),
				filepath.Join(outDir, bundle.InstallFile))
			return nil
		},
	}
	cmd.Flags().StringVar(&configDir, "config", "operator/config", "the operator's kustomize folder")
	cmd.Flags().StringVar(&outDir, "out", "dist", "output folder")
	return cmd
}
