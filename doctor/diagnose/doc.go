// Package diagnose is the diagnosis engine behind `kof doctor`, `kof ui` and the in-cluster kof-ui (docs/ui.md):
// Read takes a read-only Snapshot of a live management cluster, Predict renders what `kof render` predicts for the
// same inputs (chartlib/fleet), and Diagnose compares the two into findings per cluster, each from the Catalogue
// (what went wrong, and what to do), with selector explanations (ExplainSelector) and the storage and rules each
// cluster has. It writes nothing to the cluster.
package diagnose
