// Package mgmt holds the golden tests of the charts that run on the management cluster: the kof umbrella,
// kof-operators, kof-mothership and kof-propagation. Every chart is rendered through chartlib/render with its
// defaults and with each `ci/NN-<scenario>-values.yaml` file; the output is compared with its golden file (stored
// by internal/golden under testdata/golden, each distinct object once) and checked by semantic assertions, so that
// a regenerated golden cannot hide a regression.
//
// Regenerate the goldens with `go test ./tests/charts/mgmt/ -update`.
package mgmt
