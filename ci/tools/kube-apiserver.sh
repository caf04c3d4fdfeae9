# kube-apiserver of the envtest control plane (minor equal to client-go's). Built from KOF's own module: go.mod
# requires k8s.io/kubernetes, keeps its commands as tool lines, and points each of its staging modules (which
# k8s.io/kubernetes replaces with local paths) at the published v0.<minor>.<patch>, so its version is go.mod's
# (kube_version in ../tools.sh: one definition) and its packages shared with bin/kof, KCM and the tests (client-go,
# apiserver, etcd client, gRPC, OpenTelemetry...) compile once (GROUP; kof_module_build). Like KCM it is compiled
# against the versions KOF's module selects, which may be newer than its own go.mod's (e.g. cel-go, gRPC,
# OpenTelemetry); the tests run it, so such a version is proven by the control plane every test starts.
VERSION="$(kube_version)"
GROUP=kof-module
PKG=k8s.io/kubernetes/cmd/kube-apiserver
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kof_module_build "$@"; }
ldflags() { kube_ldflags "$(kube_version)"; }
build() { group_build "$1" "$TOOL=$PKG"; }
