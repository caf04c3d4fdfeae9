// Package exporters holds the golden tests of the exporter charts (cold-storage-exporter, audit-logs-exporter),
// which users install by hand on a regional or management cluster. Every chart is rendered through chartlib/render
// with each `ci/NN-<scenario>-values.yaml` file; the output is compared with a golden file under testdata/golden,
// validated against the upstream API types and checked by semantic assertions, so that a regenerated golden cannot
// hide a regression. Renders with the chart defaults must fail with the message naming the required values.
//
// Regenerate the goldens with `go test ./tests/charts/exporters/ -update`.
package exporters
