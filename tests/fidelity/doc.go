// Package fidelity proves the layer-2 emulator (chartlib/sveltos, through chartlib/fleet) against the programs it
// predicts: KCM's own controller manager turns KOF's MultiClusterServices and ServiceTemplates into ServiceSets and
// Sveltos ClusterProfiles, the real addon-controller deploys them to remote API servers, and the values of every
// Helm release it installs, and the objects of those releases, must equal what `kof render` predicted for that
// cluster. KCM also judges every ServiceTemplate and ServiceTemplateChain KOF's charts render (docs/sveltos.md,
// "KCM in the tests and the demo").
package fidelity
