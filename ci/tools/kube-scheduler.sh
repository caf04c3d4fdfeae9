# kube-scheduler of the real node (internal/harness Node): binds the pods the controllers make to the node.
# From the same wrapper module as kube-apiserver (GROUP: one `go build` makes every missing command of the module).
VERSION="${K8S_VERSION:-1.37.2}"
GROUP="kube-$VERSION"
PKG=k8s.io/kubernetes/cmd/kube-scheduler
version_line() { "$1" --version; }
want() { echo "Kubernetes v$VERSION"; }
group_build() { kube_build "$VERSION" "$@"; }
build() { group_build "$1" "$PKG"; }
