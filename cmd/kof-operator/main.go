// Command kof-operator runs KOF's controllers on the management cluster (the program is package operator): flags
// set the manager's endpoints, leader election, workers per controller, API client limits and the garbage
// collector's target; configuration comes from the environment (operator/config).
package main

import (
	"fmt"
	"os"

	// CA roots for TLS when the image has no CA files (KOF images hold only the binary; docs/release.md).
	_ "golang.org/x/crypto/x509roots/fallback"

	"kof.dev/kof/operator"
)

func main() {
	if err := operator.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "kof-operator:", err)
		os.Exit(1)
	}
}
