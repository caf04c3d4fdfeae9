// Package diff compares two renders of the same KOF fleet: what every cluster gets from the old charts and values
// and what it gets from the new ones (`kof diff`, docs/upgrade.md).
//
// Run renders both sides with chartlib/fleet (the `kof render` pipeline, without validation) from the same
// ClusterDeployments; each side's charts come from a folder, a file system such as the charts built into kof, or an
// OCI chart repository at a release's version (Source), with its own umbrella values, or the umbrella's Flux
// objects read from a live management cluster. Fleets then pairs the clusters, their releases (by namespace and
// name) and their objects (by group, kind, namespace and name), the CRDs of each local chart's `crds/` folder
// included, and reports each object added, removed, changed (its field-level differences, found by go-cmp) or
// moved to another release, and each release's changed values (the layer-2 values instantiated for the cluster).
//
// Changes that hurt are classified with a Reason each: an immutable field (StatefulSet selector, claim templates
// and service name; Service clusterIP; PersistentVolumeClaim storage class), a workload selector, a CRD version no
// longer served, an object or release that moves to another owner, a credential Secret or VMUser that disappears,
// a storage volume that would be replaced, and a problem the new render has that the old did not. ExitCode maps the
// report to 0 (no change), 1 (changes) and 2 (changes that hurt). Secret data is never printed: its values are
// replaced by a digest.
package diff
