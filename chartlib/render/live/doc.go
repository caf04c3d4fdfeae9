// Package live holds the tests of chartlib/render against a real API server (kube-apiserver and etcd through
// controller-runtime envtest, assets from KUBEBUILDER_ASSETS or the repository's bin/): `lookup` reading a live
// cluster through Options.RESTConfig, and the same render answered by fixtures giving the same output.
package live
