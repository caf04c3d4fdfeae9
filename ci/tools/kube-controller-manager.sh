# kube-controller-manager of the real node (internal/harness Node): Deployments, ReplicaSets, Jobs, ServiceAccounts,
# the root CA ConfigMap, garbage collection.
# From the same wrapper module as kube-apiserver (GROUP: one `go build` makes every missing command of the module).
VERSION="${K8S_VERSION:-1.37.2}"
GROUP="kube-$VERSION"
PKG=k8s.io/kubernetes/cmd/kube-controller-manager
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kube_build "$VERSION" "$@"; }
build() { group_build "$1" "$PKG"; }
