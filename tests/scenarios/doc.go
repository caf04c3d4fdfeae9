// Package scenarios holds the scenario tests of KOF: real user situations (testdata/<NN-name>/, copied from the
// KOF user guide's storage modes) rendered for the whole fleet by chartlib/fleet, each compared with the golden tree
// of its `kof render` output and checked by the semantic assertions of testdata/README.md, so that a regenerated
// golden cannot hide a regression. The trees are stored by internal/golden under testdata/golden: one index per
// scenario (testdata/golden/<NN-name>.index) and each distinct object once (testdata/golden/objects/).
//
// Regenerate the goldens with `go test ./tests/scenarios/ -update`.
package scenarios
