// Package scenarios holds the scenario tests of KOF: real user situations (testdata/<NN-name>/, copied from the
// KOF user guide's storage modes) rendered for the whole fleet by chartlib/fleet, each compared with a golden tree
// of `kof render` output (testdata/golden/<NN-name>/) and checked by the semantic assertions of
// testdata/README.md, so that a regenerated golden cannot hide a regression.
//
// Regenerate the goldens with `go test ./tests/scenarios/ -update`.
package scenarios
