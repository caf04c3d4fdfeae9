// Package layout checks the repository's map of itself: docs/AGENTS.md must have a row for every folder that holds
// files, so that a new folder cannot land without saying what it holds and which of its files are generated. It
// also checks the import rule of docs/design.md over every package `go list` reports: which top folder may import
// which (imports.go).
//
// `make verify` runs this package's tests (`go test ./tests/layout/`), as does `make test`.
package layout
