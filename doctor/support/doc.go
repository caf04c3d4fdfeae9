// Package support writes the support bundle of `kof support-bundle` (docs/support-bundle.md): from a live
// management cluster, read-only with the caller's rights, one gzip-compressed tar archive with the `kof doctor`
// diagnosis (JSON and text), KOF's objects as the API server serves them, the kof-operator's and the exporters'
// recent logs, the charts' versions and the `kof render` prediction of the same inputs, and a manifest naming every
// item and everything that could not be read. Secrets are listed by name only, and every value that looks like a
// credential is redacted (Redactor) before it reaches the archive.
package support
