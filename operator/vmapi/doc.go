// Package vmapi holds the VictoriaMetrics operator kinds the kof-operator reads and writes (API group
// operator.victoriametrics.com), as Go types with only the fields KOF uses: VMUser (v1beta1), VLCluster and VTCluster
// (v1). Field names and JSON tags are the upstream ones (github.com/VictoriaMetrics/operator/api); fields KOF does
// not set are left out, so a server-side apply of these types owns exactly KOF's fields and the informer cache keeps
// only those.
//
// The upstream API module is not imported by the operator because its API package also imports vmalert, an AWS SDK,
// a Kafka client and gRPC: 25 MB of the operator binary's 62 MB of code, all of it mapped (resident) at start on kernels that
// map executable files in large folios. chartlib and the tests keep using the upstream types, and
// TestTypesDecodeStrictlyIntoUpstream (vmapi_test.go) round-trips a fully set object of every type here through its
// upstream type, so a field or tag that diverges from upstream fails the tests.
//
// +kubebuilder:object:generate=true
// +groupName=operator.victoriametrics.com
package vmapi
