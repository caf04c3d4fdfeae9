// Package remote holds the golden tests of the charts that reach regional and child clusters: kof-regional and
// kof-child (MultiClusterServices, layer 1) and kof-storage and kof-collectors (installed on remote clusters through
// those services). Every chart is rendered through chartlib/render with its defaults and with each
// `ci/NN-<scenario>-values.yaml` file; the MultiClusterServices' values are then instantiated for cluster objects
// through the Sveltos emulator chartlib/sveltos (layer 2, double pass) and the result rendered with kof-storage or
// kof-collectors. Each golden comes with semantic assertions, so that a regenerated golden cannot hide a regression.
//
// Regenerate the goldens with `go test ./tests/charts/remote/ -update` (the flag of internal/golden).
package remote
